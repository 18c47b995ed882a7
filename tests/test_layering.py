"""Imports go one way: problems -> metrics -> tree -> forest -> experiments -> cli."""

import ast
import pathlib

import pytest

PKG = pathlib.Path(__file__).resolve().parents[1] / "spotree"

# Lower numbers may not import higher ones. Helpers shared by all sit at 0.
LAYER = {
    "_validation": 0, "_categories": 0, "_params": 0, "_compat": 0, "_atomic": 0, "_numba": 0, "_schema": 0,
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
