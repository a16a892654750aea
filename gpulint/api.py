"""The one import for rule authors: everything a rule module uses, with ``__all__``.

Built-in rules (:mod:`gpulint.rules`), the example plugin in the tests and the plugin examples
of the documentation import only this module::

    from gpulint.api import PodSpec, RuleContext, Violation, gpu_demand

The names are loaded when first asked for (PEP 562): importing this module costs nothing,
and a rule that needs the instance-type catalog only on GKE still imports it only then, by
importing the name inside the function that needs it. The table :data:`_WHERE` says where
each name is defined; mypy reads the same names from the imports under ``TYPE_CHECKING``.
What is here is the stable surface: a name leaves only after a release that warns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpulint.cluster.catalog import (
        builtin_catalog as builtin_catalog,
    )
    from gpulint.cluster.evidence import (
        Evidence as Evidence,
        KnownTaint as KnownTaint,
        applicable as applicable,
        basis as basis,
        certain_line as certain_line,
        names_node_taint as names_node_taint,
    )
    from gpulint.cluster.facts import (
        accelerator_nodes as accelerator_nodes,
        added_tolerations as added_tolerations,
        describe_offer as describe_offer,
        describes_nodes as describes_nodes,
        enforced_taints as enforced_taints,
        largest as largest,
        nodes_offering as nodes_offering,
        nvidia_nodes as nvidia_nodes,
        pool_label as pool_label,
        queued as queued,
        unoffered as unoffered,
        why_not as why_not,
    )
    from gpulint.cluster.filters import (
        Failure as Failure,
        feasibility as feasibility,
        fits_somewhere as fits_somewhere,
    )
    from gpulint.cluster.model import (
        Node as Node,
    )
    from gpulint.cluster.podnodes import (
        Selected as Selected,
        gpu_label_resource as gpu_label_resource,
        label_says_yes as label_says_yes,
        pinned as pinned,
        selected_size as selected_size,
    )
    from gpulint.cluster.schedpod import (
        sched_pod as sched_pod,
    )
    from gpulint.data import (
        data_path as data_path,
    )
    from gpulint.k8s.agents import (
        find_agent as find_agent,
        image_repository as image_repository,
    )
    from gpulint.k8s.cel import (
        check_selector_expression as check_selector_expression,
    )
    from gpulint.k8s.devicenames import (
        Verdict as Verdict,
        judge as judge,
    )
    from gpulint.k8s.devices import (
        DeviceResource as DeviceResource,
        Registry as Registry,
    )
    from gpulint.k8s.dracount import (
        claimed_devices as claimed_devices,
        pod_claimed as pod_claimed,
    )
    from gpulint.k8s.drafields import (
        dra_opaque_configs as dra_opaque_configs,
        dra_selectors as dra_selectors,
    )
    from gpulint.k8s.draspec import (
        DRA_LIFECYCLE as DRA_LIFECYCLE,
        dns_label as dns_label,
        dra_object_problems as dra_object_problems,
        holds_placeholder as holds_placeholder,
    )
    from gpulint.k8s.engines import (
        Started as Started,
        Word as Word,
        find_engine as find_engine,
        has_flag as has_flag,
        int_value as int_value,
        literal_env as literal_env,
        may_start_engine as may_start_engine,
        option as option,
        words as words,
    )
    from gpulint.k8s.envvalues import (
        Source as Source,
        container_env as container_env,
    )
    from gpulint.k8s.objects import (
        expression_key_path as expression_key_path,
        required_node_terms as required_node_terms,
    )
    from gpulint.k8s.podrequest import (
        pod_requests as pod_requests,
    )
    from gpulint.k8s.quantity.arith import (
        is_integer as is_integer,
        milli_round_up as milli_round_up,
    )
    from gpulint.k8s.quantity.parse import (
        QuantityError as QuantityError,
        parse_quantity as parse_quantity,
    )
    from gpulint.k8s.resources import (
        ResourceEntry as ResourceEntry,
        accelerator_entries as accelerator_entries,
        amount as amount,
        container_entries as container_entries,
        container_gpu as container_gpu,
        extended_requests as extended_requests,
        format_amount as format_amount,
        gpu_demand as gpu_demand,
        is_extended_resource as is_extended_resource,
        is_placeholder as is_placeholder,
        resource_lists as resource_lists,
        shares_by_annotation as shares_by_annotation,
        show_value as show_value,
        spark_asks_for_gpus as spark_asks_for_gpus,
        wants_accelerator as wants_accelerator,
        whole_gpu_count as whole_gpu_count,
    )
    from gpulint.k8s.taints import (
        TAINTS_OPTION as TAINTS_OPTION,
        Taint as Taint,
        almost as almost,
        default_taints_assumed as default_taints_assumed,
        describe_toleration as describe_toleration,
        near_miss as near_miss,
        taints_from_options as taints_from_options,
        tolerates as tolerates,
    )
    from gpulint.k8s.workloads import (
        Container as Container,
        K8sObject as K8sObject,
        PodSpec as PodSpec,
    )
    from gpulint.model import (
        AddEntry as AddEntry,
        AppendItem as AppendItem,
        Change as Change,
        DeleteKey as DeleteKey,
        MoveKey as MoveKey,
        Path as Path,
        Related as Related,
        RenameKey as RenameKey,
        Repair as Repair,
        Severity as Severity,
        Span as Span,
    )
    from gpulint.rule import (
        Rule as Rule,
        RuleContext as RuleContext,
        Violation as Violation,
    )
    from gpulint.util.nearmiss import (
        one_typo_from as one_typo_from,
    )


#: Where each name is defined; :data:`__all__` is its keys (tests/test_architecture.py checks
#: that the ``TYPE_CHECKING`` imports above say the same).
_WHERE: dict[str, str] = {
    "check_selector_expression": "gpulint.k8s.cel",
    "claimed_devices": "gpulint.k8s.dracount",
    "pod_claimed": "gpulint.k8s.dracount",
    "one_typo_from": "gpulint.util.nearmiss",
    "DRA_LIFECYCLE": "gpulint.k8s.draspec",
    "dns_label": "gpulint.k8s.draspec",
    "holds_placeholder": "gpulint.k8s.draspec",
    "dra_object_problems": "gpulint.k8s.draspec",
    "dra_opaque_configs": "gpulint.k8s.drafields",
    "dra_selectors": "gpulint.k8s.drafields",
    "Rule": "gpulint.rule",
    "RuleContext": "gpulint.rule",
    "Violation": "gpulint.rule",
    "AddEntry": "gpulint.model",
    "AppendItem": "gpulint.model",
    "Change": "gpulint.model",
    "DeleteKey": "gpulint.model",
    "MoveKey": "gpulint.model",
    "Path": "gpulint.model",
    "Related": "gpulint.model",
    "RenameKey": "gpulint.model",
    "Repair": "gpulint.model",
    "Severity": "gpulint.model",
    "Span": "gpulint.model",
    "Container": "gpulint.k8s.workloads",
    "K8sObject": "gpulint.k8s.workloads",
    "PodSpec": "gpulint.k8s.workloads",
    "expression_key_path": "gpulint.k8s.objects",
    "required_node_terms": "gpulint.k8s.objects",
    "accelerator_entries": "gpulint.k8s.resources",
    "amount": "gpulint.k8s.resources",
    "container_entries": "gpulint.k8s.resources",
    "container_gpu": "gpulint.k8s.resources",
    "extended_requests": "gpulint.k8s.resources",
    "format_amount": "gpulint.k8s.resources",
    "gpu_demand": "gpulint.k8s.resources",
    "is_extended_resource": "gpulint.k8s.resources",
    "is_placeholder": "gpulint.k8s.resources",
    "resource_lists": "gpulint.k8s.resources",
    "ResourceEntry": "gpulint.k8s.resources",
    "shares_by_annotation": "gpulint.k8s.resources",
    "show_value": "gpulint.k8s.resources",
    "spark_asks_for_gpus": "gpulint.k8s.resources",
    "wants_accelerator": "gpulint.k8s.resources",
    "whole_gpu_count": "gpulint.k8s.resources",
    "parse_quantity": "gpulint.k8s.quantity.parse",
    "QuantityError": "gpulint.k8s.quantity.parse",
    "is_integer": "gpulint.k8s.quantity.arith",
    "milli_round_up": "gpulint.k8s.quantity.arith",
    "pod_requests": "gpulint.k8s.podrequest",
    "DeviceResource": "gpulint.k8s.devices",
    "Verdict": "gpulint.k8s.devicenames",
    "judge": "gpulint.k8s.devicenames",
    "Registry": "gpulint.k8s.devices",
    "default_taints_assumed": "gpulint.k8s.taints",
    "describe_toleration": "gpulint.k8s.taints",
    "almost": "gpulint.k8s.taints",
    "near_miss": "gpulint.k8s.taints",
    "Taint": "gpulint.k8s.taints",
    "taints_from_options": "gpulint.k8s.taints",
    "TAINTS_OPTION": "gpulint.k8s.taints",
    "tolerates": "gpulint.k8s.taints",
    "container_env": "gpulint.k8s.envvalues",
    "Source": "gpulint.k8s.envvalues",
    "find_engine": "gpulint.k8s.engines",
    "has_flag": "gpulint.k8s.engines",
    "int_value": "gpulint.k8s.engines",
    "literal_env": "gpulint.k8s.engines",
    "may_start_engine": "gpulint.k8s.engines",
    "option": "gpulint.k8s.engines",
    "Started": "gpulint.k8s.engines",
    "Word": "gpulint.k8s.engines",
    "words": "gpulint.k8s.engines",
    "find_agent": "gpulint.k8s.agents",
    "image_repository": "gpulint.k8s.agents",
    "data_path": "gpulint.data",
    "Node": "gpulint.cluster.model",
    "builtin_catalog": "gpulint.cluster.catalog",
    "accelerator_nodes": "gpulint.cluster.facts",
    "added_tolerations": "gpulint.cluster.facts",
    "describe_offer": "gpulint.cluster.facts",
    "describes_nodes": "gpulint.cluster.facts",
    "enforced_taints": "gpulint.cluster.facts",
    "largest": "gpulint.cluster.facts",
    "nodes_offering": "gpulint.cluster.facts",
    "unoffered": "gpulint.cluster.facts",
    "nvidia_nodes": "gpulint.cluster.facts",
    "pool_label": "gpulint.cluster.facts",
    "queued": "gpulint.cluster.facts",
    "why_not": "gpulint.cluster.facts",
    "applicable": "gpulint.cluster.evidence",
    "basis": "gpulint.cluster.evidence",
    "certain_line": "gpulint.cluster.evidence",
    "names_node_taint": "gpulint.cluster.evidence",
    "Evidence": "gpulint.cluster.evidence",
    "KnownTaint": "gpulint.cluster.evidence",
    "sched_pod": "gpulint.cluster.schedpod",
    "Selected": "gpulint.cluster.podnodes",
    "gpu_label_resource": "gpulint.cluster.podnodes",
    "label_says_yes": "gpulint.cluster.podnodes",
    "pinned": "gpulint.cluster.podnodes",
    "selected_size": "gpulint.cluster.podnodes",
    "Failure": "gpulint.cluster.filters",
    "feasibility": "gpulint.cluster.filters",
    "fits_somewhere": "gpulint.cluster.filters",
}

__all__ = sorted(_WHERE)


if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        """A name of :data:`__all__`, imported from its module when first asked for."""
        module = _WHERE.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # asked once: the next lookup is a plain global
        return value

    def __dir__() -> list[str]:
        return sorted(__all__)
