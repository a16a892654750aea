"""DRA CEL selectors (GPU064) as a user sees them: each finding at its place in the file,
whatever the scalar's style (a folded block of plain lines too), a fallback that says where
in the expression when the file's text cannot show it, and the CEL parser imported only for
a file that has a selector."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import gpulint_in_process

CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: h100.example.com
spec:
  selectors:
  - cel:
      expression: {expression}
"""


def _findings(tmp_path: Path, text: str) -> list[dict]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "class.yaml").write_text(text, encoding="utf-8")
    proc = gpulint_in_process("check", "-f", "json", "--isolated", "class.yaml", cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    return [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "GPU064"]


def test_a_literal_block_maps_each_line(tmp_path: Path) -> None:
    text = CLASS.format(
        expression="|\n"
        "        device.driver == 'gpu.nvidia.com' &&\n"
        "        device.attributes['gpu.nvidia.com'].productNam == 'NVIDIA H100'\n"
    )
    (finding,) = _findings(tmp_path, text)
    assert (finding["line"], finding["column"]) == (10, 45)
    assert finding["severity"] == "warning"
    assert "did you mean productName?" in finding["help"]


def test_a_double_quoted_scalar_maps_its_column(tmp_path: Path) -> None:
    text = CLASS.format(
        expression="\"device.capacity['gpu.nvidia.com'].memory >= quantity('8Gi')\""
    )
    (finding,) = _findings(tmp_path, text)
    assert (finding["line"], finding["column"]) == (8, 61)
    assert finding["severity"] == "error"
    assert "compareTo" in finding["help"]


def test_a_folded_block_of_plain_lines_maps_through_its_folds(tmp_path: Path) -> None:
    text = CLASS.format(
        expression=">-\n        device.driver == 'gpu.nvidia.com' &&\n        device.drivr == 'x'\n"
    )
    (finding,) = _findings(tmp_path, text)
    assert (finding["line"], finding["column"]) == (10, 16)  # drivr, on the second line
    assert "undefined field 'drivr'" in finding["message"]
    assert "of the value" not in finding["message"]


def test_a_folded_block_with_a_kept_line_break_stays_on_the_value(tmp_path: Path) -> None:
    # A blank line inside a folded block keeps a line break: the lines joined by spaces do
    # not spell the value, so the finding stays on it and says where.
    text = CLASS.format(
        expression=">-\n        device.driver == 'gpu.nvidia.com' &&\n\n"
        "        device.drivr == 'x'\n"
    )
    (finding,) = _findings(tmp_path, text)
    assert (finding["line"], finding["column"]) == (8, 19)  # the value's first character
    assert "(at 2:8 of the value" in finding["message"]


def test_a_deeply_nested_expression_is_checked_without_recursion(tmp_path: Path) -> None:
    depth = 3000
    text = CLASS.format(expression="'" + "(" * depth + "device.driver" + ")" * depth + "'")
    (finding,) = _findings(tmp_path, text)
    assert "must evaluate to bool" in finding["message"]


def test_an_expression_over_10_ki_is_rejected_unparsed(tmp_path: Path) -> None:
    long = " || ".join(["device.driver == 'gpu.nvidia.com'"] * 400)
    (finding,) = _findings(tmp_path, CLASS.format(expression=f'"{long}"'))
    assert "more than its limit of 10240" in finding["message"]


_IMPORTED = """\
import sys
from gpulint.cli import entry
sys.argv = ["gpulint", "check", "--isolated", "-q", sys.argv[1]]
try:
    entry.console()
except SystemExit:
    pass
print("celpy" in sys.modules, "lark" in sys.modules)
"""


def _imports_cel(tmp_path: Path, text: str) -> str:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "m.yaml").write_text(text, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORTED, "m.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return proc.stdout.strip().splitlines()[-1]


def test_the_cel_parser_is_imported_only_for_a_selector(tmp_path: Path) -> None:
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "  - name: c\n    image: busybox\n"
    )
    assert _imports_cel(tmp_path, pod) == "False False"
    selector = CLASS.format(expression="device.driver == 'gpu.nvidia.com'")
    assert _imports_cel(tmp_path, selector) == "True True"


def test_a_string_method_given_another_type_is_rejected_on_an_attribute(tmp_path: Path) -> None:
    # Attribute values are dyn, but only strings have startsWith, and it takes a string.
    text = CLASS.format(
        expression="\"device.attributes['gpu.nvidia.com'].productName.startsWith(1)\""
    )
    (finding,) = _findings(tmp_path, text)
    assert finding["severity"] == "error"
    assert "no matching overload for 'startsWith' applied to 'dyn.(int)'" in finding["message"]
    quiet = CLASS.format(
        expression="device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H')"
    )
    assert _findings(tmp_path, quiet) == []


def test_the_standard_domain_holds_names_of_any_driver(tmp_path: Path) -> None:
    """Any driver may publish its own names in resource.kubernetes.io (a memory driver's
    pageSize and hugeTLB): no warning for them; a near miss of a standard name is info."""
    text = CLASS.format(
        expression='device.driver == "dra.memory" && device.attributes["resource.kubernetes.io"]'
        '.pageSize\n        == "4Ki" && device.attributes["resource.kubernetes.io"]'
        ".hugeTLB == false"
    )
    assert _findings(tmp_path, text) == []
    text = CLASS.format(
        expression="\"device.attributes['resource.kubernetes.io'].pcieroot == 'pci0000:00'\""
    )
    (finding,) = _findings(tmp_path, text)
    assert finding["severity"] == "info"
    assert "did you mean pcieRoot?" in finding["message"] + " " + (finding.get("help") or "")
