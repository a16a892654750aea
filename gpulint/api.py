"""The one import for rule authors: everything a rule module uses, with ``__all__``.

Built-in rules (:mod:`gpulint.rules`), the example plugin in the tests and the plugin examples
of the documentation import only this module::

    from gpulint.api import PodSpec, RuleContext, Violation, gpu_demand

The names are loaded when first asked for (PEP 562): importing this module costs nothing,
and a rule that needs the instance-type catalog only on GKE still imports it only then, by
importing the name inside the function that needs it. :data:`GROUPS` is the list, each name
once, by what a rule needs it for; :data:`__all__` is its names, and the ``TYPE_CHECKING``
imports at the end (what mypy reads) are generated from it (``make generate``; a test keeps
them current). What is here is the stable surface: a name leaves, or is renamed, only after
a release that warns (:data:`DEPRECATED`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

#: What a rule may use, by what it needs it for: group -> defining module -> names.
GROUPS: dict[str, dict[str, tuple[str, ...]]] = {
    # What a rule is and what it yields: a Violation at a path, its severity and places.
    "rule": {
        "gpulint.rule": ("Rule", "RuleContext", "Violation"),
        "gpulint.model": ("Path", "Related", "Severity", "Span"),
    },
    # The objects of a file, their pod specs and containers, and what they ask for.
    "objects and resources": {
        "gpulint.k8s.workloads": ("Container", "K8sObject", "PodSpec"),
        "gpulint.k8s.objects": (
            "METADATA_AT_ROOT",
            "expression_key_path",
            "image_reference",
            "metadata_at_root",
            "required_node_terms",
            "value_at",
        ),
        "gpulint.k8s.resources": (
            "ResourceEntry",
            "accelerator_entries",
            "amount",
            "completed_by_runtime",
            "container_entries",
            "container_gpu",
            "extended_requests",
            "format_amount",
            "gpu_demand",
            "is_extended_resource",
            "is_placeholder",
            "is_standard_compute",
            "resource_lists",
            "shares_by_annotation",
            "show_value",
            "spark_asks_for_gpus",
            "wants_accelerator",
            "whole_gpu_count",
        ),
        "gpulint.k8s.chartvalues": ("app_template_values", "in_chart_values"),
        "gpulint.k8s.podrequest": ("pod_requests",),
        "gpulint.k8s.podoptions": (
            "CHART_POD_KEYS",
            "NVIDIA_RUNTIME_CLASSES",
            "chart_pod_options",
            "nvidia_runtime_class",
            "runs_nvidia_runtime",
        ),
        "gpulint.k8s.quantity.parse": ("QuantityError", "parse_quantity"),
        "gpulint.k8s.quantity.arith": ("is_integer", "milli_round_up"),
        # accelerator resource names: the registry and the verdict on a name
        "gpulint.k8s.devices": ("DeviceResource", "Registry", "version_of"),
        "gpulint.k8s.devicenames": ("Verdict", "judge_resource_name"),
        "gpulint.util.nearmiss": ("near_field", "one_typo_from"),
        # Dynamic Resource Allocation: claims, templates, device classes
        "gpulint.k8s.draspec": (
            "DRA_LIFECYCLE",
            "dns_label",
            "dns_subdomain",
            "dra_object_problems",
            "holds_placeholder",
            "is_dra_object",
        ),
        "gpulint.k8s.drafields": ("dra_opaque_configs", "dra_selectors"),
        "gpulint.k8s.dracount": ("claimed_devices", "entry_devices", "pod_claimed"),
        "gpulint.k8s.cel": ("check_selector_expression",),
        # what a container runs: its command's words, engines, node agents, environment
        "gpulint.k8s.engines": (
            "RAY_KINDS",
            "SHELL_PROGRAMS",
            "TPU_ACCELERATOR",
            "TPU_DEVICES_PER_CHIP",
            "Started",
            "Word",
            "command_words",
            "find_engine",
            "flag_text",
            "flag_value",
            "has_flag",
            "int_value",
            "kuberay_pod",
            "literal_env",
            "malformed_option",
            "may_start_engine",
            "option_name",
            "runs_own_image",
            "shell_script",
            "started_by_command",
        ),
        "gpulint.k8s.agents": (
            "NVIDIA_CUDA_IMAGES",
            "find_agent",
            "image_registry",
            "image_repository",
            "image_tag",
        ),
        "gpulint.k8s.envvalues": (
            "FromConfigMap",
            "Source",
            "as_written",
            "container_env",
            "env_entries",
            "envfrom_configmaps",
            "non_string_kind",
        ),
        "gpulint.k8s.shapes": ("chart_gpu_blocks", "host_gpu_device", "host_gpu_mounts"),
        # a YAML text inside a manifest (a post-renderer's patch), as data
        "gpulint.loader.stream": ("text_documents",),
        # what a pod mounts at /dev/shm (its own volumes, or its serving runtime's)
        "gpulint.k8s.servingruntimes": ("shm_mount", "volume_media"),
        "gpulint.k8s.crds": ("missing_required", "operator_fields", "operator_releases"),
        "gpulint.k8s.operatorvalues": (
            "OperatorValues",
            "chart_component_keys",
            "chart_releases",
            "chart_value_keys",
            "chart_values_of",
        ),
        # the NVIDIA device plugin's configuration files and what its decoder refuses
        "gpulint.k8s.pluginconfig": ("Refusal", "device_plugin_refusals"),
        # JupyterHub's chart values: the settings KubeSpawner makes each user's pod from
        "gpulint.k8s.jupyterhub": ("Spawn", "chart_values", "spawns"),
        "gpulint.data": ("data_path",),
    },
    # The cluster: taints and tolerations, the nodes and what they offer, the evidence of
    # the run's files, the scheduler's filters.
    "cluster facts": {
        "gpulint.k8s.taints": (
            "TAINTS_OPTION",
            "Taint",
            "default_taints_assumed",
            "taints_from_options",
            "toleration_near_miss",
            "tolerates",
        ),
        "gpulint.cluster.model": ("Node",),
        "gpulint.cluster.catalog": ("builtin_catalog",),
        "gpulint.cluster.slices": ("class_key",),
        "gpulint.cluster.facts": (
            "accelerator_nodes",
            "accelerator_taints",
            "allocatable_names",
            "added_tolerations",
            "describe_offer",
            "describes_nodes",
            "labelled_nodes",
            "SelectedPool",
            "enforced_taints",
            "gpu_pool_selected",
            "largest_offer",
            "names_kueue_queue",
            "nodes_offering",
            "nvidia_nodes",
            "pool_label",
            "unoffered",
            "why_not",
        ),
        "gpulint.cluster.evidence": (
            "Evidence",
            "KnownTaint",
            "applicable",
            "certain_line",
            "names_node_taint",
            "taint_basis",
        ),
        "gpulint.cluster.podnodes": (
            "chosen_by_label",
            "gpu_label_resource",
            "label_says_yes",
            "pinned",
            "preferred_pin",
            "selected_size",
            "tpu_topology_chips",
        ),
        "gpulint.cluster.schedpod": ("sched_pod",),
        "gpulint.cluster.filters": (
            "Failure",
            "Unjudged",
            "feasibility",
            "fewest_untolerated",
            "fits_somewhere",
            "placement",
        ),
        "gpulint.cluster.nodeindex": ("Fewest", "TooLarge"),
    },
    # A fix: a Repair and its changes at document paths (gpulint turns them into edits).
    "fixes": {
        "gpulint.model": (
            "AddEntry",
            "AppendItem",
            "Change",
            "DeleteKey",
            "MoveKey",
            "RenameKey",
            "Repair",
        ),
    },
}

#: Names of the previous release, importable with a DeprecationWarning until the next one:
#: old name -> the name that replaces it, or ``None`` and the module that defines it (no
#: rule used it; copy it if yours does).
DEPRECATED: dict[str, tuple[str | None, str]] = {
    "almost": ("toleration_near_miss", "gpulint.k8s.taints"),
    "basis": ("taint_basis", "gpulint.cluster.evidence"),
    "judge": ("judge_resource_name", "gpulint.k8s.devicenames"),
    "largest": ("largest_offer", "gpulint.cluster.facts"),
    "option": ("flag_value", "gpulint.k8s.engines"),
    "queued": ("names_kueue_queue", "gpulint.cluster.facts"),
    "words": ("command_words", "gpulint.k8s.engines"),
    "Selected": (None, "gpulint.cluster.podnodes"),
    "describe_toleration": (None, "gpulint.k8s.taints"),
    "near_miss": (None, "gpulint.k8s.taints"),
}

#: Where each name is defined (from :data:`GROUPS`).
_WHERE: dict[str, str] = {
    name: module
    for modules in GROUPS.values()
    for module, names in modules.items()
    for name in names
}

__all__ = sorted(_WHERE)


if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        """A name of :data:`__all__`, imported from its module when first asked for."""
        module = _WHERE.get(name)
        if module is None:
            return _deprecated(name)
        import importlib

        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # asked once: the next lookup is a plain global
        return value

    def _deprecated(name: str) -> object:
        """A name of :data:`DEPRECATED`, with its warning each time it is imported."""
        if name not in DEPRECATED:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        import importlib
        import warnings

        new, module = DEPRECATED[name]
        why = f"use gpulint.api.{new}" if new is not None else "no rule used it"
        warnings.warn(
            f"gpulint.api.{name} is deprecated and leaves in the next release: {why}",
            DeprecationWarning,
            stacklevel=3,
        )
        return getattr(importlib.import_module(module), new or name)

    def __dir__() -> list[str]:
        return sorted(__all__)


# -- generated by `make generate` (tests/api_imports.py) from GROUPS and DEPRECATED:
# -- what mypy reads (the names above, and the deprecated ones). Do not edit.
if TYPE_CHECKING:
    from gpulint.cluster.catalog import (
        builtin_catalog as builtin_catalog,
    )
    from gpulint.cluster.evidence import (
        Evidence as Evidence,
        KnownTaint as KnownTaint,
        applicable as applicable,
        certain_line as certain_line,
        names_node_taint as names_node_taint,
        taint_basis as taint_basis,
    )
    from gpulint.cluster.facts import (
        SelectedPool as SelectedPool,
        accelerator_nodes as accelerator_nodes,
        accelerator_taints as accelerator_taints,
        added_tolerations as added_tolerations,
        allocatable_names as allocatable_names,
        describe_offer as describe_offer,
        describes_nodes as describes_nodes,
        enforced_taints as enforced_taints,
        gpu_pool_selected as gpu_pool_selected,
        labelled_nodes as labelled_nodes,
        largest_offer as largest_offer,
        names_kueue_queue as names_kueue_queue,
        nodes_offering as nodes_offering,
        nvidia_nodes as nvidia_nodes,
        pool_label as pool_label,
        unoffered as unoffered,
        why_not as why_not,
    )
    from gpulint.cluster.filters import (
        Failure as Failure,
        Unjudged as Unjudged,
        feasibility as feasibility,
        fewest_untolerated as fewest_untolerated,
        fits_somewhere as fits_somewhere,
        placement as placement,
    )
    from gpulint.cluster.model import (
        Node as Node,
    )
    from gpulint.cluster.nodeindex import (
        Fewest as Fewest,
        TooLarge as TooLarge,
    )
    from gpulint.cluster.podnodes import (
        Selected as Selected,
        chosen_by_label as chosen_by_label,
        gpu_label_resource as gpu_label_resource,
        label_says_yes as label_says_yes,
        pinned as pinned,
        preferred_pin as preferred_pin,
        selected_size as selected_size,
        tpu_topology_chips as tpu_topology_chips,
    )
    from gpulint.cluster.schedpod import (
        sched_pod as sched_pod,
    )
    from gpulint.cluster.slices import (
        class_key as class_key,
    )
    from gpulint.data import (
        data_path as data_path,
    )
    from gpulint.k8s.agents import (
        NVIDIA_CUDA_IMAGES as NVIDIA_CUDA_IMAGES,
        find_agent as find_agent,
        image_registry as image_registry,
        image_repository as image_repository,
        image_tag as image_tag,
    )
    from gpulint.k8s.cel import (
        check_selector_expression as check_selector_expression,
    )
    from gpulint.k8s.chartvalues import (
        app_template_values as app_template_values,
        in_chart_values as in_chart_values,
    )
    from gpulint.k8s.crds import (
        missing_required as missing_required,
        operator_fields as operator_fields,
        operator_releases as operator_releases,
    )
    from gpulint.k8s.devicenames import (
        Verdict as Verdict,
        judge_resource_name as judge_resource_name,
    )
    from gpulint.k8s.devices import (
        DeviceResource as DeviceResource,
        Registry as Registry,
        version_of as version_of,
    )
    from gpulint.k8s.dracount import (
        claimed_devices as claimed_devices,
        entry_devices as entry_devices,
        pod_claimed as pod_claimed,
    )
    from gpulint.k8s.drafields import (
        dra_opaque_configs as dra_opaque_configs,
        dra_selectors as dra_selectors,
    )
    from gpulint.k8s.draspec import (
        DRA_LIFECYCLE as DRA_LIFECYCLE,
        dns_label as dns_label,
        dns_subdomain as dns_subdomain,
        dra_object_problems as dra_object_problems,
        holds_placeholder as holds_placeholder,
        is_dra_object as is_dra_object,
    )
    from gpulint.k8s.engines import (
        RAY_KINDS as RAY_KINDS,
        SHELL_PROGRAMS as SHELL_PROGRAMS,
        TPU_ACCELERATOR as TPU_ACCELERATOR,
        TPU_DEVICES_PER_CHIP as TPU_DEVICES_PER_CHIP,
        Started as Started,
        Word as Word,
        command_words as command_words,
        find_engine as find_engine,
        flag_text as flag_text,
        flag_value as flag_value,
        has_flag as has_flag,
        int_value as int_value,
        kuberay_pod as kuberay_pod,
        literal_env as literal_env,
        malformed_option as malformed_option,
        may_start_engine as may_start_engine,
        option_name as option_name,
        runs_own_image as runs_own_image,
        shell_script as shell_script,
        started_by_command as started_by_command,
    )
    from gpulint.k8s.envvalues import (
        FromConfigMap as FromConfigMap,
        Source as Source,
        as_written as as_written,
        container_env as container_env,
        env_entries as env_entries,
        envfrom_configmaps as envfrom_configmaps,
        non_string_kind as non_string_kind,
    )
    from gpulint.k8s.jupyterhub import (
        Spawn as Spawn,
        chart_values as chart_values,
        spawns as spawns,
    )
    from gpulint.k8s.objects import (
        METADATA_AT_ROOT as METADATA_AT_ROOT,
        expression_key_path as expression_key_path,
        image_reference as image_reference,
        metadata_at_root as metadata_at_root,
        required_node_terms as required_node_terms,
        value_at as value_at,
    )
    from gpulint.k8s.operatorvalues import (
        OperatorValues as OperatorValues,
        chart_component_keys as chart_component_keys,
        chart_releases as chart_releases,
        chart_value_keys as chart_value_keys,
        chart_values_of as chart_values_of,
    )
    from gpulint.k8s.pluginconfig import (
        Refusal as Refusal,
        device_plugin_refusals as device_plugin_refusals,
    )
    from gpulint.k8s.podoptions import (
        CHART_POD_KEYS as CHART_POD_KEYS,
        NVIDIA_RUNTIME_CLASSES as NVIDIA_RUNTIME_CLASSES,
        chart_pod_options as chart_pod_options,
        nvidia_runtime_class as nvidia_runtime_class,
        runs_nvidia_runtime as runs_nvidia_runtime,
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
        completed_by_runtime as completed_by_runtime,
        container_entries as container_entries,
        container_gpu as container_gpu,
        extended_requests as extended_requests,
        format_amount as format_amount,
        gpu_demand as gpu_demand,
        is_extended_resource as is_extended_resource,
        is_placeholder as is_placeholder,
        is_standard_compute as is_standard_compute,
        resource_lists as resource_lists,
        shares_by_annotation as shares_by_annotation,
        show_value as show_value,
        spark_asks_for_gpus as spark_asks_for_gpus,
        wants_accelerator as wants_accelerator,
        whole_gpu_count as whole_gpu_count,
    )
    from gpulint.k8s.servingruntimes import (
        shm_mount as shm_mount,
        volume_media as volume_media,
    )
    from gpulint.k8s.shapes import (
        chart_gpu_blocks as chart_gpu_blocks,
        host_gpu_device as host_gpu_device,
        host_gpu_mounts as host_gpu_mounts,
    )
    from gpulint.k8s.taints import (
        TAINTS_OPTION as TAINTS_OPTION,
        Taint as Taint,
        default_taints_assumed as default_taints_assumed,
        describe_toleration as describe_toleration,
        near_miss as near_miss,
        taints_from_options as taints_from_options,
        tolerates as tolerates,
        toleration_near_miss as toleration_near_miss,
    )
    from gpulint.k8s.workloads import (
        Container as Container,
        K8sObject as K8sObject,
        PodSpec as PodSpec,
    )
    from gpulint.loader.stream import (
        text_documents as text_documents,
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
        near_field as near_field,
        one_typo_from as one_typo_from,
    )

    almost = toleration_near_miss
    basis = taint_basis
    judge = judge_resource_name
    largest = largest_offer
    option = flag_value
    queued = names_kueue_queue
    words = command_words
