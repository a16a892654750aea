"""What goes wrong in a run, as one exception hierarchy, caught once by the command line.

Every error gpulint reports to its user (a bad option, a configuration it cannot use, a
rule that does not load, a baseline, inventory or output path it refuses) is a
:class:`GpulintError`. Commands and the stages below them raise it and never leave the
process themselves; :mod:`gpulint.cli.entry` catches it once, prints each line of its
message as ``gpulint: error: <line>`` (escaped: messages quote the linted tree) and exits
with :attr:`GpulintError.exit_code` (2: a usage or tool error, never "findings"). The
language server catches the same class and shows the message in the editor.

The subclasses live beside the code that raises them (``ConfigError`` in
:mod:`gpulint.config.file`, ``RuleLoadError`` in :mod:`gpulint.rule`, ...); this module
knows none of them.
"""

from __future__ import annotations


class GpulintError(Exception):
    """An error reported as ``gpulint: error: ...`` lines (one per line of ``str()``)."""

    #: The process's exit code: 2, a usage or tool error (0 and 1 are the findings').
    exit_code = 2

    def __init__(self, message: str = "", *, one_line: bool = False) -> None:
        super().__init__(message)
        #: Print the message as one line even if it holds line breaks (they are escaped).
        self.one_line = one_line

    def lines(self) -> list[str]:
        """The lines to print: split on ``\\n`` only (``str.splitlines`` would also split on
        separators inside a quoted key or value), without a last empty one."""
        message = str(self)
        if self.one_line:
            return [message]
        lines = message.split("\n")
        if len(lines) > 1 and not lines[-1]:
            lines.pop()
        return lines


class CommandError(GpulintError):
    """A command that cannot do what it was asked (an unknown rule, options that conflict)."""
