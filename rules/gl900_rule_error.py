"""A rule raised an exception while checking an object.

## What it does
Reports a rule that raised an exception while checking an object (almost always a bug in a
plugin or a `rule-dirs` rule), instead of stopping the run.

The finding is at the object the rule was checking and names the rule, its module and where
it came from, and the exception's type and message, for example:

`GL900 error: rule ACME010 (acme_gpulint.priority_class, plugin acme-gpulint) raised
KeyError: 'priorityClassName': it did not finish checking this object (a bug in the rule;
report it to its author)`

A declarative rule that passes one of its cost bounds (more than 10,000 subschemas entered
for one object, or patterns that would scan more than the file's budget: docs/security.md)
is reported the same way, ending "(the rule costs more than gpulint allows on this input)".

Every other rule still checks the object, and every other object and file is still linted
and reported, in every output format. A rule that fails on several pod specs of one object is
reported once for that object.

The run's exit code is 2 (a tool error), whatever `--fail-on` says: the check is incomplete.
The same line is also written to standard error, and the text summary counts it as a tool
error. In SARIF the invocation is `executionSuccessful: false` and lists the failure as a tool
execution notification; in JUnit it is an `error` test case.

## Why it matters
A linter that stops at the first broken plugin reports nothing for any file -- an empty JSON
report, no SARIF file -- and one that skips the failure silently turns an unchecked object
into a passing one. Like ruff's treatment of its internal panics, the failure is a finding
you can see and the exit code says the run was not complete.

## Example
A plugin rule that reads `pod.spec["priorityClassName"]` on a pod that does not set it
raises `KeyError`.

## Use instead
Fix the rule (`pod.spec.get("priorityClassName")`), upgrade the plugin, or leave it out of the
run with `ignore:` for that rule's code while it is being fixed.

## Options
None. GL900 cannot be turned off, suppressed or given another severity: `select`, `ignore`,
`severity`, suppression comments and annotations do not apply to it, because a rule that
raised did not check the object. In a file where a rule raised, GL100 (unused suppression)
is not reported: a suppression for the failed rule may be in use.

## References
- https://github.com/gpulint/gpulint/blob/main/docs/usage.md#exit-codes
- SARIF 2.1.0, invocation.toolExecutionNotifications:
  https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html
"""

CODE = "GL900"
NAME = "rule-error"
SEVERITY = "error"
SCOPE = "input"
