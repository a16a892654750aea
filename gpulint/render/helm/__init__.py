"""Helm charts: rendered with ``helm template``, and each finding moved to the template or
values line that wrote its value.

* ``chart``: one chart rendered, and the mapping of a finding back (``HelmRendered``);
  ``run``: helm's argv, bounds, what it would read (``inputs``) and its errors.
* ``sources``: where helm took a value or an error from besides templates and values files;
  ``tgz``: packaged subcharts opened with bounded headers; ``helmignore``, ``dependencies``,
  ``schemarefs``: what a chart folder holds, as helm reads it.
* ``templatetext``: a key path found in a template's text (not YAML yet); ``documents``: which
  part of a template of several documents a rendered one came from; ``conditions``: whether
  the ``{{ if }}`` around a document held.
* ``values``, ``valuelines``, ``setflags``: the values helm merges and the line or ``--set``
  flag that wrote one; ``markers``: one more render, with markers, for values that template
  logic carried; ``fieldreads``: a missing field on the values key its template reads;
  ``untraced``: a finding left at a template line no values line was traced to;
  ``failcalls``: a chart's ``fail`` on the values key that made it run; ``duplicatekeys``: a
  key helm's output holds twice, at the template line that writes it.

Imports nothing: each caller pays only for the modules it uses.
"""
