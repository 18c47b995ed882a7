"""spotree/__init__.py: the public names load on first use (PEP 562).

`import spotree` must not import scikit-learn, numba, pandas or scipy (together
~1.5 s of start-up), yet every public name must be the object its submodule
defines, as when the package imported them all eagerly.
"""

import ast
import importlib
import json
import os
import pathlib
import subprocess
import sys

import pytest

import spotree

ROOT = pathlib.Path(__file__).resolve().parents[1]

# Heavy imports that `import spotree` must not trigger. numpy is here too: alone
# it is ~0.1 s, most of what a lazy `import spotree` would cost.
HEAVY = ("sklearn", "numba", "pandas", "scipy", "scipy.optimize", "numpy")

# The public API as the eager __init__ defined it: submodule -> names imported from it.
PUBLIC_FROM = {
    "problems": ["Assignment", "CallableProblem", "DecisionProblem", "FiniteDecisions", "Knapsack",
                 "LinearProgram", "ShortestPath"],
    "tree": ["OptimalSPOTree", "SPOTree", "export_text", "load"],
    "forest": ["SPOForest", "tune_max_features"],
    "linear_model": ["SPOPlusLinear"],
    "boost": ["SPOBoost"],
}
PUBLIC_SUBMODULES = ["datasets", "metrics", "problems"]
# Bound as attributes by the eager imports: code may use e.g. `spotree.tree.SPOTree`.
OTHER_SUBMODULES = ["boost", "forest", "linear_model", "tree"]
# Every public name of the package, as dir() lists it (besides dunders).
PUBLIC = ({n for names in PUBLIC_FROM.values() for n in names} | set(PUBLIC_SUBMODULES)
          | set(OTHER_SUBMODULES))


def fresh_python(code):
    """Run ``code`` in a new interpreter that imports this checkout; its stdout as JSON."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=120)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_import_spotree_imports_nothing_heavy():
    out = fresh_python(
        "import json, sys\n"
        "import spotree\n"
        "names = dir(spotree)\n"
        f"print(json.dumps([sys.modules.get(m) is not None for m in {HEAVY!r}] "
        "+ [spotree.__file__, spotree.__version__, names]))")
    loaded, (path, version, names) = out[:-3], out[-3:]
    assert pathlib.Path(path).resolve() == ROOT / "spotree" / "__init__.py"
    assert version == spotree.__version__
    assert [m for m, was in zip(HEAVY, loaded) if was] == []
    # dir() lists the names before they load (nor does it load them), and no
    # other name but the module's dunders: not the lazy machinery (importlib,
    # TYPE_CHECKING, the name maps).
    assert set(spotree.__all__ + OTHER_SUBMODULES + ["__version__"]) <= set(names)
    assert names == sorted(names)
    assert {n for n in names if not n.startswith("__")} == PUBLIC


def test_dir_lists_public_names_and_loaded_public_submodules_only():
    # After names, subpackages and private modules have loaded (numba's
    # wrapper, the validation helpers), dir() still lists public names only,
    # now with the public subpackages imported since.
    out = fresh_python(
        "import json\n"
        "import spotree, spotree.experiments, spotree.cli\n"
        "spotree.SPOTree, spotree.Knapsack\n"
        "import spotree._numba\n"
        "print(json.dumps(dir(spotree)))")
    assert {n for n in out if not n.startswith("__")} == PUBLIC | {"experiments", "cli"}
    assert {"__version__", "__all__", "__doc__", "__name__"} <= set(out)


def test_a_name_loads_its_submodule_and_no_other():
    # SPOTree needs scikit-learn, but not the forest, boosting or linear model.
    out = fresh_python(
        "import json, sys\n"
        "import spotree\n"
        "before = 'spotree.tree' in sys.modules\n"
        "cls = spotree.SPOTree\n"
        "print(json.dumps([before, cls.__module__, 'sklearn' in sys.modules] + "
        "[m in sys.modules for m in ('spotree.forest', 'spotree.boost', "
        "'spotree.linear_model')]))")
    assert out == [False, "spotree.tree._classes", True, False, False, False]


def test_star_import_binds_exactly_the_public_names_in_a_fresh_interpreter():
    out = fresh_python(
        "import json\n"
        "ns = {}\n"
        "exec('from spotree import *', ns)\n"
        "import spotree.tree, spotree.forest, spotree.problems\n"
        "print(json.dumps([sorted(k for k in ns if k != '__builtins__'),\n"
        "    ns['SPOTree'] is spotree.tree.SPOTree, ns['SPOForest'] is spotree.forest.SPOForest,\n"
        "    ns['Knapsack'] is spotree.problems.Knapsack]))")
    assert out[0] == sorted(spotree.__all__)
    assert out[1:] == [True, True, True]


def test_all_lists_the_eager_api():
    expected = [n for names in PUBLIC_FROM.values() for n in names] + PUBLIC_SUBMODULES
    assert sorted(spotree.__all__) == sorted(expected)
    assert len(set(spotree.__all__)) == len(spotree.__all__)


@pytest.mark.parametrize("module, name", [(m, n) for m, names in PUBLIC_FROM.items()
                                          for n in names])
def test_each_name_is_its_submodules_object(module, name):
    sub = importlib.import_module(f"spotree.{module}")
    obj = getattr(spotree, name)
    assert obj is getattr(sub, name)
    # The module __getattr__ itself, not a binding left by an earlier import.
    assert spotree.__getattr__(name) is obj
    # ... and the very object defined where its __module__ says.
    assert obj is getattr(importlib.import_module(obj.__module__), obj.__qualname__)
    ns = {}
    exec(f"from spotree import {name}", ns)
    assert ns[name] is obj


@pytest.mark.parametrize("name", PUBLIC_SUBMODULES + OTHER_SUBMODULES)
def test_submodules_are_attributes(name):
    sub = importlib.import_module(f"spotree.{name}")
    assert getattr(spotree, name) is sub
    # Importing a submodule binds it on the package anyway: ask __getattr__ itself.
    assert spotree.__getattr__(name) is sub


def test_a_loaded_name_is_kept_in_the_module():
    obj = spotree.SPOForest
    # Later lookups find it in the module's namespace, without __getattr__.
    assert vars(spotree)["SPOForest"] is obj


def test_an_unknown_name_is_an_attribute_error_naming_it():
    with pytest.raises(AttributeError, match="module 'spotree' has no attribute 'SPOTrees'"):
        spotree.SPOTrees  # noqa: B018
    assert not hasattr(spotree, "no_such_thing")
    with pytest.raises(ImportError, match="SPOTrees"):
        exec("from spotree import SPOTrees", {})


def test_type_checking_imports_match_the_lazy_map():
    """What type checkers see (the ``if TYPE_CHECKING:`` imports) is what loads at run time."""
    tree = ast.parse((ROOT / "spotree" / "__init__.py").read_text())
    blocks = [node for node in tree.body if isinstance(node, ast.If)
              and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"]
    assert len(blocks) == 1
    names, submodules = {}, set()
    for node in blocks[0].body:
        assert isinstance(node, ast.ImportFrom) and node.level == 1
        if node.module is None:
            submodules.update(a.name for a in node.names)
        else:
            names.update({a.name: node.module for a in node.names})
    assert names == spotree._LAZY
    assert submodules == set(spotree._SUBMODULES)
    assert names == {n: m for m, ns in PUBLIC_FROM.items() for n in ns}
    assert submodules == set(PUBLIC_SUBMODULES + OTHER_SUBMODULES)
