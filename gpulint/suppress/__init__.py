"""Why a finding does not count: ``# gpulint:`` comments (``directives``), configuration
ignores and which suppressions are stale (``findings``), ``gpulint.io/ignore`` annotations
(``annotations``), a baseline of the findings a repository already had (``baseline``).

May import: :mod:`gpulint.util`, :mod:`gpulint.model`, :mod:`gpulint.loader`,
:mod:`gpulint.k8s`, :mod:`gpulint.render`, :mod:`gpulint.reporters`.
"""
