"""The documentation: docstring examples run, the guide's examples run, and the
Sphinx site builds with warnings as errors (API pages, user guide, gallery).

The Sphinx builds run in a subprocess on a copy of ``docs/`` in a temporary
folder, because sphinx-gallery writes its generated pages next to its sources.
"""

import doctest
import importlib
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import spotree

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# Every module whose docstrings hold examples, with the least number of
# examples each holds, so that an example deleted or never collected fails.
DOCSTRING_MODULES = {
    "spotree.forest": 5,
    "spotree.boost": 5,
    "spotree.linear_model": 5,
    "spotree.metrics": 3,
    "spotree.tree._classes": 3,
    "spotree.tree._optimal": 3,
    "spotree.tree._persist": 5,
    "spotree.datasets._pyepo": 7,
    "spotree.problems._base": 5,
    "spotree.problems._linear": 5,
    "spotree.problems._shortest_path": 5,
    "spotree.problems._knapsack": 3,
    "spotree.problems._assignment": 5,
    "spotree.problems._news": 2,
    "spotree.problems._io": 2,
    "spotree.problems._cvxpy": 3,
}

# Optional packages some docstring examples import: those examples are left
# out where the package is not installed.
OPTIONAL_IN_EXAMPLES = ("networkx",)

needs_sphinx = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None
        for m in ("sphinx", "numpydoc", "sphinx_gallery", "pydata_sphinx_theme")),
    reason="the docs extra is not installed")


@pytest.mark.parametrize("name", sorted(DOCSTRING_MODULES))
def test_docstring_examples_run(name, tmp_path, monkeypatch):
    if name == "spotree.problems._cvxpy" and importlib.util.find_spec("cvxpy") is None:
        pytest.skip("cvxpy is not installed")
    monkeypatch.chdir(tmp_path)  # examples that save a model write here
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    old = np.get_printoptions()
    try:
        for test in finder.find(module, name, globs={}):
            if any(f"import {m}" in ex.source and importlib.util.find_spec(m) is None
                   for ex in test.examples for m in OPTIONAL_IN_EXAMPLES):
                continue  # an example of an optional extra the environment lacks
            runner.run(test, out=lambda s: sys.stdout.write(s))
    finally:
        np.set_printoptions(**old)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} failing examples in {name}"
    assert result.attempted >= DOCSTRING_MODULES[name], (name, result.attempted)


def test_every_module_with_examples_is_listed():
    # A module that gains examples must be added above, or they never run.
    listed = set(DOCSTRING_MODULES)
    found = set()
    for path in (ROOT / "spotree").rglob("*.py"):
        if ">>>" in path.read_text(encoding="utf-8"):
            rel = path.relative_to(ROOT).with_suffix("")
            found.add(".".join(rel.parts))
    assert found <= listed, sorted(found - listed)


def _sphinx(builder, tmp_path):
    src = tmp_path / "docs"
    shutil.copytree(DOCS, src, ignore=shutil.ignore_patterns(
        "_build", "generated", "auto_examples", "sg_execution_times.rst"))
    out = tmp_path / builder
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="ignore::DeprecationWarning")
    res = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", builder,
         str(src), str(out)],
        capture_output=True, text=True, env=env, timeout=600)
    return res, src, out


@needs_sphinx
def test_guide_examples_run(tmp_path):
    res, _, out = _sphinx("doctest", tmp_path)
    report = (out / "output.txt").read_text() if (out / "output.txt").exists() else ""
    assert res.returncode == 0, res.stderr[-3000:] + report[-3000:]
    assert "0 failures in tests" in report
    n_tests = int(report.split("Doctest summary")[1].split()[1])
    assert n_tests >= 150, n_tests  # the guide's examples were all collected


@needs_sphinx
def test_html_site_builds_without_warnings(tmp_path):
    res, src, out = _sphinx("html", tmp_path)
    assert res.returncode == 0, res.stderr[-5000:]
    for page in ("index.html", "getting_started.html", "api.html",
                 "user_guide/index.html", "auto_examples/index.html"):
        assert (out / page).is_file(), page
    # Every public class and function has an API page, under one of its paths.
    generated = {p.stem for p in (out / "generated").glob("*.html")}
    for modname in ("spotree", "spotree.problems", "spotree.metrics", "spotree.datasets",
                    "spotree.tree", "spotree.plotting"):
        module = importlib.import_module(modname)
        for name in module.__all__:
            if callable(getattr(module, name)):
                assert any(stem.rsplit(".", 1)[-1] == name for stem in generated), \
                    f"{modname}.{name} has no API page"
    # Every gallery example ran and drew its figures.
    scripts = sorted(p.stem for p in (src / "gallery_src").glob("plot_*.py"))
    assert len(scripts) >= 5
    images = list((src / "auto_examples" / "images").glob("sphx_glr_*.png"))
    for stem in scripts:
        assert any(f"sphx_glr_{stem}_" in p.name for p in images), stem
