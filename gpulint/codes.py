"""The codes gpulint itself emits (not its rules' findings): YAML problems, suppression and
baseline housekeeping, rendering, and rule errors. Each has a rule module of the same code in
:mod:`gpulint.rules` holding its documentation; the code paths that emit them name these
constants, so a typo is a NameError (and a mypy error), never a finding nobody selects.
"""

from __future__ import annotations

from typing import Final

#: The YAML is not well formed (or not what the API server would accept as YAML).
SYNTAX_ERROR: Final = "YML001"
#: A mapping repeats a key.
DUPLICATE_KEY: Final = "YML002"
#: A tag the API server does not read.
UNSUPPORTED_TAG: Final = "YML003"
#: Aliases that expand to far more than the document writes.
EXCESSIVE_ALIASING: Final = "YML004"
#: A path that could not be read (or may not be: links out of the tree, devices).
UNREADABLE_FILE: Final = "YML005"
#: A suppression that silenced nothing.
UNUSED_SUPPRESSION: Final = "GL100"
#: A baseline entry that no finding matches any more.
STALE_BASELINE_ENTRY: Final = "GL101"
#: helm or kustomize failed on a chart or overlay.
RENDER_FAILED: Final = "GL200"
#: A chart or overlay linted without ``--render``.
CHART_NOT_RENDERED: Final = "GL201"
#: ``--render`` without the renderer it needs.
RENDERER_MISSING: Final = "GL202"
#: A Kustomize patch file linted only as a part of its overlay.
PATCH_NOT_RENDERED: Final = "GL203"
#: GPU content gpulint cannot place, said once instead of skipped in silence.
GPU_CONTENT_NOT_CHECKED: Final = "GL204"
#: A file that is a template (Go, Jinja, envsubst) and does not parse until rendered.
TEMPLATE_NOT_RENDERED: Final = "GL205"
#: A rule raised while checking an object.
RULE_ERROR: Final = "GL900"
#: A GPU chart's placement value that no template reads (read from the templates' text).
UNREAD_CHART_VALUE: Final = "GPU082"
