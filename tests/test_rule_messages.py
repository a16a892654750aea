"""What the messages tell the user to write instead, where the fixtures only pin code and line."""

from __future__ import annotations

import pytest

from gpulint.k8s.devices import builtin_registry
from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.model import Finding, Severity
from gpulint.settings import Settings
from tests.conftest import ROOT, said

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists}
  containers:
  - name: c
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources:
      limits:
        NAME: VALUE
"""


def findings(linter: Linter, name: str, value: str = "1") -> list[Finding]:
    text = POD.replace("NAME", name).replace("VALUE", value)
    return linter.lint_bytes("pod.yaml", text.encode())


@pytest.mark.parametrize(
    ("name", "advice"),
    [
        ("nvidia.com/gpus", "did you mean nvidia.com/gpu?"),
        ("nvidia.com/GPU", "resource names are case-sensitive: write nvidia.com/gpu"),
        ("aliyun.com/gpu-memory", "did you mean aliyun.com/gpu-mem?"),
        ("alpha.kubernetes.io/nvidia-gpu", "use nvidia.com/gpu"),
        ("nvidia.com/mig-1g.10gb+me", "write nvidia.com/mig-1g.10gb.me"),
        # An unknown profile lists the real ones with as many compute slices, smallest first.
        ("nvidia.com/mig-3g.30gb", "the 3g profiles are 3g.20gb, 3g.40gb, 3g.47gb"),
        ("nvidia.com/mig-7g.100gb", "the 7g profiles are 7g.40gb, 7g.79gb, 7g.80gb"),
    ],
)
def test_gpu010_suggests_the_real_name(linter: Linter, name: str, advice: str) -> None:
    (finding,) = findings(linter, name)
    assert finding.rule == "GPU010"
    assert advice in said(finding)


def test_gpu010_leaves_other_domains_alone(linter: Linter) -> None:
    """A domain no registered vendor uses, nor one like it, is not the registry's to judge."""
    assert not [f for f in findings(linter, "example.com/quantum-gpu") if f.rule == "GPU010"]


@pytest.mark.parametrize(
    "name",
    [
        "mthreads.com/gpu",
        "gpu.intel.com/dxg",
        "koordinator.sh/gpu-memory-ratio",
        "dcu.com/gpu",
        "tke.cloud.tencent.com/qgpu-core",
        "elasticgpu.io/gpu-memory",
        "alibabacloud.com/gpu-mem",
        # DRA extended resources (KEP-5004): served by a claim for the class
        "deviceclass.resource.kubernetes.io/gpu.nvidia.com",
        "deviceclass.resource.kubernetes.io/my-accelerators",
    ],
)
def test_gpu010_real_resources_are_no_findings(linter: Linter, name: str) -> None:
    assert not [f for f in findings(linter, name) if f.rule == "GPU010"]


def test_gpu010_a_plausible_unknown_name_is_info(linter: Linter) -> None:
    (finding,) = [f for f in findings(linter, "nvidia.com/gpu-count") if f.rule == "GPU010"]
    assert finding.severity.name == "INFO"
    assert "not in gpulint's device registry" in said(finding)
    assert "declare it under `devices:`" in said(finding)
    assert "devices: [{name: nvidia.com/gpu-count}]" in said(finding)


@pytest.mark.parametrize(
    ("name", "severity", "words"),
    [
        # Certainly wrong: a slip of a registered name.
        ("nvidia.com/gpus", "ERROR", "did you mean nvidia.com/gpu?"),
        ("nvidia.com/GPU", "ERROR", "case-sensitive"),
        ("nvidai.com/gpu", "ERROR", "did you mean nvidia.com/gpu?"),
        ("habana.ai/gaudi3", "ERROR", "did you mean habana.ai/gaudi?"),
        # Unknown, not wrong: another model, a prefixed name, a profile of a newer GPU, a
        # name the plugin's older releases advertise (no plugin in the project says which).
        ("aws.amazon.com/neurondevice", "INFO", "use aws.amazon.com/neuron"),
        ("huawei.com/Ascend910B9", "INFO", "did you mean"),
        ("nvidia.com/xgpu", "INFO", "did you mean nvidia.com/gpu?"),
        ("nvidia.com/mig-3g.30gb", "INFO", "the 3g profiles are"),
    ],
)
def test_gpu010_is_an_error_only_when_certainly_wrong(
    linter: Linter, name: str, severity: str, words: str
) -> None:
    (finding,) = [f for f in findings(linter, name) if f.rule == "GPU010"]
    assert finding.severity.name == severity, said(finding)
    assert words in said(finding)


def test_gpu010_a_device_class_extended_resource_name_is_no_finding(linter: Linter) -> None:
    text = POD.replace("NAME", "example.com/accelerator").replace("VALUE", "1") + (
        "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: accel}\n"
        "spec:\n  extendedResourceName: example.com/accelerator\n"
    )
    found = linter.lint_bytes("pod.yaml", text.encode())
    assert not [f for f in found if f.rule == "GPU010"]
    text = POD.replace("NAME", "nvidia.com/gpu-count").replace("VALUE", "1") + (
        "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpus}\n"
        "spec:\n  extendedResourceName: nvidia.com/gpu-count\n"
    )
    found = linter.lint_bytes("pod.yaml", text.encode())
    assert not [f for f in found if f.rule == "GPU010"]


@pytest.mark.parametrize(
    ("name", "advice"),
    [
        # The domain itself looks misspelt: the suggestion may cross to the real one.
        ("nvidai.com/gpu", "did you mean nvidia.com/gpu?"),
        ("habana.com/gaudi", "did you mean habana.ai/gaudi?"),
        ("nvidia/gpu", "did you mean nvidia.com/gpu?"),
        ("amd.co/mgpu", "did you mean amd.com/gpu?"),
        # A misspelt domain whose local part matches no name: that vendor's names.
        ("intel.com/gpu", "the gpu.intel.com device plugins advertise gpu.intel.com/i915, "),
    ],
)
def test_gpu010_crosses_domains_only_for_a_misspelt_domain(
    linter: Linter, name: str, advice: str
) -> None:
    (finding,) = findings(linter, name)
    assert advice in said(finding)
    assert "birentech" not in said(finding)


def test_gpu010_suggestions_stay_within_a_known_vendor_domain() -> None:
    # One-edit typos of every local part under a real domain never suggest another vendor's
    # name (before, `amd.com/gpux`-like typos could land on whichever name difflib liked).
    registry = builtin_registry()
    for real in registry.resources:
        domain, _, local = real.rpartition("/")
        for typo in (f"{domain}/{local}x", f"{domain}/{local[1:]}", f"{domain}/x{local}"):
            if typo in registry.resources:
                continue
            suggestion = registry.suggest(typo)
            assert suggestion is None or suggestion.rpartition("/")[0] == domain, (
                typo,
                suggestion,
            )


def test_gpu012_points_to_the_compute_share_and_the_pod_label(linter: Linter) -> None:
    (finding,) = findings(linter, "aliyun.com/gpu-count", "25")
    assert finding.rule == "GPU012"
    assert "aliyun.com/gpu-core.percentage" in said(finding)
    assert "pod label" in said(finding)


@pytest.mark.parametrize(
    ("value", "quoted"),
    [("one", "'one'"), ('"2 "', "'2 '"), ("1K", "'1K'"), ("-1", "-1 is negative")],
)
def test_gpu005_quotes_the_value(linter: Linter, value: str, quoted: str) -> None:
    (finding,) = findings(linter, "nvidia.com/gpu", value)
    assert finding.rule == "GPU005"
    assert quoted in said(finding)


def test_api_server_wording_is_quoted(linter: Linter) -> None:
    (fraction,) = findings(linter, "nvidia.com/gpu", "0.5")
    assert '"must be an integer"' in said(fraction)
    (negative,) = findings(linter, "nvidia.com/gpu", "-1")
    assert '"must be greater than or equal to 0"' in said(negative)


GPU_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  tolerations:
  - TOLERATION
  containers:
  - name: c
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources:
      limits:
        nvidia.com/gpu: 1
"""


def at(text: str, anchor: str) -> tuple[int, int]:
    """Line and column of ``anchor``'s first occurrence on the toleration line (line 7)."""
    line = text.splitlines()[6]
    return 7, line.index(anchor) + 1


@pytest.mark.parametrize(
    ("toleration", "anchor", "advice"),
    [
        # Right key, wrong value: the value is what to change.
        (
            "{key: nvidia.com/gpu, operator: Equal, value: 'true'}",
            "'true'",
            'its value is "true", not the taint\'s "present": write value: present, or '
            "operator: Exists (and no value)",
        ),
        # No operator is Equal with an empty value: the finding is at the key.
        (
            "{key: nvidia.com/gpu, effect: NoSchedule}",
            "nvidia.com/gpu",
            "with no operator the toleration means Equal, and its value is empty, not the "
            'taint\'s "present": add operator: Exists',
        ),
        (
            "{key: nvidia.com/gpu, operator: Exists, effect: NoExecute}",
            "NoExecute",
            "write effect: NoSchedule, or leave effect out to tolerate every effect",
        ),
        (
            "{key: nvidia.com/GPU, operator: Exists}",
            "nvidia.com/GPU",
            "write key: nvidia.com/gpu (taint keys are case-sensitive)",
        ),
    ],
)
def test_gpu020_names_the_toleration_that_almost_matches(
    toleration: str, anchor: str, advice: str
) -> None:
    taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    configured = Linter(load_rules(), Settings(options={"GPU020": {"taints": [taint]}}))
    text = GPU_POD.replace("TOLERATION", toleration)
    found = [f for f in configured.lint_bytes("pod.yaml", text.encode()) if f.rule == "GPU020"]
    (finding,) = found
    assert "the toleration {key: nvidia.com/" in said(finding)
    assert "almost matches: " + advice in said(finding)
    assert (finding.line, finding.column) == at(text, anchor)


@pytest.mark.parametrize(
    ("toleration", "reported"),
    [
        ("{key: nvidia.com/gpu, operator: Equal, value: 'true'}", False),  # EKS's usual taint
        ("{key: nvidia.com/gpu, effect: NoSchedule}", False),  # a taint with no value
        ("{key: nvidia.com/gpu, operator: Exists, effect: NoExecute}", False),
        ("{key: nvidia.com/GPU, operator: Exists}", True),  # no cluster's taint is so
    ],
)
def test_gpu020_holds_no_variant_of_the_default_taint_against_it(
    linter: Linter, toleration: str, reported: bool
) -> None:
    # With no configuration, the pod's own toleration of nvidia.com/gpu says what its GPU
    # nodes' taint is; gpulint's default only guesses at it.
    text = GPU_POD.replace("TOLERATION", toleration)
    found = [f for f in linter.lint_bytes("pod.yaml", text.encode()) if f.rule == "GPU020"]
    assert bool(found) is reported


def test_an_operator_the_api_server_rejects_is_gpu022s_alone(linter: Linter) -> None:
    # One cause, one finding: `exists` is rejected (GPU022), which is why the taint is not
    # tolerated; GPU020 yields to it at that field.
    text = GPU_POD.replace("TOLERATION", "{key: nvidia.com/gpu, operator: exists}")
    found = linter.lint_bytes("pod.yaml", text.encode())
    assert [f.rule for f in found] == ["GPU022"]
    assert (found[0].line, found[0].column) == at(text, "exists")


def test_gpu020_near_miss_for_a_taint_without_a_value() -> None:
    configured = Linter(
        load_rules(),
        Settings(options={"GPU020": {"taints": [{"key": "nvidia.com/gpu"}]}}),
    )
    text = GPU_POD.replace("TOLERATION", "{key: nvidia.com/gpu, value: present}")
    (finding,) = [f for f in configured.lint_bytes("pod.yaml", text.encode()) if f.rule == "GPU020"]
    assert "almost matches: the taint has no value: remove value: present, or write " in (
        said(finding)
    )
    assert (finding.line, finding.column) == at(text, "present")


def test_gpu020_says_how_to_set_the_clusters_taint_only_when_it_assumed_one(
    linter: Linter,
) -> None:
    text = GPU_POD.replace("  tolerations:\n  - TOLERATION\n", "").encode()
    (assumed,) = linter.lint_bytes("pod.yaml", text)
    assert (
        "(assumed: gpulint's default GPU taint; `gpu-taints: "
        '["nvidia.com/gpu=present:NoSchedule"]` in .gpulint.yaml makes it certain)' in said(assumed)
    )
    assert assumed.severity is Severity.INFO  # a guess is never an error
    configured = Linter(
        load_rules(),
        Settings(options={"GPU020": {"taints": [{"key": "sku", "value": "gpu"}]}}),
    )
    (told,) = configured.lint_bytes("pod.yaml", text)
    assert "sku=gpu:NoSchedule" in said(told)
    assert "gpu-taints" not in said(told)
    assert told.severity is Severity.ERROR


@pytest.mark.parametrize(
    ("toleration", "anchor", "quoted"),
    [
        (
            "{key: nvidia.com/gpu, operator: Exists, value: present}",
            "present",
            "\"value must be empty when `operator` is 'Exists'\"; remove value: present",
        ),
        (
            "{key: nvidia.com/gpu, operator: exists}",
            "exists",
            'operator "exists" is not supported (supported values: "Equal", "Exists"); '
            "write Exists (operators are case-sensitive)",
        ),
        (
            "{key: nvidia.com/gpu, operator: Exists, effect: noschedule}",
            "noschedule",
            'effect "noschedule" is not supported',
        ),
        (
            "{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule, tolerationSeconds: 9}",
            "NoSchedule",
            "\"effect must be 'NoExecute' when `tolerationSeconds` is set\"",
        ),
        (
            "{operator: Equal, value: gpu}",
            "Equal",
            '"operator must be Exists when `key` is empty',
        ),
    ],
)
def test_gpu022_quotes_the_api_server_at_the_value(
    linter: Linter, toleration: str, anchor: str, quoted: str
) -> None:
    text = GPU_POD.replace("TOLERATION", toleration)
    found = [f for f in linter.lint_bytes("pod.yaml", text.encode()) if f.rule == "GPU022"]
    (finding,) = found
    assert said(finding).startswith("the API server rejects this toleration: ")
    assert quoted in said(finding)
    assert (finding.line, finding.column) == at(text, anchor)


ALIASED = """\
apiVersion: v1
kind: Pod
metadata:
  name: shared-limits
spec:
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists}
  containers:
  - name: trainer
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources: &gpu-res
      limits:
        nvidia.com/gpu: 0.5
  - name: evaluator
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources: *gpu-res
"""


def test_findings_in_aliased_content_say_which_container_they_are_for(linter: Linter) -> None:
    found = linter.lint_bytes("pod.yaml", ALIASED.encode())
    # Reported once per use, at the anchor where the fix goes, and told apart.
    assert [(f.rule, f.line, f.column) for f in found] == [("GPU004", 13, 25)] * 2
    assert sorted(f.message.rsplit(" (for ", 1)[1] for f in found) == [
        "container evaluator, shared through a YAML alias)",
        "container trainer, shared through a YAML alias)",
    ]


def test_a_finding_used_once_keeps_its_message(linter: Linter) -> None:
    text = ALIASED.replace("    resources: *gpu-res\n", "")
    (finding,) = linter.lint_bytes("pod.yaml", text.encode())
    assert "(for " not in said(finding)


def test_gpu023_holds_a_vm_passthrough_plugin_only_to_configured_taints() -> None:
    path = ROOT / "tests/fixtures/rules/GPU023/pass-vm-passthrough-plugin.yaml"
    taints = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    options = {"GPU020": {"taints": taints}, "GPU023": {"taints": taints}}
    settings = Settings(select=frozenset({"GPU023"}), options=options)
    (finding,) = Linter(load_rules(), settings).lint_bytes("ds.yaml", path.read_bytes())
    assert finding.rule == "GPU023" and finding.severity.name == "ERROR"
    assert "passed-through GPUs" in said(finding)


MAXTEXT = """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: maxtext}
spec:
  replicatedJobs:
  - name: slice
    REPLICAS
    template:
      spec:
        parallelism: 2
        template:
          spec:
            nodeSelector:
              cloud.google.com/gke-tpu-accelerator: tpu-v4-podslice
              cloud.google.com/gke-tpu-topology: 2x2x2
            containers:
            - name: tpu-job
              image: gcr.io/example/maxtext-runner-image
              command: [python3, MaxText/train.py, MaxText/configs/base.yml, AXES]
"""


def _maxtext(replicas: str, axes: str) -> list[Finding]:
    text = MAXTEXT.replace("REPLICAS", replicas).replace("AXES", axes)
    linter = Linter(load_rules(), Settings(select=frozenset({"GPU045"})))
    return linter.lint_bytes("jobset.yaml", text.encode())


def test_gpu045_dcn_axes_on_one_slice_are_a_warning() -> None:
    # A Kustomize patch of one slice that keeps a two-slice DCN axis: releases differ.
    (finding,) = _maxtext("replicas: 1", "ici_fsdp_parallelism=8, dcn_data_parallelism=2")
    assert finding.severity.name == "WARNING"
    assert "dcn_data_parallelism 2 = 2 slices" in said(finding)
    assert "the JobSet runs 1 slice (replicas: 1)" in said(finding)


def test_gpu045_an_ici_product_that_does_not_divide_the_slice_is_an_error() -> None:
    (finding,) = _maxtext("replicas: 1", "ici_fsdp_parallelism=16")
    assert finding.severity.name == "ERROR"
    assert "tpu-v4-podslice 2x2x2) has 8 devices" in said(finding)


@pytest.mark.parametrize(
    ("replicas", "axes"),
    [
        ("replicas: 2", "ici_fsdp_parallelism=8, dcn_data_parallelism=2"),
        ("replicas: 1", "ici_fsdp_parallelism=4, ici_tensor_parallelism=2"),
        # No replicas written (a patch's base decides), MaxText told its slices itself.
        ("# replicas left to the base", "dcn_data_parallelism=2"),
        ("replicas: 1", "num_slices=2, dcn_data_parallelism=2"),
    ],
)
def test_gpu045_meshes_that_fit_or_cannot_be_known(replicas: str, axes: str) -> None:
    assert _maxtext(replicas, axes) == []


def test_gpu045_a_plain_job_is_one_slice() -> None:
    text = """\
apiVersion: batch/v1
kind: Job
metadata: {name: maxtext-single-slice}
spec:
  parallelism: 2
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-tpu-accelerator: tpu-v5p-slice
        cloud.google.com/gke-tpu-topology: 2x2x1
      containers:
      - name: tpu-job
        image: gcr.io/example/maxtext-runner-image
        command: [python3, -m, MaxText.train, MaxText/configs/base.yml, ici_fsdp_parallelism=8]
"""
    linter = Linter(load_rules(), Settings(select=frozenset({"GPU045"})))
    (finding,) = linter.lint_bytes("job.yaml", text.encode())
    assert finding.severity.name == "ERROR"
    assert "ici_fsdp_parallelism 8 = 8 devices per slice" in said(finding)
    assert "has 4 devices" in said(finding)
