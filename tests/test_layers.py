"""The packages of rankcut import one another one way only (docs/architecture.md, "Layers").

Every ``import`` of every module under src/rankcut counts, those inside functions included (a lazy
import is still a dependency), and ``from rankcut import X`` counts as an import of ``rankcut.X``
when X is a module or package, else of the top-level package.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "rankcut"

#: lowest first: a unit imports only units of lower layers (certify: none at all)
LAYERS: list[set[str]] = [
    {"rankcut", "errors"},
    {"_util", "_words", "_progress"},
    {"data"},
    {"metrics", "significance"},
    {"nn"},
    {"cutters"},
    {"parallel"},
    {"evaluation"},
    {"plots"},
    {"certify"},
    {"audit"},
    {"review"},   # rankcut.review.session drives the audit workflow and registers its screener there
    {"serve"},
    {"cli"},
    {"__main__"},   # python -m rankcut: runs the cli
]


def _unit(module: str) -> str:
    """The package (or top-level module) of rankcut that ``module`` belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "rankcut"


def _is_unit(name: str) -> bool:
    return (SRC / name).is_dir() or (SRC / f"{name}.py").is_file()


def _imports() -> dict[str, set[str]]:
    """``{unit: units it imports}`` over every import statement under src/rankcut."""
    graph: dict[str, set[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        package = module if parts[-1] == "__init__" else module.rpartition(".")[0]
        source = _unit(module)
        targets = graph.setdefault(source, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, *([node.module] if node.module else [])])
                if base == "rankcut":
                    names = [f"rankcut.{a.name}" if _is_unit(a.name) else "rankcut" for a in node.names]
                else:
                    names = [base]
            for name in names:
                if name == "rankcut" or name.startswith("rankcut."):
                    target = _unit(name)
                    if target != source:
                        targets.add(target)
    return graph


def test_every_unit_has_a_layer() -> None:
    placed = set().union(*LAYERS)
    assert set(_imports()) <= placed, sorted(set(_imports()) - placed)


def test_the_package_graph_is_acyclic() -> None:
    try:
        tuple(TopologicalSorter(_imports()).static_order())
    except CycleError as exc:
        raise AssertionError(f"import circle between packages: {exc.args[1]}") from None


def test_imports_go_down_the_layers() -> None:
    layer = {unit: i for i, units in enumerate(LAYERS) for unit in units}
    upward = sorted((a, b) for a, targets in _imports().items() for b in targets
                    if layer[b] >= layer[a])
    assert not upward, f"imports that go up or sideways: {upward}"


def test_certify_imports_no_other_rankcut_package() -> None:
    assert _imports().get("certify", set()) == set()


def test_the_scan_sees_lazy_imports() -> None:
    # cutters import torch-backed rankcut.nn modules inside fit/predict only
    assert "nn" in _imports()["cutters"]


#: what the stateful side builds on (docs/architecture.md, "Layers"): the linear order above
#: would also let audit import the cutters or the networks
BUILDS_ON = {
    "audit": {"certify", "data", "_util", "_words", "_progress", "errors", "rankcut"},
    "review": {"audit", "certify", "data", "_util", "_words", "_progress", "errors", "rankcut"},
    "serve": {"audit", "review", "certify", "data", "_util", "_words", "_progress", "errors", "rankcut"},
}


def test_the_audit_side_builds_on_certify_and_data_only() -> None:
    graph = _imports()
    beyond = {unit: sorted(graph.get(unit, set()) - allowed) for unit, allowed in BUILDS_ON.items()}
    assert not any(beyond.values()), f"imports beyond what the layer builds on: {beyond}"


def test_a_design_module_imports_no_other_design() -> None:
    """One audit design (family) per module behind one protocol: what two designs share lives in
    designs/base.py (the interleaved design took its openings check from the sequential one)."""
    designs = SRC / "audit" / "designs"
    modules = {p.stem for p in designs.glob("*.py")} - {"__init__", "base"}
    crossing = []
    for name in sorted(modules):
        for node in ast.walk(ast.parse((designs / f"{name}.py").read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                other = node.module.removeprefix("rankcut.audit.designs.")
                if other in modules and other != name:
                    crossing.append((name, other))
    assert not crossing, f"design modules importing another design: {crossing}"


def test_the_page_reads_a_design_only_through_its_own_desk() -> None:
    """The labelling page asks a design's desk (serve/desks.py, by name): the base desk and the app
    import no design module, and each design's desk imports its own design only (the base desk
    once branched on design names and imported the sequential and interleaved designs' internals)."""
    designs = {p.stem for p in (SRC / "audit" / "designs").glob("*.py")} - {"__init__", "base"}
    own = {"sequential_desk": {"sequential"}, "interleaved_desk": {"interleaved"}}
    found: dict[str, set[str]] = {}
    for path in sorted((SRC / "serve").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            if isinstance(node, ast.ImportFrom):   # from rankcut.audit.designs import sequential
                names += [f"{node.module}.{a.name}" for a in node.names]
            for name in names:
                design = name.removeprefix("rankcut.audit.designs.")
                if design != name and design in designs:
                    found.setdefault(path.stem, set()).add(design)
    assert found == own, f"design modules the page imports, by serve module: {found}"
