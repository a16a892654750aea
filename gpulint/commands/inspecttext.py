"""``gpulint inspect``'s text form: one line per workload, pod spec and container, every
line escaped (:func:`gpulint.util.textsafe.escape_line`).

The report is :class:`gpulint.commands.inspect.InspectReport`'s ``files`` (plain data,
its JSON form); a rendered chart's or overlay's objects name the template, values or patch
line they came from (``source``).
"""

from __future__ import annotations

from typing import Any

from gpulint.cluster.evidence import platform_name
from gpulint.util.textsafe import escape_line, lead


def as_text(
    files: list[dict[str, Any]],
    cluster: dict[str, Any],
    picture: list[str],
    s: dict[str, int],
) -> str:
    """The report (its JSON form's ``files``, ``cluster`` and ``summary``, and the
    picture's lines) as text."""
    lines: list[str] = []
    for entry in files:
        path = lead(entry["path"])
        for problem in entry["problems"]:
            lines.append(f"{path}: not inspected: {problem}")
        if entry.get("rendered"):
            # Lines and columns below are the rendered output's, but for the "from" places.
            lines.append(f"{path}: rendered with `{entry['rendered']}`")
        for w in entry["workloads"]:
            lines.append(_workload_line(path, w))
            if w.get("source"):
                lines.append(f"  from {_source(w['source'])}")
            if not w["pods"]:
                lines.append("    no pod spec found at the table's paths")
            for pod in w["pods"]:
                lines.extend(_pod_lines(pod))
        for u in entry["unrecognised"]:
            keys = ", ".join(f"{k['path']} (line {k['line']})" for k in u["gpu_keys"])
            lines.append(
                f"{path}:{u['line']}:{u['column']}: {u['kind']}/{u['name'] or '?'} "
                f"({u['apiVersion']}) is not a known workload kind, but has GPU resources at "
                f"{keys}; add a workloads row for it if they are container requests"
            )
    platform = cluster.get("platform")
    if platform is not None and platform["name"] != "generic":  # generic: nothing to say
        lines.append(f"platform {platform_name(platform['name'])}, from {platform['from']}")
    lines.extend(picture)
    lines.append(
        f"{s['workloads']} workload{'s' if s['workloads'] != 1 else ''}, "
        f"{s['pod_specs']} pod spec{'s' if s['pod_specs'] != 1 else ''} "
        f"({s['gpu_pod_specs']} with a GPU request) in {s['files']} "
        f"file{'s' if s['files'] != 1 else ''}."
    )
    # Every line is built from gpulint's own words (no control characters) and values from
    # the manifests: escaping the whole line escapes exactly those values.
    return "\n".join(escape_line(line) for line in lines) + "\n"


def _workload_line(path: str, w: dict[str, Any]) -> str:
    if w["kind"] is None:  # a chart's values file read as written: no object
        return f"{path}:{w['line']}:{w['column']}: a chart's values (pod specs found by shape)"
    where = f", namespace {w['namespace']}" if w["namespace"] else ""
    if w["found_by"] == "shape":
        row = ", no workload row: pod specs found by shape"
    else:
        row = "" if w["table_row"] == "built-in" else f", row from {w['table_row']}"
    return (
        f"{path}:{w['line']}:{w['column']}: {w['kind']}/{w['name'] or '?'} "
        f"({w['apiVersion']}{where}{row})"
    )


def _pod_lines(pod: dict[str, Any]) -> list[str]:
    what = {"pod": "pod spec", "container": "container", "resources": "resources"}[pod["location"]]
    named = f" [{pod['name']}]" if pod["name"] else ""
    by_shape = ", found by shape" if pod["found_by"] == "shape" else ""
    head = f"  {what} {pod['path']}{named} (line {pod['line']}, column {pod['column']}{by_shape})"
    if pod["embedded_object"]:
        e = pod["embedded_object"]
        head += f" in embedded {e['kind']} ({e['apiVersion']}) at {e['path']}"
    out = [head]
    for c in pod["containers"]:
        requests = ", ".join(f"{k}: {v}" for k, v in c["gpu_requests"].items())
        if c.get("dra_claims"):
            requests += (", " if requests else "") + "DRA claims " + ", ".join(c["dra_claims"])
        requests = requests or "no GPU"
        role = "" if c["role"] == "container" else f" ({c['role']})"
        out.append(f"    {c['name']}{role} line {c['line']}: {requests}")
        if c.get("source"):
            out.append(f"      from {_source(c['source'])}")
    effective = ", ".join(f"{k}: {v}" for k, v in pod["effective_gpu_request"].items())
    if not effective:
        effective = "not evaluated" if pod["unevaluated"] else "none"
    elif pod["unevaluated"]:
        effective += " (plus values not evaluated)"
    out.append(f"    effective GPU request: {effective}")
    for u in pod["unevaluated"]:
        out.append(
            f"    not evaluated: {u['resource']}: {u['value']} in {u['container'] or '?'} "
            f"({u['reason']}, line {u['line']})"
        )
    for c in pod["dra_claims"]:
        out.append(_claim_line(c))
        for r in c.get("requests", ()):
            count = "all matching devices" if r["devices"] is None else f"{r['devices']} device"
            count += "s" if r["devices"] not in (None, 1) else ""
            # An accelerator class says enough by its name; anything else says what it is.
            what = "; ".join(
                _class_devices(d) for d in r.get("resolves_to", ()) if d["devices"] != "accelerator"
            )
            out.append(
                f"      request {r['name']}: {count} of {' or '.join(r['device_classes'])}"
                + (f" ({what})" if what else "")
            )
            out.extend(_available_lines(r.get("available")))
    for hint in pod["hints"]:
        out.append(f"    hint: {hint}")
    t = pod["tolerations"]
    if pod["location"] == "pod":
        if t is None:
            out.append("    tolerations: none")
        else:
            source = f" from {t['path']}" if t["inherited"] else ""
            out.append(f"    tolerations: {t['count']}{source}")
    p = pod.get("platform")
    if p is not None and p["line"] is not None:  # the run's own platform is printed once
        out.append(f"    platform: {platform_name(p['name'])}, from {p['from']} (line {p['line']})")
    out.extend(_scheduling_lines(pod.get("scheduling")))
    return out


def _claim_line(c: dict[str, Any]) -> str:
    """A pod's DRA claim entry: a GPU claim as before, any other claim with what it is."""
    if c["kind"] is None:
        return f"    DRA claim {c['name']!r}: names no claim or template (line {c['line']})"
    target = f"{c['kind']} {c['claim']}"
    if c["device_class"] is not None:
        return (
            f"    GPU through DRA: claim {c['name']!r} -> {target} "
            f"(device class {c['device_class']}, line {c['line']}; defined at "
            f"{c.get('defined_at', '?')})"
        )
    if c["defined_at"] is None:
        where = (
            "defined differently in two files of the project"
            if c.get("resolved") == "ambiguous"
            else "not in this project: it may exist in the cluster"
        )
    else:
        where = f"defined at {c['defined_at']}"
    return f"    DRA claim {c['name']!r} -> {target} (line {c['line']}; {where})"


def _class_devices(d: dict[str, Any]) -> str:
    """What a DeviceClass hands out, in words."""
    drivers = f" of driver {', '.join(d['drivers'])}" if d["drivers"] else ""
    if d["devices"] == "other":
        return f"{d['device_class']}: devices{drivers}, not accelerators"
    return f"{d['device_class']}: not known what it hands out"


def _available_lines(found: dict[str, Any] | None) -> list[str]:
    """The published devices a DRA request may get (``--cluster`` with ResourceSlices)."""
    if found is None:
        return []
    if found["selected_by"] is None:
        return ["        devices: not known (a DeviceClass whose devices gpulint cannot tell)"]
    if not found["pools"]:
        return [f"        devices: none published ({found['selected_by']})"]
    out = [f"        devices: {found['count']} published ({found['selected_by']})"]
    for pool in found["pools"]:
        names = ", ".join(pool["devices"][:8]) + (", ..." if len(pool["devices"]) > 8 else "")
        nodes = ", ".join(pool["nodes"])
        more = pool["node_count"] - len(pool["nodes"])
        nodes += f" and {more} more" if more > 0 else ""
        node_word = "node" if pool["node_count"] == 1 else "nodes"
        out.append(
            f"          pool {pool['pool'] or '?'} ({pool['driver']}): {pool['count']} "
            f"({names}) on {node_word} {nodes}"
        )
    return out


def _scheduling_lines(s: dict[str, Any] | None) -> list[str]:
    if s is None:
        return []
    if s["fitting"]:
        head = f"    scheduling: fits {s['fitting']} of {s['nodes']} nodes"
    else:
        head = f"    scheduling: {s['message']}"
    out = [head]
    for g in s["groups"]:
        nodes = f"{g['nodes']} node{'s' * (g['nodes'] != 1)}"
        if g["pool"] and not g["name"].startswith("pool "):
            nodes = f"pool {g['pool']}, {nodes}"
        if g["fits"]:
            out.append(f"      {g['name']} ({nodes}): fits")
            continue
        why = ", ".join(g["reasons"])
        fix = f"; would fit: {'; '.join(g['fixes'])}" if g["fixes"] else ""
        out.append(f"      {g['name']} ({nodes}): {why} ({g['plugin']}){fix}")
    return out


def _source(source: dict[str, Any]) -> str:
    """Where a rendered object or value came from: a template, values or patch line, or
    the chart's or overlay's own file when no closer line can be named (saying so)."""
    where = f"{lead(source['path'])}:{source['line']}:{source['column']}"
    said = [source["note"]] if source["note"] else []
    if source["fallback"]:
        said.insert(0, "a fallback: no closer line could be named")
    return f"{where} ({'; '.join(said)})" if said else where
