"""The package's layers run one way (pyproject.toml, [tool.importlinter]), with no import hidden in a
function to dodge a cycle."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_layers_contract_holds():
    lint = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Contracts: 1 kept, 0 broken." in proc.stdout


def test_the_contract_names_every_module():
    import tomllib

    layers = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"][0]["layers"]
    named = {m.strip().removeprefix("jalapeno.") for layer in layers for m in layer.split("|")}
    modules = {p.stem for p in (ROOT / "jalapeno").glob("*.py") if p.stem != "__init__"}
    packages = {p.parent.name for p in (ROOT / "jalapeno").glob("*/__init__.py")}
    assert named == modules | packages


def test_no_module_of_the_package_is_imported_inside_a_function():
    late = []
    for path in sorted((ROOT / "jalapeno").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for fn in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").startswith("jalapeno")):
                    late.append(f"{path.relative_to(ROOT)}:{node.lineno}")
                elif isinstance(node, ast.Import) and any(a.name.startswith("jalapeno") for a in node.names):
                    late.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert late == []


def test_the_readme_public_api_runs_as_shown():
    """The README's Python block (the public API) runs as printed."""
    import re

    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```python\n(import jalapeno as jp\n.*?)```", readme, re.S)
    assert block, "the README shows the public API in a ```python block"
    namespace: dict = {}
    exec(compile(block.group(1), "README.md", "exec"), namespace)
    jp = namespace["jp"]
    assert {"chip", "model", "evaluate", "frontier", "claims"} <= set(jp.__all__)
    r = namespace["r"]
    assert float(r.tpot_s) > 0 and float(r.decode_step_s) == float(r.roofline_s + r.collectives_s + r.overhead_s)


def test_no_module_uses_a_private_name_of_another():
    """A name with a leading underscore stays in its module: what two modules share is public."""
    used = []
    for path in sorted((ROOT / "jalapeno").rglob("*.py")):
        tree = ast.parse(path.read_text())
        modules = set()  # the names this module binds to modules of the package
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").startswith("jalapeno")):
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        used.append(f"{path.relative_to(ROOT)}:{node.lineno}: imports {alias.name}")
                    modules.add(alias.asname or alias.name)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                used.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value.id}.{node.attr}")
    assert used == []


def test_the_package_uses_no_ctypes_and_no_polling_loop():
    """System calls come through libraries (renameat2, filelock, multiprocessing), and no module waits by
    sleeping in a loop: it blocks on what it waits for (a future, a lock, a process sentinel)."""
    found = []
    for path in sorted((ROOT / "jalapeno").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                found += [f"{path.relative_to(ROOT)}:{node.lineno}: ctypes" for n in names if n.split(".")[0] == "ctypes"]
            if isinstance(node, (ast.While, ast.For)):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Call) and getattr(inner.func, "attr", getattr(inner.func, "id", "")) == "sleep":
                        found.append(f"{path.relative_to(ROOT)}:{inner.lineno}: sleep in a loop")
    assert found == []
