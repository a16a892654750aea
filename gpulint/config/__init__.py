"""The configuration of a run: defaults < configuration file < command line ->
:class:`gpulint.settings.Settings` (``resolve``); the file found, trusted and read
(``file``), its JSON Schema (``schema``) and its validation (``validate``).

May import: :mod:`gpulint.util`, :mod:`gpulint.model`, :mod:`gpulint.data`,
:mod:`gpulint.loader`, :mod:`gpulint.k8s`, :mod:`gpulint.render`, :mod:`gpulint.cluster`,
:mod:`gpulint.suppress`, :mod:`gpulint.settings`. Never :mod:`gpulint.lint`.
"""
