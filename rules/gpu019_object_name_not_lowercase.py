"""An object name with capital letters, which the API server refuses.

## What it does
Reports the `metadata.name` of an object when it holds capital letters and would be a valid
name written in lower case (`RTX6000-micro`, `Llama3-Server`): Kubernetes names are DNS
subdomains (lower-case letters, digits, `-` and `.`), and the API server refuses the object.
It checks every object of a linted file, Kubernetes' own kinds and custom resources alike
(a custom resource's name is validated as a DNS subdomain too), but for the RBAC kinds
(`Role`, `ClusterRole` and their bindings), whose names may hold capitals. A name that holds
anything else a DNS name may not (`_`, `$`, `{{ }}`: most often a placeholder a template
engine or a script fills in) is left alone: it is not the name that gets applied; so is a
name with a word of three or more capitals between its dashes (`immich-upload-USER`, "change
USER when running"), a name that is one camel-case word (`moduleName`, `jobName`), and a
name with a word that names a variable (camel case ending in `Name`, `Namespace`, `Id` or
`ID`, maybe numbered: `cluster-apps-appName101`, `appName101-config` in a scaffold a script's
`sed` fills in): a variable's name that a program's test data or a script replaces.

## Why it matters
`kubectl apply` fails on the object: `metadata.name: Invalid value: "RTX6000-micro": a
lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or
'.'`. A GitOps sync of the set that holds it fails with it.

## Example
```yaml
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterInstancetype
metadata:
  name: RTX6000-micro    # GPU019
```

## Use instead
```yaml
metadata:
  name: rtx6000-micro
```

## Options
None.

## References
- https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#dns-subdomain-names
- Kubernetes `staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go`
  (`NameIsDNSSubdomain`), apiextensions-apiserver `pkg/registry/customresource/validator.go`
  (custom resources' names), `pkg/apis/rbac/validation` (`ValidateRBACName`: path segments)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpulint.api import K8sObject, RuleContext, Violation, dns_subdomain

CODE = "GPU019"
NAME = "object-name-not-lowercase"
SEVERITY = "error"
SCOPE = "object"
OPTIONS: dict[str, Any] = {}

#: A word of a name that names a variable: camel case ending in Name, Namespace, Id or ID,
#: maybe numbered (`appName101` in `cluster-apps-appName101`, which a script's `sed` replaces).
_VARIABLE_WORD = r"[a-z]+(?:[A-Z][a-z0-9]*)*(?:Name|Namespace|Id|ID)[0-9]*"
#: Groups whose kinds take any path segment as a name.
_ANY_NAME_GROUPS = frozenset({"rbac.authorization.k8s.io"})


def check(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    if obj.parent is not None or obj.group in _ANY_NAME_GROUPS:
        return
    meta = obj.data.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    if not isinstance(name, str) or name == name.lower():
        return
    lower = name.lower()
    if dns_subdomain(lower) is not None:
        return  # not only its case: a placeholder, or another mistake
    import re

    if any(re.fullmatch("[A-Z]{3,}", word) for word in re.split(r"[-.]", name)):
        return  # a word in capitals: a placeholder to replace (`immich-upload-USER`)
    if re.fullmatch("[a-z]+(?:[A-Z][a-z0-9]*)+", name):
        return  # one camel-case word: a variable's name (`moduleName`)
    if any(re.fullmatch(_VARIABLE_WORD, word) for word in re.split(r"[-.]", name)):
        return  # a word that names a variable: a scaffold a script fills in (`appName101`)
    yield Violation(
        (*obj.path, "metadata", "name"),
        f"metadata.name {name} has capital letters: the API server refuses the {obj.kind} "
        "(names are lower-case DNS subdomains)",
        help=f"write it in lower case: {lower}",
        at="value",
    )
