"""The scheduler's arithmetic for effective pod requests (docs/domain.md#effective-pod-request)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, strategies as st

from gpulint.k8s.podrequest import aggregate, pod_requests
from gpulint.k8s.workloads import PodSpec, builtin_table, objects
from gpulint.loader.stream import load_text

D = Decimal


def gpu(n: int) -> dict[str, Decimal]:
    return {"nvidia.com/gpu": D(n)}


@pytest.mark.parametrize(
    ("containers", "inits", "overhead", "want"),
    [
        # regular containers add up
        ([gpu(1), gpu(2)], [], None, 3),
        # an init container runs alone: the pod needs the larger of the two phases
        ([gpu(1)], [(gpu(2), False)], None, 2),
        ([gpu(4)], [(gpu(1), False)], None, 4),
        # init containers run one after another: the largest counts, not their sum
        ([gpu(1)], [(gpu(2), False), (gpu(3), False)], None, 3),
        # a sidecar runs beside the regular containers ...
        ([gpu(1)], [(gpu(1), True)], None, 2),
        # ... and beside the init containers declared after it, not before it
        ([gpu(1)], [(gpu(1), True), (gpu(2), False)], None, 3),
        ([gpu(1)], [(gpu(2), False), (gpu(1), True)], None, 2),
        # overhead is added last
        ([gpu(1)], [(gpu(2), False)], gpu(1), 3),
        ([], [], None, 0),
    ],
)
def test_aggregate_matches_pod_requests(
    containers: list[dict[str, Decimal]],
    inits: list[tuple[dict[str, Decimal], bool]],
    overhead: dict[str, Decimal] | None,
    want: int,
) -> None:
    assert aggregate(containers, inits, overhead).get("nvidia.com/gpu", D(0)) == want


def test_resources_are_independent() -> None:
    got = aggregate(
        [{"cpu": D(1), "nvidia.com/gpu": D(1)}],
        [({"cpu": D(4)}, False), ({"nvidia.com/gpu": D(2)}, False)],
    )
    assert got == {"cpu": D(4), "nvidia.com/gpu": D(2)}


small = st.integers(min_value=0, max_value=16).map(D)


@given(
    st.lists(small, max_size=5),
    st.lists(st.tuples(small, st.booleans()), max_size=5),
)
def test_aggregate_bounds(regular: list[Decimal], inits: list[tuple[Decimal, bool]]) -> None:
    """The pod needs at least every phase and at most everything at once."""
    got = aggregate([gpu_d(v) for v in regular], [(gpu_d(v), s) for v, s in inits]).get(
        "nvidia.com/gpu", D(0)
    )
    steady = sum(regular, D(0)) + sum((v for v, s in inits if s), D(0))
    assert got >= steady
    sidecars = D(0)
    for value, is_sidecar in inits:
        if is_sidecar:
            sidecars += value
        else:
            assert got >= value + sidecars
    assert got <= sum(regular, D(0)) + sum((v for v, _ in inits), D(0))


def gpu_d(value: Decimal) -> dict[str, Decimal]:
    return {"nvidia.com/gpu": value}


def _pod(text: str) -> PodSpec:
    (doc,) = load_text(text).documents
    (obj,) = objects(doc)
    (pod,) = builtin_table().pod_specs(obj)
    return pod


def test_limits_fill_missing_requests_and_requests_win() -> None:
    pod = _pod(
        """
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  initContainers:
  - name: warmup
    resources:
      limits: {nvidia.com/gpu: 2}
  - name: proxy
    restartPolicy: Always
    resources:
      requests: {cpu: 500m}
      limits: {cpu: "1"}
  containers:
  - name: train
    resources:
      limits: {nvidia.com/gpu: 1, cpu: "2"}
      requests: {cpu: "1"}
  overhead: {cpu: 250m}
"""
    )
    result = pod_requests(pod)
    assert result.get("nvidia.com/gpu") == 2
    assert result.get("cpu") == D("1.75")  # train 1 + proxy 0.5, plus overhead 0.25
    train = next(c for c in result.containers if c.container.name == "train")
    assert train.paths["cpu"][-2] == "requests"
    assert train.paths["nvidia.com/gpu"][-2] == "limits"
    assert [c.role for c in result.containers] == ["init", "sidecar", "container"]


def test_null_reads_as_zero_and_placeholders_are_not_evaluated() -> None:
    pod = _pod(
        """
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: a
    resources:
      limits: {nvidia.com/gpu: null}
  - name: b
    resources:
      limits: {nvidia.com/gpu: $GPU_PER_NODE}
  - name: c
    resources:
      limits: {nvidia.com/gpu: 1}
"""
    )
    result = pod_requests(pod)
    assert result.get("nvidia.com/gpu") == 1
    assert [u.reason for u in result.unevaluated] == ["placeholder"]
    assert result.containers[0].nulls == ("nvidia.com/gpu",)


def test_single_container_locations_count_as_regular_containers() -> None:
    pod = _pod(
        """
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: isvc}
spec:
  predictor:
    model:
      modelFormat: {name: huggingface}
      resources:
        limits: {nvidia.com/gpu: 2}
    containers:
    - name: agent
      resources:
        limits: {nvidia.com/gpu: 1}
"""
    )
    assert pod_requests(pod).get("nvidia.com/gpu") == 3


def test_ephemeral_containers_do_not_count() -> None:
    pod = _pod(
        """
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: a, resources: {limits: {nvidia.com/gpu: 1}}}]
  ephemeralContainers: [{name: debug, resources: {limits: {nvidia.com/gpu: 1}}}]
"""
    )
    assert pod_requests(pod).get("nvidia.com/gpu") == 1


# Values a container may write for a device: counts, zero, negatives, null, a placeholder,
# a fraction, and quantities large enough to overflow Decimal arithmetic.
_VALUES = st.sampled_from(
    ["0", "1", "2", "3", "5", "-2", "null", "$(GPUS)", "0.5", "1e9", "2k", '"1e2147483647"']
)
_ENTRY = st.fixed_dictionaries(
    {}, optional={"limits": _VALUES, "requests": _VALUES, "sidecar": st.just(True)}
)


def _with_gpus(section: str, entries: list[dict[str, object]]) -> str:
    lines = [f"  {section}:"] if entries else []
    for i, entry in enumerate(entries):
        lines.append(f"  - name: c{i}")
        if entry.get("sidecar") and section == "initContainers":
            lines.append("    restartPolicy: Always")
        lines.append("    resources:")
        for key in ("limits", "requests"):
            if key in entry:
                lines.append(f"      {key}: {{nvidia.com/gpu: {entry[key]}}}")
    return "\n".join(lines)


@given(
    st.lists(_ENTRY, min_size=1, max_size=3),
    st.lists(_ENTRY, max_size=3),
    st.one_of(st.none(), _VALUES),
    st.integers(min_value=0, max_value=12),
)
def test_gpu040_bound_is_never_below_the_pod_request(
    containers: list[dict[str, object]],
    inits: list[dict[str, object]],
    overhead: str | None,
    limit: int,
) -> None:
    """GPU040 skips adding up a pod's requests when its bound is within the limit: the
    bound must hold whatever the containers write."""
    from gpulint.rules.gpu040_pod_exceeds_largest_node import _within

    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
    text += _with_gpus("containers", containers) + "\n" + _with_gpus("initContainers", inits)
    if overhead is not None:
        text += f"\n  overhead: {{nvidia.com/gpu: {overhead}}}"
    pod = _pod(text + "\n")
    if _within(pod, "nvidia.com/gpu", limit):
        assert pod_requests(pod).get("nvidia.com/gpu") <= limit
