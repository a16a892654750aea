"""Near misses of names: how many typing slips separate two names."""

from __future__ import annotations

from collections.abc import Iterable


def edits(a: str, b: str) -> int:
    """Optimal string alignment distance (Levenshtein plus adjacent transpositions), case
    ignored; 3 for any pair more than two characters apart in length."""
    a, b = a.lower(), b.lower()
    if abs(len(a) - len(b)) > 2:
        return 3
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                value = min(value, previous2[j - 2] + 1)
            current.append(value)
        previous2, previous = previous, current
    return previous[-1]


def one_typo_from(name: str, candidates: Iterable[str]) -> str | None:
    """The first of ``candidates`` (shortest first) that ``name`` is one slip away from: one edit
    for names of five characters or more, or the same dotted name with a leading label
    added or dropped (``nvidia.com`` for ``gpu.nvidia.com``)."""
    ordered = sorted(set(candidates) - {name}, key=lambda c: (len(c), c))
    for candidate in ordered:
        if "." in name and (candidate.endswith("." + name) or name.endswith("." + candidate)):
            return candidate
    if len(name) < 5:
        return None
    for candidate in ordered:
        if edits(name, candidate) == 1:
            return candidate
    return None


def _squash(name: str) -> str:
    import re

    return re.sub(r"[-_.\s]", "", name).lower()


def near_field(key: str, fields: Iterable[str]) -> str | None:
    """The field of ``fields`` that ``key`` was meant to be: the same letters in another case
    or with separators, a plural or singular, or a small edit of a name of five characters or
    more (``difflib``'s ratio 0.85 or more); None when there is none."""
    ordered = sorted(fields)
    squashed = _squash(key)
    for field in ordered:
        squashed_field = _squash(field)
        if squashed in (squashed_field, squashed_field + "s") or squashed + "s" == squashed_field:
            return field
    if len(key) < 5:
        return None  # short keys are close to too many things
    import difflib  # only for a key that is not a field

    close = difflib.get_close_matches(key, ordered, n=1, cutoff=0.85)
    return close[0] if close else None
