"""Imports go one way: problems -> metrics -> tree -> forest -> experiments -> cli."""

import ast
import pathlib

import pytest

PKG = pathlib.Path(__file__).resolve().parents[1] / "spotree"

# Lower numbers may not import higher ones. Helpers shared by all sit at 0.
LAYER = {
    "_validation": 0, "_categories": 0, "_params": 0, "_compat": 0, "_atomic": 0, "_numba": 0, "_schema": 0, "_ridge": 0, "_text": 0,
    "problems": 1, "metrics": 2, "datasets": 2, "tree": 3, "linear_model": 3, "forest": 4,
    "boost": 4,
    "plotting": 5, "experiments": 5, "cli": 6, "__main__": 6,
}


def _layer(module_path):
    first = module_path.relative_to(PKG).parts[0].removesuffix(".py")
    return first, LAYER.get(first)


def _imported_spotree_modules(path):
    tree = ast.parse(path.read_text())
    rel_parts = path.relative_to(PKG).parts
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if node.module and node.module.startswith("spotree."):
                    yield node.module.split(".")[1]
                continue
            # Relative import: resolve against the importing file's package.
            base = list(rel_parts[:-1])
            up = node.level - 1
            base = base[:len(base) - up] if up else base
            target = base + (node.module.split(".") if node.module else [])
            if target:
                yield target[0]
            else:
                for alias in node.names:
                    yield alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("spotree."):
                    yield alias.name.split(".")[1]


FILES = sorted(p for p in PKG.rglob("*.py") if p.name != "__init__.py" or p.parent != PKG)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PKG)))
def test_imports_go_one_way(path):
    name, layer = _layer(path)
    assert layer is not None, f"{name} has no layer in LAYER; add it"
    for target in _imported_spotree_modules(path):
        target = target.removesuffix(".py")
        if target not in LAYER or target == name:
            continue
        assert LAYER[target] <= layer, (
            f"spotree/{path.relative_to(PKG)} (layer {name}) imports spotree.{target}, "
            "a higher layer")


def _submodules_imported_by_init(package_dir):
    """First components of the relative imports of ``package_dir/__init__.py``."""
    out = set()
    for node in ast.walk(ast.parse((package_dir / "__init__.py").read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.add(node.module.split(".")[0])
            else:
                out.update(alias.name for alias in node.names)
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PKG)))
def test_no_module_imports_the_init_of_a_package_that_imports_it(path):
    """``from . import LinearProgram`` in problems/_knapsack.py reached up into
    problems/__init__.py, which imports _knapsack: import a name from the module that
    defines it. (The CLI may import spotree's own __init__, which does not import it.)"""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level >= 1 and node.module is None:
            base = path.parent
            for _ in range(node.level - 1):
                base = base.parent
            branch = path.relative_to(base).parts[0].removesuffix(".py")
            for alias in node.names:
                if ((base / f"{alias.name}.py").is_file()
                        or (base / alias.name / "__init__.py").is_file()):
                    continue  # a module, not a name from the __init__
                assert branch not in _submodules_imported_by_init(base), (
                    f"spotree/{path.relative_to(PKG)} imports {alias.name!r} from "
                    f"{base.relative_to(PKG.parent)}/__init__.py, which imports it back")


def test_only_the_highs_module_imports_highspy():
    # problems/_highs.py is the one place that talks to HiGHS (model building,
    # runs, Ctrl-C handling): no other module imports highspy.
    pkg = PKG
    offenders = []
    for path in pkg.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n.split(".")[0] == "highspy" for n in names):
                offenders.append(str(path.relative_to(pkg)))
    assert sorted(set(offenders)) == ["problems/_highs.py"]
