"""The import-linter contracts hold, and every kernel module is placed in a layer."""

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def contracts():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


LINT = ("import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filename=sys.argv[1], no_cache=True))")


def test_import_contracts_are_kept():
    done = subprocess.run([sys.executable, "-c", LINT, str(ROOT / "pyproject.toml")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert "Contracts:" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "BROKEN" not in done.stdout


def test_every_kernel_module_has_a_layer():
    layers = next(c for c in contracts() if c["type"] == "layers")["layers"]
    placed = {name.strip() for layer in layers for name in layer.replace("|", ":").split(":")}
    kernel = ROOT / "schedkit"
    found = {f"schedkit.{p.stem}" for p in kernel.glob("*.py") if p.stem != "__init__"}
    found |= {f"schedkit.{p.name}" for p in kernel.iterdir() if (p / "__init__.py").is_file()}
    assert found - placed == set(), f"modules outside every layer: {sorted(found - placed)}"


def test_data_layers_may_not_import_a_solver():
    forbidden = next(c for c in contracts() if c["type"] == "forbidden")
    assert {"pyomo", "highspy"} <= set(forbidden["forbidden_modules"])
    assert {"schedkit.problem", "schedkit.schedule", "schedkit.timing", "schedkit.blocks",
            "schedkit.validate", "schedkit.reductions"} <= set(forbidden["source_modules"])


def test_no_import_cycles_between_kernel_modules():
    import grimp
    import networkx as nx

    # Imports only a type checker sees (TYPE_CHECKING) are not cycles at run time.
    graph = grimp.build_graph("schedkit", exclude_type_checking_imports=True)
    edges = nx.DiGraph()
    for module in graph.modules:
        for target in graph.find_modules_directly_imported_by(module):
            edges.add_edge(module, target)
    cycles = [sorted(c) for c in nx.strongly_connected_components(edges) if len(c) > 1]
    assert cycles == [], f"import cycles: {cycles}"


def test_the_heuristics_never_import_the_milp():
    # (the plug-in folder is installed as schedkit.heuristics, outside the graph import-linter
    # walks: its imports are read here; a formulation's meaning is schedkit.semantics)
    import ast

    found = []
    for path in sorted((ROOT / "heuristics").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):  # (``from schedkit import milp`` too)
                names = [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            found += [f"{path.name}: {n}" for n in names if n == "schedkit.milp" or n.startswith("schedkit.milp.")]
    assert found == []
