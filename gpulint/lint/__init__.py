"""Linting: rules found (``finder``: built-in ones by scanning :mod:`gpulint.rules`,
plugins by entry point, rule folders, declarative rules) and run over one file's view
(``engine``), each project's facts gathered before linting (``gather``, with ``prepass``),
files linted in order or in workers (``runner``; a fixed file is linted again by
:func:`gpulint.fix.loop.fix_target`, which it passes the linter to).

May import: everything below it -- :mod:`gpulint.util`, :mod:`gpulint.model`,
:mod:`gpulint.loader`, :mod:`gpulint.k8s`, :mod:`gpulint.fix`, :mod:`gpulint.render`,
:mod:`gpulint.cluster`, :mod:`gpulint.suppress`, :mod:`gpulint.reporters`, the rule API
(:mod:`gpulint.rule`, :mod:`gpulint.api`), :mod:`gpulint.settings`, :mod:`gpulint.report`.
Never :mod:`gpulint.config`, the commands or the command line.
"""
