"""Whether a text can name an accelerator the registry knows, before it is parsed: what
GL204 (``gpulint.lint.unchecked``) and a Kustomize root that does not build
(``gpulint.render.target``) read an embedded or unparseable text for."""

from __future__ import annotations

from gpulint.k8s.devices import Registry

#: The longest text (characters) searched; a longer one is left alone.
MAX_EMBEDDED = 256 * 1024


def names_accelerator(text: str, registry: Registry) -> bool:
    """Can ``text`` hold an accelerator the registry knows (before parsing it)?"""
    if len(text) > MAX_EMBEDDED or ("limits" not in text and "requests" not in text):
        return False
    cached = _DOMAINS.get(id(registry))
    if cached is None or cached[0] is not registry:
        domains: dict[str, list[str]] = {}
        for name in (*registry.resources, *registry.legacy):
            domains.setdefault(name.rpartition("/")[0] + "/", []).append(name)
        cached = _DOMAINS[id(registry)] = (registry, domains)
    return any(
        domain in text and any(name in text for name in names)
        for domain, names in cached[1].items()
    )


#: Each registry's names by domain: a text is searched for the few domains (fast substring
#: searches: a dashboard's 200 KB of JSON), and for the names of those it holds only; the
#: registry is kept with them, so an id is never another's.
_DOMAINS: dict[int, tuple[Registry, dict[str, list[str]]]] = {}
