"""The built-in rule catalog: one module per rule, plus the data the rules read.

* ``devices.json`` -- the device registry (schema: ``schemas/devices.schema.json``);
* ``workloads.json`` -- where pod specs live (schema: ``schemas/workloads.schema.json``).

In the repository this is the top-level ``rules/`` folder; the wheel ships it as
``gpulint.rules``. Each module is registered in the ``gpulint.rules`` entry-point group.
"""
