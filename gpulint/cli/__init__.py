"""The ``gpulint`` command line: argv -> one command call (``app``, on typer, with the option
types of ``options``), exit codes, signals and the fast start-up path of ``gpulint check``
(``entry``, the console script).

May import: anything of gpulint; it is the top of the pipeline.
"""
