"""The repository's own device-plugin settings (gpulint.cluster.deviceplugins): the NVIDIA
device plugin's time-slicing/MPS configuration and HAMi's resource names, read from the run
and learned into its registry with where they are said."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import gpulint_in_process, gpulint_subprocess, said

#: The GPU Operator's time-slicing ConfigMap (its ClusterPolicy names it with
#: devicePlugin.config), as the operator's documentation writes it.
TIME_SLICING = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: time-slicing-config
  namespace: gpu-operator
data:
  any: |-
    version: v1
    flags:
      migStrategy: none
    sharing:
      timeSlicing:
        renameByDefault: {rename}
        failRequestsGreaterThanOne: {fail}
        resources:
        - name: nvidia.com/gpu
          replicas: 4
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: notebook}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists}]
  containers:
  - name: jupyter
    image: quay.io/jupyter/pytorch-notebook:cuda12-python-3.11
    resources:
      limits:
        {resource}: {amount}
"""


def _run(tmp_path: Path, files: dict[str, str], *select: str) -> list[dict[str, Any]]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    args = [a for code in select for a in ("--select", code)]
    proc = gpulint_in_process("check", "-f", "json", *args, ".", cwd=tmp_path)
    findings: list[dict[str, Any]] = json.loads(proc.stdout)["findings"]
    return findings


def _config(rename: bool, fail: bool) -> str:
    return TIME_SLICING.replace("{rename}", str(rename).lower()).replace(
        "{fail}", str(fail).lower()
    )


def _pod(resource: str, amount: int) -> str:
    return POD.replace("{resource}", resource).replace("{amount}", str(amount))


def test_failrequestsgreaterthanone_makes_two_replicas_an_error(tmp_path: Path) -> None:
    files = {"ts.yaml": _config(True, True), "pod.yaml": _pod("nvidia.com/gpu.shared", 2)}
    (finding,) = _run(tmp_path, files, "GPU015")
    assert finding["severity"] == "error" and finding["path"] == "pod.yaml"
    assert "failRequestsGreaterThanOne: true" in said(finding)
    assert "ts.yaml:16" in said(finding)
    assert [(r["kind"], r["path"], r["line"]) for r in finding["related"]] == [
        ("evidence", "ts.yaml", 16)
    ]


def test_without_the_flag_two_replicas_are_info_naming_the_configuration(tmp_path: Path) -> None:
    """The plugin accepts the request and the pod runs: what stays is a caution."""
    files = {"ts.yaml": _config(True, False), "pod.yaml": _pod("nvidia.com/gpu.shared", 2)}
    (finding,) = _run(tmp_path, files, "GPU015")
    assert finding["severity"] == "info"
    assert "the project's device plugin accepts more" in finding["help"]
    assert [(r["kind"], r["path"]) for r in finding["related"]] == [("evidence", "ts.yaml")]


def test_a_shared_gpu_that_keeps_its_name(tmp_path: Path) -> None:
    """renameByDefault: false: the replicas are advertised as nvidia.com/gpu itself."""
    files = {"ts.yaml": _config(False, True), "pod.yaml": _pod("nvidia.com/gpu", 2)}
    (finding,) = _run(tmp_path, files, "GPU015")
    assert finding["severity"] == "error"
    assert _run(tmp_path, {"pod.yaml": _pod("nvidia.com/gpu", 1)}, "GPU015") == []


def test_another_configuration_that_does_not_share_leaves_whole_gpus(tmp_path: Path) -> None:
    """With a second configuration (per node label) that does not share nvidia.com/gpu,
    some nodes offer whole GPUs: two of them are no replicas."""
    other = _config(False, True).replace("time-slicing-config", "mps-config")
    other = other.replace("- name: nvidia.com/gpu", "- name: nvidia.com/mig-1g.10gb")
    files = {
        "ts.yaml": _config(False, True),
        "mig.yaml": other,
        "pod.yaml": _pod("nvidia.com/gpu", 2),
    }
    assert _run(tmp_path, files, "GPU015") == []


def test_mps_always_rejects_more_than_one(tmp_path: Path) -> None:
    mps = _config(True, False).replace("timeSlicing:", "mps:")
    files = {"mps.yaml": mps, "pod.yaml": _pod("nvidia.com/gpu.shared", 3)}
    (finding,) = _run(tmp_path, files, "GPU015")
    assert finding["severity"] == "error" and "sharing.mps" in said(finding)


def test_a_renamed_replica_is_a_known_name(tmp_path: Path) -> None:
    renamed = _config(False, True).replace(
        "        - name: nvidia.com/gpu\n",
        "        - name: nvidia.com/gpu\n          rename: nvidia.com/gpu-slice\n",
    )
    pod = _pod("nvidia.com/gpu-slice", 2)
    findings = _run(tmp_path, {"ts.yaml": renamed, "pod.yaml": pod}, "GPU010", "GPU015")
    assert [(f["rule"], f["severity"]) for f in findings] == [("GPU015", "error")]
    # Without the configuration, the name is unknown to the registry.
    (tmp_path / "ts.yaml").unlink()
    assert [f["rule"] for f in _run(tmp_path, {"pod.yaml": pod}, "GPU010", "GPU015")] == ["GPU010"]


#: HAMi's scheduler device ConfigMap with renamed NVIDIA resources.
HAMI = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: hami-scheduler-device
  namespace: kube-system
data:
  device-config.yaml: |-
    nvidia:
      resourceCountName: example.com/vgpu
      resourceMemoryName: example.com/vgpu-memory
      resourceCoreName: example.com/vgpu-cores
      deviceSplitCount: 10
      deviceMemoryScaling: 1
"""


def test_hamis_renamed_core_keeps_its_range(tmp_path: Path) -> None:
    pod = POD.replace(
        "        {resource}: {amount}\n",
        "        example.com/vgpu: 1\n        example.com/vgpu-cores: 150\n",
    )
    findings = _run(tmp_path, {"hami.yaml": HAMI, "pod.yaml": pod}, "GPU010", "GPU011")
    (finding,) = findings
    assert finding["rule"] == "GPU011" and "at most 100" in said(finding)
    assert [(r["kind"], r["path"], r["line"]) for r in finding["related"]] == [
        ("evidence", "hami.yaml", 11)
    ]


def test_hami_chart_values_rename_the_resources(tmp_path: Path) -> None:
    values = (
        'resourceName: "example.com/vgpu"\nresourceMem: "example.com/vgpu-memory"\n'
        'resourceCores: "example.com/vgpu-cores"\ndevicePlugin:\n  deviceSplitCount: 10\n'
    )
    pod = POD.replace("        {resource}: {amount}\n", "        example.com/vgpu-cores: 101\n")
    findings = _run(tmp_path, {"values.yaml": values, "pod.yaml": pod}, "GPU011")
    assert [(f["rule"], f["path"]) for f in findings] == [("GPU011", "pod.yaml")]


def test_a_named_configuration_that_shares_nothing_counts(tmp_path: Path) -> None:
    """A ConfigMap of named configurations, one per node label: the nodes labelled
    ``Exclusive`` offer whole GPUs, so two nvidia.com/gpu are no replicas."""
    named = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: nvidia-device-plugin, namespace: gpu}
data:
  Exclusive: |-
    version: v1
    flags:
      migStrategy: none
  TimeSlicing: |-
    version: v1
    flags:
      migStrategy: none
    sharing:
      timeSlicing:
        failRequestsGreaterThanOne: true
        resources:
        - name: nvidia.com/gpu
          replicas: 4
"""
    files = {"plugin.yaml": named, "pod.yaml": _pod("nvidia.com/gpu", 2)}
    assert _run(tmp_path, files, "GPU015") == []


def test_the_learned_registry_reaches_every_worker(tmp_path: Path) -> None:
    files = {"ts.yaml": _config(True, True)}
    for n in range(3):
        files[f"pod{n}.yaml"] = _pod("nvidia.com/gpu.shared", 2)
    (tmp_path / ".git").mkdir(exist_ok=True)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    proc = gpulint_subprocess(
        "check", "-f", "json", "--jobs", "2", "--select", "GPU015", ".", cwd=tmp_path
    )
    findings = json.loads(proc.stdout)["findings"]
    assert [f["severity"] for f in findings] == ["error"] * 3


def test_inspect_counts_a_renamed_replica_as_a_gpu_request(tmp_path: Path) -> None:
    renamed = _config(False, False).replace(
        "        - name: nvidia.com/gpu\n",
        "        - name: nvidia.com/gpu\n          rename: example.com/ts-slice\n",
    )
    (tmp_path / ".git").mkdir()
    (tmp_path / "ts.yaml").write_text(renamed)
    (tmp_path / "pod.yaml").write_text(_pod("example.com/ts-slice", 1))
    proc = gpulint_in_process("inspect", "-f", "json", ".", cwd=tmp_path)
    (pod,) = [f for f in json.loads(proc.stdout)["files"] if f["path"] == "pod.yaml"]
    (spec,) = pod["workloads"][0]["pods"]
    assert spec["effective_gpu_request"] == {"example.com/ts-slice": "1"}


def test_other_vendors_names_in_hamis_configuration_rename_nothing(tmp_path: Path) -> None:
    """device-config.yaml names every vendor's resources; only its ``nvidia`` mapping
    renames the NVIDIA ones."""
    hami = HAMI.replace(
        "    nvidia:\n",
        "    cambricon:\n      resourceCountName: cambricon.com/vmlu\n    nvidia:\n",
    )
    pod = POD.replace("        {resource}: {amount}\n", "        cambricon.com/vmlu: 1\n")
    files = {"hami.yaml": hami, "pod.yaml": pod}
    assert _run(tmp_path, files, "GPU010", "GPU011", "GPU015") == []
    from gpulint.cluster.deviceplugins import scan

    found = scan([("hami.yaml", hami.encode())])
    assert sorted(r.name for r in found.hami) == [
        "example.com/vgpu",
        "example.com/vgpu-cores",
        "example.com/vgpu-memory",
    ]


def test_a_rename_two_configurations_treat_apart_is_rejected_only_by_both(
    tmp_path: Path,
) -> None:
    strict = _config(True, True)
    lenient = _config(True, False).replace("time-slicing-config", "lenient-config")
    files = {"a.yaml": lenient, "b.yaml": strict, "pod.yaml": _pod("nvidia.com/gpu.shared", 2)}
    (finding,) = _run(tmp_path, files, "GPU015")
    assert finding["severity"] == "warning"
    files["a.yaml"] = strict.replace("time-slicing-config", "second-config")
    (finding,) = _run(tmp_path, files, "GPU015")
    assert finding["severity"] == "error"


#: A device plugin DaemonSet told by its environment which name to advertise (the NVIDIA Kata
#: sandbox plugin's P_GPU_ALIAS style: here a full name, as other plugins take it).
PLUGIN_DAEMONSET = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: npu-device-plugin, namespace: kube-system}
spec:
  selector: {matchLabels: {app: npu-device-plugin}}
  template:
    metadata: {labels: {app: npu-device-plugin}}
    spec:
      containers:
      - name: plugin
        image: registry.example.com/npu-device-plugin:v1
        args: ["--resource-name=nvidia.com/cc-gpu", "--socket=/var/lib/kubelet/device-plugins"]
        env:
        - {name: ALSO_ADVERTISED, value: "nvidia.com/cc-gpu-shared"}
        resources:
          limits: {nvidia.com/gpus: 1}
"""


def test_a_name_the_projects_device_plugin_daemonset_advertises_is_known(
    tmp_path: Path,
) -> None:
    pods = "---\n".join(
        POD.replace("{resource}", name).replace("{amount}", "1").replace("notebook", f"nb{i}")
        for i, name in enumerate(["nvidia.com/cc-gpu", "nvidia.com/cc-gpu-shared"])
    )
    found = _run(tmp_path, {"plugin.yaml": PLUGIN_DAEMONSET, "pods.yaml": pods}, "GPU010")
    # The plugin's own misspelt request is still an error: resources advertise nothing.
    assert [(Path(f["path"]).name, f["line"], f["severity"]) for f in found] == [
        ("plugin.yaml", 16, "error")
    ]
    # Without the DaemonSet the names are unknown: info, never an error.
    (tmp_path / "plugin.yaml").unlink()
    found = _run(tmp_path, {"pods.yaml": pods}, "GPU010")
    assert [f["severity"] for f in found] == ["info", "info"]


#: AWS's Neuron device plugin DaemonSet as its k8s-neuron-device-plugin.yml writes it: no
#: argument names a resource; the image's release decides which names it advertises.
NEURON_PLUGIN = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: neuron-device-plugin-daemonset, namespace: kube-system}
spec:
  selector: {matchLabels: {name: neuron-device-plugin-ds}}
  template:
    metadata: {labels: {name: neuron-device-plugin-ds}}
    spec:
      tolerations: [{key: aws.amazon.com/neuron, operator: Exists, effect: NoSchedule}]
      containers:
      - image: public.ecr.aws/neuron/neuron-device-plugin:{tag}
        name: neuron-device-plugin
"""


#: A KubeVirt CR that permits VMs NVIDIA GPUs by PCI ID, advertised by NVIDIA's KubeVirt GPU
#: device plugin (externalResourceProvider), as KubeVirt's user guide writes it.
KUBEVIRT = """\
apiVersion: kubevirt.io/v1
kind: KubeVirt
metadata: {name: kubevirt, namespace: kubevirt}
spec:
  configuration:
    permittedHostDevices:
      pciHostDevices:
      - pciVendorSelector: "10DE:2236"
        resourceName: nvidia.com/GA102GL_A10
        externalResourceProvider: true
"""


def test_a_name_kubevirt_permits_is_known(tmp_path: Path) -> None:
    kubevirt = KUBEVIRT.replace("GA102GL_A10", "GA102GL_A10_gpu")
    files = {"kv.yaml": kubevirt, "pod.yaml": _pod("nvidia.com/GA102GL_A10_gpu", 1)}
    assert _run(tmp_path, files, "GPU010") == []
    # Without the KubeVirt CR the name is unknown: info.
    (tmp_path / "kv.yaml").unlink()
    found = _run(tmp_path, {"pod.yaml": files["pod.yaml"]}, "GPU010")
    assert [f["severity"] for f in found] == ["info"]


def _neuron(tag: str | None) -> dict[str, str]:
    files = {"pod.yaml": _pod("aws.amazon.com/neurondevice", 1)}
    if tag is not None:
        files["plugin.yaml"] = NEURON_PLUGIN.replace("{tag}", tag)
    return files


def test_a_name_the_projects_plugin_release_advertises_is_known(tmp_path: Path) -> None:
    # Neuron's k8s plugin 2.16.18.0 predates Neuron 2.20, which dropped neurondevice.
    assert _run(tmp_path, _neuron("2.16.18.0"), "GPU010") == []


def test_a_removed_name_is_an_error_only_beside_a_release_without_it(tmp_path: Path) -> None:
    (finding,) = _run(tmp_path, _neuron("2.28.4.0"), "GPU010")
    assert finding["severity"] == "error"
    assert "neuron-device-plugin:2.28.4.0 no longer advertises it" in said(finding)
    assert [(r["kind"], r["path"], r["line"]) for r in finding["related"]] == [
        ("evidence", "plugin.yaml", 11)
    ]


@pytest.mark.parametrize("tag", [None, "latest", "2.24.23.0"])
def test_a_removed_name_without_a_known_release_is_info(tmp_path: Path, tag: str | None) -> None:
    # No plugin in the project, an unpinned one, or a release gpulint cannot place.
    (finding,) = _run(tmp_path, _neuron(tag), "GPU010")
    assert finding["severity"] == "info"
    assert "use aws.amazon.com/neuron" in said(finding)
    assert "devices: [{name: aws.amazon.com/neurondevice}]" in said(finding)


def _nvidia(*names: str) -> dict[str, str]:
    pods = "---\n".join(_pod(name, 1).replace("notebook", f"nb{i}") for i, name in enumerate(names))
    return {"ts.yaml": _config(False, False), "pods.yaml": pods}


def test_a_name_the_projects_nvidia_configuration_does_not_advertise_is_wrong(
    tmp_path: Path,
) -> None:
    # A CDI device name pasted as a resource (a near miss: error), another name (warning);
    # the plugin's own names, MIG profiles and replicas stay known.
    names = ("nvidia.com/gpu-all", "nvidia.com/l40s-passthrough-gpu", "nvidia.com/mig-1g.10gb")
    files = _nvidia(*names)
    found = _run(tmp_path, files, "GPU010")
    assert [(f["line"], f["severity"]) for f in found] == [(11, "error"), (23, "warning")]
    assert "project's device plugin (ts.yaml:" in said(found[0])
    assert "did you mean nvidia.com/gpu?" in said(found[0])
    assert found[0]["related"][0]["path"] == "ts.yaml"


@pytest.mark.parametrize(
    "other",
    [
        # The KubeVirt passthrough plugin advertises PCI device names under nvidia.com.
        PLUGIN_DAEMONSET.replace(
            "registry.example.com/npu-device-plugin:v1",
            "nvcr.io/nvidia/kubevirt-gpu-device-plugin:v1.5.0",
        ).replace('"--resource-name=nvidia.com/cc-gpu", ', ""),
        # A DaemonSet told to advertise a name of the domain.
        PLUGIN_DAEMONSET,
        # KubeVirt permits VMs a passed-through GPU under nvidia.com.
        KUBEVIRT,
    ],
)
def test_another_plugin_of_the_domain_leaves_unknown_names_info(tmp_path: Path, other: str) -> None:
    files = {**_nvidia("nvidia.com/gpu-all"), "other.yaml": other}
    found = [f for f in _run(tmp_path, files, "GPU010") if f["path"] == "pods.yaml"]
    assert [f["severity"] for f in found] == ["info"]


def test_a_configuration_that_names_its_resources_leaves_unknown_names_info(
    tmp_path: Path,
) -> None:
    files = _nvidia("nvidia.com/gpu-all")
    files["ts.yaml"] = files["ts.yaml"].replace(
        "    flags:\n",
        "    resources:\n      gpus: [{pattern: '*A100*', name: a100}]\n    flags:\n",
    )
    assert [f["severity"] for f in _run(tmp_path, files, "GPU010")] == ["info"]
