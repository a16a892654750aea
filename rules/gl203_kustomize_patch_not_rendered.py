"""A Kustomize patch linted alone: its whole-object checks are left to the rendered overlay.

## What it does
In a run without `--render`, a file that a kustomization of the tree names as a patch
(`patchesStrategicMerge`, or `patches:` / `patchesJson6902` with `- path:`, in the
kustomization itself or in a component it uses) is linted as a patch: half an object. The
checks that need the whole object are not run on it, and neither are they on the object of
a resource the patch completes (same `kind` and `metadata.name`, or the patch's `target`)
when the patch reaches its pod spec (its template, containers, tolerations, node selector,
affinity, volumes, resources, env, command or image; a patch that sets `replicas` leaves
the resource linted whole). Every other check still runs on both: a misspelt resource
name, a fractional GPU, a GPU under `requests` only, an invalid toleration.

The rules left to the rendered overlay (the rule attribute `WHOLE_OBJECT = True`):

- GPU020 (missing GPU toleration) and GPU023 (GPU node agent without it): the GPU and its
  toleration are often in different files;
- GPU021 (a pod without GPUs tolerates the GPU taint): the base tolerates, the patch adds
  the GPU, or the reverse;
- GPU003 (a request that repeats its limit): in a patch, the request may be what overrides
  a different one of the base;
- GPU006 (a GPU resource without a value): in a strategic-merge patch, `null` deletes the
  key from the object it patches (a CPU variant of a GPU Deployment);
- GPU016 (visible-devices variables), GPU041 (engine parallelism against GPUs), GPU042
  (multi-GPU training without `/dev/shm`): a container's env, command or volumes against
  its GPUs;
- GPU040 (more GPUs than the largest node) and the cluster rules GPU050 to GPU054: the
  pod's total, node selectors and tolerations together;
- GPU039 (a restart policy the workload refuses, or a Job's missing one): the base may hold
  the field;
- GPU032 (a mount of a volume the pod does not define) and GPU071 (a path only an init
  container mounts): the base or the patch may add the volume or the mount.

A resource whose patches change only where its pods run (every patch reaches its pod spec
through `nodeSelector`, `affinity` or `tolerations` alone: a JSON patch that adds
`/spec/template/spec/nodeSelector`) keeps its containers, their GPUs and their environment
as written, so the whole-object rules that do not read those fields still run on it
(`PLACEMENT_FREE = True`: GPU003, GPU006, GPU016, GPU029, GPU032, GPU033, GPU039, GPU041,
GPU042, GPU071);
the others (GPU020, GPU021, GPU023, GPU040, GPU043, GPU050 to GPU054) are left to the
rendered overlay.

It reports, once per file whose checks were skipped, at the first such object: that the
file is a Kustomize patch (with the kustomization line that names it), or which patch
completes the object. Without a kustomization that names it, a file is linted as before,
unless its name says it is a patch (`kube-proxy.patch.yaml`, `gpu-patch.yml`,
`patch-tolerations.yaml`, `patch.yaml`, any file of a `patches/` folder): such a file is
often applied by `kubectl patch` or a tool onto an object it does not hold (a DaemonSet's
selector without the template's labels, which its cluster object has). Every check runs on
it, but what the whole-object ones find is held back, and the note names them (none found,
no note).

## Why it matters
Linted alone, a patch that adds `nvidia.com/gpu` has no toleration (it is in the base), and
a base whose GPU arrives through the patch looks like a CPU pod that tolerates the GPU
taint: findings on neither are true of what is applied. Saying nothing would let the
overlay pass unchecked.

## Example
```console
$ gpulint check deploy/
deploy/overlays/gpu/gpu-patch.yaml:3:1: GL203 info: this file is a Kustomize patch, half of
Deployment/vllm: the checks that need the whole object were skipped [Deployment/vllm]
  help: lint the rendered overlay, `gpulint check --render`
(deploy/overlays/gpu/kustomization.yaml:7 applies the patch; the skipped checks: tolerations
against the GPU request, the pod's GPU total, the cluster's nodes)
```

## Use instead
`gpulint check --render deploy/` (needs `kubectl` or `kustomize`; see
docs/rendering.md): the built overlay is linted whole and each finding points at the patch
or base line that wrote it. Or ignore GL203 where overlays are rendered in another job.

## Options
None.

## References
- https://github.com/gpulint/gpulint/blob/main/docs/rendering.md
- https://kubectl.docs.kubernetes.io/references/kustomize/kustomization/patches/
"""

CODE = "GL203"
NAME = "kustomize-patch-not-rendered"
SEVERITY = "info"
SCOPE = "input"
