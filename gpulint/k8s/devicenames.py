"""What an unregistered accelerator resource name is, wherever it is written: the verdict
GPU010 gives a container's resource name and GPU018 a name written outside pod specs (an
OpenShift AI profile's identifier, a Kueue ClusterQueue's resources, a quota's keys).

One verdict, so that both rules suggest the same name and agree on what is certain:

- ``slip``: a likely slip for a registered name (a typo, a plural, wrong case, another
  separator, a MIG profile's ``+`` kept, a misspelt vendor domain, no domain at all): no
  node advertises it;
- ``legacy``: a name no node advertises any more (``alpha.kubernetes.io/nvidia-gpu``);
- ``unlisted``: a plausible name of a registered vendor domain that is no slip -- or close
  to a registered one only as real names are (another model number or size,
  ``huawei.com/Ascend310`` beside ``Ascend310P``; a letter put before it, ``nvidia.com/pgpu``
  beside ``nvidia.com/gpu``; a well-formed MIG profile no GPU in the registry offers): the
  registry may be behind the device plugin, so it is said as info, with the ``devices:``
  line that declares it;
- ``foreign``: close to another project's name in a domain it shares with the vendor (HAMi's
  ``nvidia.com/gpucores``): it may be a third plugin's;
- ``retired``: a name a device plugin's later releases dropped (``aws.amazon.com/neurondevice``)
  while nothing in the project says which release its nodes run (info); with the project's
  own plugin at a release without it, the name is ``legacy``; at a release with it, known;
- ``unadvertised`` / ``unconfigured``: an unlisted name of a vendor domain whose names the
  project's own device plugin configuration says in full (gpulint.cluster.deviceplugins),
  and which it does not advertise -- a near miss of one of its names, or any other.

Names of other domains get no verdict (a registry cannot know every plugin), and neither do
DRA extended resources (KEP-5004: a claim serves them).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

from gpulint.model import Related, Span

if TYPE_CHECKING:
    from gpulint.k8s.devices import Registry
    from gpulint.k8s.dra import ClaimIndex


class Verdict(NamedTuple):
    """What an unregistered accelerator name is, and what to write instead."""

    #: ``slip``, ``legacy``, ``unlisted`` or ``foreign`` (see the module's docstring).
    kind: str
    #: For ``slip`` and ``legacy``, the advice (``did you mean nvidia.com/gpu?``); for
    #: ``unlisted`` and ``foreign``, the whole message (it says nothing of where the name is).
    text: str
    #: The one real name to rename it to, if a single one fits.
    to: str | None = None
    #: ``file:line`` of the project's setting the verdict rests on ("" for none).
    said: str = ""

    def evidence(self) -> tuple[Related, ...]:
        """The project's setting the verdict rests on, as a finding's ``related`` place."""
        label, _, line = self.said.rpartition(":")
        if not line.isdigit():
            return ()
        at = Span(int(line), 1, int(line), 1)
        return (Related("evidence", label, at, "the project's device plugin"),)

    @property
    def certain(self) -> bool:
        """Whether no node can advertise the name (a slip, a legacy name, or a name the
        project's own device plugin configuration does not advertise)."""
        return self.kind in ("slip", "legacy", "unadvertised", "unconfigured")


def judge_resource_name(
    name: str, registry: Registry, claims: ClaimIndex | None = None, declared: bool = False
) -> Verdict | None:
    """The verdict on ``name``, or None when it is registered or not gpulint's business.

    ``declared``: the place says the name is an accelerator's (an accelerator profile's
    identifier), so a name that does not look like one (``intel.com/flex``) is judged too;
    a name without a domain (``cpu``) still is not, unless it looks like a GPU's (``gpu``).
    """
    if name in registry.resources:
        return None
    looks = registry.looks_like_accelerator(name) or (declared and "/" in name)
    if not looks:
        return None
    if registry.is_dra_extended(name) or (claims is not None and claims.extended_resource(name)):
        return None  # a DRA extended resource: a claim serves it (KEP-5004)
    legacy = registry.legacy.get(name)
    if legacy is not None:
        if not legacy.certain:
            return Verdict(
                "retired",
                f"{name} is no longer advertised by current {legacy.plugin} releases; use "
                f"{legacy.replacement}, or, if your nodes run an older release, declare it "
                f"(devices: [{{name: {name}}}])",
                legacy.replacement,
            )
        if legacy.deployed:
            image, _, said = legacy.deployed.partition(" at ")
            return Verdict(
                "legacy",
                f"use {legacy.replacement}: the project's {image} no longer advertises it",
                legacy.replacement,
                said,
            )
        return Verdict("legacy", f"use {legacy.replacement}. {legacy.note}", legacy.replacement)
    if not registry.is_slip(name):
        domain = name.rpartition("/")[0]
        if not domain or not registry.has_domain(domain):
            return None
        configured = registry.definitive.get(domain)
        if configured is not None:
            return _unadvertised(name, configured, registry)
        return Verdict("unlisted", _unlisted(name))
    suggestion = registry.suggest(name)
    mig = _mig_hint(name, registry)
    to = suggestion
    if mig is not None:
        hint = mig
        dotted = name.replace("+", ".")
        to = dotted if dotted in registry.resources else None
        if to is None and (suggestion is None or re.match(_MIG_WELL_FORMED, name)):
            # A well-formed profile no GPU in the registry offers: a newer GPU's, maybe.
            return Verdict("unlisted", f"{_unlisted(name)}; {mig}")
        if to is None:
            # Not a profile's shape (a size that is no number of gigabytes, an unknown
            # suffix): a slip for the registered profile it is one typo from.
            hint, to = f"did you mean {suggestion}?", suggestion
    elif suggestion is not None and suggestion.lower() == name.lower():
        hint = f"resource names are case-sensitive: write {suggestion}"
    elif suggestion is not None:
        family = _foreign_family(name, suggestion, registry)
        if family is not None:
            # Another project's name in a shared domain (HAMi's nvidia.com/gpucores for
            # vgpu-manager's nvidia.com/vgpu-cores): the name may be a third plugin's.
            return Verdict(
                "foreign",
                f"{name} is not in gpulint's device registry; it is close to {suggestion}, "
                f"a {family} name, but other device plugins advertise names under "
                f"{name.rpartition('/')[0]} too: if your nodes advertise it, add it to the "
                f"configuration (devices: [{{name: {name}}}]); else did you mean "
                f"{suggestion}?",
            )
        if _variant(name, suggestion, registry):
            # Another model or size (Ascend310 beside Ascend310P), or a prefixed name
            # (nvidia.com/pgpu beside nvidia.com/gpu): real names look like that.
            configured = registry.definitive.get(name.rpartition("/")[0])
            if configured is not None:
                return _unadvertised(name, configured, registry)
            return Verdict("unlisted", f"{_unlisted(name)}; else did you mean {suggestion}?")
        hint = f"did you mean {suggestion}?"
    else:
        hint = _domain_hint(name, registry) or (
            "check the device plugin's documentation for the advertised name"
        )
    return Verdict("slip", hint, to)


#: How close (difflib's ratio over the whole name) a name is to one the project's plugin
#: advertises to be a near miss of it (``nvidia.com/gpu-all`` for ``nvidia.com/gpu``).
NEAR = 0.8


def _unadvertised(name: str, said: str, registry: Registry) -> Verdict:
    """A name of a vendor domain whose names the project's own device plugin configuration
    says in full, and that it does not advertise: a near miss of one of its names is an
    error (``unadvertised``), any other name a warning (``unconfigured``)."""
    suggestion = registry.suggest(name, NEAR)
    if suggestion is not None:
        return Verdict("unadvertised", f"did you mean {suggestion}?", suggestion, said)
    return Verdict(
        "unconfigured",
        f"if another device plugin advertises it, declare it (devices: [{{name: {name}}}])",
        None,
        said,
    )


def _unlisted(name: str) -> str:
    """The message for a name gpulint cannot say is wrong (info)."""
    return (
        f"{name} is not in gpulint's device registry, so whether a node advertises it is "
        "not known here; if your device plugin advertises it, declare it under `devices:` in "
        f".gpulint.yaml (devices: [{{name: {name}}}]) and this goes away"
    )


#: Vendor domains whose device plugin advertises one name for every model of its accelerator,
#: so a model number added to it is a slip, not another product's name:
#: Intel Gaudi (habana.ai/gaudi for Gaudi, Gaudi 2 and Gaudi 3: Intel Gaudi docs "Intel Gaudi
#: Device Plugin for Kubernetes"), Google TPU (google.com/tpu for every TPU version: GKE docs
#: "Deploy TPU workloads"), AWS Neuron (aws.amazon.com/neuron and neuroncore for Inferentia
#: and Trainium: AWS Neuron docs "Neuron device plugin").
ONE_NAME_FOR_EVERY_MODEL = frozenset({"habana.ai", "google.com", "aws.amazon.com"})


def _variant(name: str, suggestion: str, registry: Registry) -> bool:
    """Does ``name`` differ from ``suggestion``, a registered name of the same vendor
    domain, as real names differ rather than as slips do: another model number or size
    (``huawei.com/Ascend310`` beside ``Ascend310P``, ``Ascend910B5`` beside ``Ascend910B4``),
    or a letter or two put before it (``nvidia.com/pgpu`` beside ``nvidia.com/gpu``)?"""
    domain, _, local = name.lower().rpartition("/")
    if not registry.has_domain(domain) or domain != suggestion.lower().rpartition("/")[0]:
        return False  # a misspelt vendor domain is a slip, whatever its name
    if domain in ONE_NAME_FOR_EVERY_MODEL:
        return False
    known = suggestion.lower().rpartition("/")[2]
    if re.findall(r"\d+", local) != re.findall(r"\d+", known):
        return True
    short, long_ = sorted((local, known), key=len)
    extra = len(long_) - len(short)
    if 0 < extra <= 2 and long_.endswith(short) and long_[:extra].isalpha():
        return True
    common = 0
    while common < len(short) and short[common] == long_[common]:
        common += 1
    return common > 0 and short[common - 1].isdigit() and long_[common:].isalnum()


def _foreign_family(name: str, suggestion: str, registry: Registry) -> str | None:
    """The family of ``suggestion`` when it is not that of its domain's own vendor (the
    domain's first registry name: nvidia.com/gpu's ``nvidia``) but another project's sharing
    its domain (HAMi's, vgpu-manager's), and ``name`` differs from it by more than case,
    separators or a plural ``s``; None for the vendor's own names and for sure slips."""
    entry = registry.resources.get(suggestion)
    if entry is None or _squashed(name) == _squashed(suggestion):
        return None
    domain = suggestion.rpartition("/")[0] + "/"
    owner = next((r for n, r in registry.resources.items() if n.startswith(domain)), None)
    if owner is None or owner.family == entry.family:
        return None
    return entry.family


def _squashed(name: str) -> str:
    """``nvidia.com/vgpu_Core`` -> ``vgpucore``: the local part without case, separators and
    a plural ``s``."""
    return re.sub(r"[-_.]", "", name.rpartition("/")[2].lower()).removesuffix("s")


def _domain_hint(name: str, registry: Registry) -> str | None:
    """For a misspelt vendor domain with no close local part, that vendor's resource names."""
    domain, slash, _ = name.rpartition("/")
    if not slash or registry.has_domain(domain):
        return None
    for close in registry.close_domains(domain):
        names = registry.domain_names(close)
        if names:
            shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
            return f"the {close} device plugins advertise {shown}"
    return None


# Patterns, compiled on first use (docs/architecture.md): only unknown MIG names need them.
_MIG_NAME = r"^nvidia\.com/mig-(\d+)g\."
_MIG_MEMORY = r"^(\d+)g\.(\d+)gb"
#: A MIG profile's shape: slices, memory in gigabytes, and the suffixes NVIDIA writes
#: (``.me``, ``-me``, ``+me``, ``.gfx``, ``.all``).
_MIG_WELL_FORMED = r"^nvidia\.com/mig-\d+g\.\d+gb([.+-](me|gfx|all))*$"


def _mig_hint(name: str, registry: Registry) -> str | None:
    """For an unknown MIG profile, the profiles GPUs do offer with as many compute slices."""
    match = re.match(_MIG_NAME, name)
    if match is None:
        return None
    dotted = name.replace("+", ".")
    if dotted in registry.resources:
        return f"the device plugin advertises the profile's '+' as '.': write {dotted}"
    slices = match.group(1)
    prefix = f"nvidia.com/mig-{slices}g."
    profiles = [
        r.name.removeprefix("nvidia.com/mig-")
        for r in registry.resources.values()
        if r.kind == "mig" and r.name.startswith(prefix)
    ]
    if not profiles:
        return None

    def order(profile: str) -> tuple[int, str]:
        memory = re.match(_MIG_MEMORY, profile)
        return (int(memory.group(2)) if memory else 0, profile)

    shown = ", ".join(sorted(profiles, key=order))
    return f"no GPU offers that MIG profile; the {slices}g profiles are {shown}"
