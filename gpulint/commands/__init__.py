"""What each command does, without the command-line parser: ``check`` (configure, lint,
fix, report, and what it says on stderr besides its report; its options declared once in
``checkoptions``), ``inspect``, ``rules`` (the rule catalog), ``config``; what they share
(``common``: trust, configuring, loading rules; ``projects`` and ``facts``: each file's
project and the linter its facts make) and the files they write (``outfiles``).
Commands raise :class:`gpulint.errors.GpulintError`; :mod:`gpulint.cli` turns it into a
message and exit code 2.

May import: every package below the command line; never :mod:`gpulint.cli` or typer.
"""
