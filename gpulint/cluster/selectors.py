"""Node selectors as kube-scheduler reads them: label requirements and node-affinity terms.

``k8s.io/apimachinery/pkg/labels`` requirements (In, NotIn, Exists, DoesNotExist, Gt, Lt),
``matchFields`` on ``metadata.name``, and the terms of a required node affinity, parsed the
way ``k8s.io/component-helpers/scheduling/corev1/nodeaffinity`` does (a term that does not
parse matches nothing). Used by :mod:`gpulint.cluster.schedpod` and the filters
(:mod:`gpulint.cluster.filters`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from gpulint.cluster.model import Node


# -- label selectors ---------------------------------------------------------------------

# k8s.io/apimachinery validation: IsQualifiedName (label keys), IsValidLabelValue.
_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_NAME_RE = re.compile(_NAME)
_INT64 = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _valid_key(key: Any) -> bool:
    if not isinstance(key, str):
        return False
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _SUBDOMAIN.fullmatch(prefix)):
        return False
    return 0 < len(name) <= 63 and bool(_NAME_RE.fullmatch(name))


def _valid_value(value: Any) -> bool:
    return (
        isinstance(value, str)
        and len(value) <= 63
        and (value == "" or bool(_NAME_RE.fullmatch(value)))
    )


def _go_int(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64), or None."""
    if not _INT64.fullmatch(text):
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


class Requirement(NamedTuple):
    """A parsed label requirement (labels.Requirement)."""

    key: str
    operator: str
    values: tuple[str, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        op, present = self.operator, self.key in labels
        if op == "In":
            return present and labels[self.key] in self.values
        if op == "NotIn":
            return not present or labels[self.key] not in self.values
        if op == "Exists":
            return present
        if op == "DoesNotExist":
            return not present
        # Gt / Lt: the label must be an integer too.
        if not present:
            return False
        have = _go_int(labels[self.key])
        want = _go_int(self.values[0])
        if have is None or want is None:
            return False
        return have > want if op == "Gt" else have < want


class FieldRequirement(NamedTuple):
    """``matchFields``: ``metadata.name`` In / NotIn one value (fields.OneTerm*Selector)."""

    key: str
    equal: bool
    value: str

    def matches(self, fields: Mapping[str, str]) -> bool:
        have = fields.get(self.key, "")
        return (have == self.value) if self.equal else (have != self.value)


_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _requirement(expr: Any) -> Requirement | None:
    """labels.NewRequirement's checks; None: the term does not parse."""
    if not isinstance(expr, Mapping):
        return None
    key, op = expr.get("key"), expr.get("operator")
    raw = expr.get("values")
    values = raw if isinstance(raw, list) else ([] if raw is None else None)
    if values is None or op not in _OPERATORS or not _valid_key(key):
        return None
    if op in ("In", "NotIn") and not values:
        return None
    if op in ("Exists", "DoesNotExist") and values:
        return None
    if op in ("Gt", "Lt") and (
        len(values) != 1 or not isinstance(values[0], str) or _go_int(values[0]) is None
    ):
        return None
    if not all(_valid_value(v) for v in values):
        return None
    return Requirement(str(key), op, tuple(values))


def _field_requirement(expr: Any) -> FieldRequirement | None:
    if not isinstance(expr, Mapping):
        return None
    key, op, values = expr.get("key"), expr.get("operator"), expr.get("values")
    if op not in ("In", "NotIn") or not isinstance(values, list) or len(values) != 1:
        return None
    if not isinstance(key, str) or not isinstance(values[0], str):
        return None
    return FieldRequirement(key, op == "In", values[0])


class Term(NamedTuple):
    """One parsed nodeSelectorTerm; ``parsed`` False: it never matches (a parse error)."""

    labels: tuple[Requirement, ...]
    fields: tuple[FieldRequirement, ...]
    parsed: bool = True

    def matches(self, node: Node) -> bool:
        if not self.parsed:
            return False
        if not all(r.matches(node.labels) for r in self.labels):
            return False
        # An empty node name gives no fields, and the field selector is not consulted.
        if self.fields and node.name:
            fields = {"metadata.name": node.name}
            return all(r.matches(fields) for r in self.fields)
        return True


def parse_terms(selector: Any) -> tuple[Term, ...]:
    """A v1.NodeSelector's terms as NewLazyErrorNodeSelector keeps them (empty ones dropped)."""
    raw = selector.get("nodeSelectorTerms") if isinstance(selector, Mapping) else None
    terms: list[Term] = []
    for term in raw if isinstance(raw, list) else ():
        if not isinstance(term, Mapping):
            continue
        exprs = term.get("matchExpressions") or []
        fields = term.get("matchFields") or []
        if not isinstance(exprs, list) or not isinstance(fields, list):
            terms.append(Term((), (), parsed=False))
            continue
        if not exprs and not fields:
            continue  # nil or empty term selects no objects
        reqs = [_requirement(e) for e in exprs]
        freqs = [_field_requirement(e) for e in fields]
        if any(r is None for r in reqs) or any(r is None for r in freqs):
            terms.append(Term((), (), parsed=False))
            continue
        terms.append(Term(tuple(r for r in reqs if r), tuple(r for r in freqs if r)))
    return tuple(terms)
