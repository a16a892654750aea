"""Words of a container's command line as a POSIX shell splits them: what the engines
(:mod:`gpulint.k8s.engines`) and GPU infrastructure (:mod:`gpulint.k8s.agents`) read.

May import: nothing of gpulint.
"""

from __future__ import annotations

#: Words that end a shell command (the shell splitter's punctuation, and new lines).
SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", ";;"})


def split(script: str) -> list[str]:
    """Words of a shell script, as a POSIX shell splits them (whitespace on a quote error);
    a new line that ends a command is the word ``;``."""
    import shlex  # only for a command line that is read

    script = script.replace("\\\r\n", " ").replace("\\\n", " ")
    # A new line outside quotes ends a command as ``;`` does (inside quotes it stays).
    script = script.replace("\n", "\n;")
    try:
        lexer = shlex.shlex(script, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        return list(lexer)
    except ValueError:
        return script.split()
