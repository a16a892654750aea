"""A rendered fix as changes of the file that writes the value (:mod:`gpulint.render.fixvalues`).

The fix a rule planned on the rendered object (``old`` -> ``new``) is compared with what the
values file, patch or resource writes: under the *base*, the highest enclosing node of the
finding's path whose rendered value is exactly the value written there (:func:`base_of`),
or, for a written document shaped as the object, the mappings the same keys lead down from
(:func:`aligned_base`), the difference becomes the repair kinds the text-edit machinery plans
(``RenameKey``, ``MoveKey``, ``DeleteKey``, ``AddEntry``, ``AppendItem``:
:func:`changes_at`); a field the object lacks is written at the values key its template
reads (:func:`added_field`, :func:`field_changes`). :class:`NoFix` says why it cannot be.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpulint.model import AddEntry, AppendItem, Change, DeleteKey, MoveKey, RenameKey
from gpulint.render.mapping import lookup

if TYPE_CHECKING:
    from gpulint.model import Path


class NoFix(Exception):
    """Why a rendered finding's fix cannot be made in its source file."""


def added_field(old: Any, new: Any, path: tuple[object, ...]) -> tuple[str, Any] | None:
    """The one key the rendered fix adds to the mapping at ``path`` (a pod spec's
    ``tolerations``), changing nothing else there, and its value."""
    here, before = lookup(old, path)
    there, after = lookup(new, path)
    if not (here and there and isinstance(before, dict) and isinstance(after, dict)):
        return None
    added = [k for k in after if k not in before]
    if len(added) != 1 or any(after.get(k) != v for k, v in before.items()):
        return None
    return str(added[0]), after[added[0]]


def field_changes(
    source: Any, source_path: Path, field: str, value: Any, at: str
) -> tuple[Change, ...] | None:
    """The field the rendered fix adds, written at the values key the finding is at: the
    items appended to that key's empty list (``tolerations: []``), or the key added under
    the mapping it is at (``trainer:``, which has no ``tolerations``). None: neither."""
    present, written = lookup(source, source_path)
    if not present:
        return None
    if source_path and source_path[-1] == field:
        if written == [] and isinstance(value, list) and value:
            return tuple(AppendItem(source_path, item) for item in value)
        if written is None:
            raise NoFix(f"{field} at {at} is null: write it as a list first ({field}: [])")
        return None
    if isinstance(written, dict) and field not in written:
        return (AddEntry(source_path, field, value),)
    return None


def base_of(
    rendered: Any, path: tuple[object, ...], source: Any, source_path: Path
) -> tuple[Path, Path] | None:
    """The deepest... rather, the highest enclosing nodes of ``path`` (rendered) and
    ``source_path`` (written) reached by the same keys from both whose values are equal: the
    rendered node is a copy of the written one. ``None`` when even the finding's own value
    differs from what is written."""
    common = 0
    while (
        common < min(len(path), len(source_path))
        and path[len(path) - 1 - common] == source_path[len(source_path) - 1 - common]
    ):
        common += 1
    # The finding's path may go deeper than the written place (a key the rule names under
    # the value): the value at the written place is what is compared.
    best: tuple[Path, Path] | None = None
    for up in range(common + 1):
        r, s = path[: len(path) - up], source_path[: len(source_path) - up]
        here, r_value = lookup(rendered, r)
        there, s_value = lookup(source, s)
        if here and there and r_value == s_value:
            best = (r, s)
        elif best is not None:
            break
    return best


def aligned_base(
    rendered: Any, path: tuple[object, ...], source: Any, source_path: Path
) -> tuple[Path, Path] | None:
    """The highest mappings above the finding's path and the written place that the same
    keys lead down from (an object in a Kustomize base and the same object rendered, which
    a transformer changed elsewhere): the fix's changes are then checked one by one. Only
    for a written document shaped as the object (paths of one length: a resource, a patch),
    never for a values file."""
    if len(path) != len(source_path):
        return None
    common = 0
    while (
        common < min(len(path), len(source_path))
        and path[len(path) - 1 - common] == source_path[len(source_path) - 1 - common]
    ):
        common += 1
    for up in range(common, -1, -1):
        r, s = path[: len(path) - up], source_path[: len(source_path) - up]
        here, r_value = lookup(rendered, r)
        there, s_value = lookup(source, s)
        if here and there and isinstance(r_value, dict) and isinstance(s_value, dict):
            return r, s
    return None


def changes_at(
    old: Any, new: Any, source: Any, base: tuple[Path, Path], at: str
) -> tuple[Change, ...]:
    """The fix (``old`` -> ``new``, the rendered document) as changes of the written
    document ``source`` under ``base`` (rendered, written): nothing may change outside it,
    and what a change removes or moves is written there as it is rendered."""
    rendered_base, source_base = base
    old_sub = lookup(old, rendered_base)[1]
    present, new_sub = lookup(new, rendered_base)
    if not present or _replaced(old, rendered_base, new_sub) != new:
        raise NoFix(f"its fix changes more than the value written at {at}")
    changes = []
    for c in diff_changes(old_sub, new_sub, rendered_base, ()):
        if isinstance(c, RenameKey | DeleteKey | MoveKey):
            here = lookup(old_sub, c.path)
            if lookup(source, (*source_base, *c.path)) != here:
                raise NoFix(f"the value written at {at} is not the rendered value")
        changes.append(_rebase(c, source_base))
    return tuple(changes)


def _replaced(data: Any, path: Path, value: Any) -> Any:
    """``data`` with the value at ``path`` replaced, copied along the path only (a loop,
    whatever the depth)."""
    chain: list[Any] = []
    node = data
    for head in path:
        if (isinstance(node, dict) and head in node) or (
            isinstance(node, list) and isinstance(head, int) and 0 <= head < len(node)
        ):
            chain.append(node)
            node = node[head]
        else:
            return data  # the path leaves the data: nothing is replaced
    out = value
    for holder, head in zip(reversed(chain), reversed(path), strict=True):
        if isinstance(holder, dict):
            out = {k: (out if k == head else v) for k, v in holder.items()}
        else:
            out = [(out if i == head else v) for i, v in enumerate(holder)]
    return out


def diff_changes(old: Any, new: Any, base: Path, at: Path) -> list[Change]:
    """``old`` -> ``new`` (the values at ``base``) as changes of paths relative to it: what
    is removed and added anywhere under it, a value that went elsewhere as a rename or move."""
    removed: list[tuple[Path, Any]] = []
    added: list[tuple[Path, Any]] = []
    _walk(old, new, at, removed, added)
    return _paired(removed, added)


def _walk(
    old: Any, new: Any, at: Path, removed: list[tuple[Path, Any]], added: list[tuple[Path, Any]]
) -> None:
    """What is removed and added from ``old`` to ``new``, depth first in the values' order,
    with one explicit stack (no recursion on the values' depth). An item of the stack is a
    pair to compare, or entries added after a list's own items were compared."""
    stack: list[tuple[Any, Any, Path] | list[tuple[Path, Any]]] = [(old, new, at)]
    while stack:
        task = stack.pop()
        if isinstance(task, list):
            added.extend(task)
            continue
        before, after, where = task
        nested = isinstance(before, (dict, list)) or isinstance(after, (dict, list))
        if not nested and before == after:  # containers are compared by the walk itself
            continue
        if isinstance(before, list) and isinstance(after, list) and len(after) >= len(before):
            tail = after[len(before) :]
            stack.append([((*where, len(before) + n), v) for n, v in enumerate(tail)])
            pairs = [(item, after[i], (*where, i)) for i, item in enumerate(before)]
            stack.extend(reversed(pairs))
            continue
        if not (isinstance(before, dict) and isinstance(after, dict)):
            raise NoFix("its fix rewrites a value in place")
        removed.extend(((*where, k), v) for k, v in before.items() if k not in after)
        added.extend(((*where, k), v) for k, v in after.items() if k not in before)
        pairs = [(before[k], after[k], (*where, k)) for k in before if k in after]
        stack.extend(reversed(pairs))


def _paired(removed: list[tuple[Path, Any]], added: list[tuple[Path, Any]]) -> list[Change]:
    """Removed and added entries as renames and moves where a value went elsewhere."""
    out: list[Change] = []
    rest = list(added)
    for path, value in removed:
        for i, (to, new_value) in enumerate(rest):
            chain: list[object] = []
            inner = new_value
            while inner != value and isinstance(inner, dict) and len(inner) == 1:
                ((k, inner),) = inner.items()
                chain.append(k)
            if inner != value:
                continue
            del rest[i]
            keys = [to[-1], *chain]
            if not chain and to[:-1] == path[:-1] and isinstance(to[-1], str):
                out.append(RenameKey(path, to[-1]))
            elif all(isinstance(k, str) for k in keys):
                mapping = (*to[:-1], *keys[:-1])
                out.append(MoveKey(path, mapping, str(keys[-1]), prune=0))
            else:
                raise NoFix("its fix moves a value in a way that cannot be written")
            break
        else:
            out.append(DeleteKey(path, prune=0))
    for to, value in rest:
        if isinstance(to[-1], int):  # items appended, in order
            out.append(AppendItem(to[:-1], value))
            continue
        out.append(AddEntry(to[:-1], to[-1], value))
    return out


def _rebase(change: Change, base: Path) -> Change:
    if isinstance(change, RenameKey | DeleteKey):
        return change._replace(path=(*base, *change.path))
    if isinstance(change, MoveKey):
        return change._replace(path=(*base, *change.path), to=(*base, *change.to))
    if isinstance(change, AddEntry):
        return change._replace(mapping=(*base, *change.mapping))
    if isinstance(change, AppendItem):
        return change._replace(sequence=(*base, *change.sequence))
    raise NoFix(f"its fix is a {type(change).__name__}")
