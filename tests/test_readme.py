"""The README's Python examples run as written."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _python_blocks():
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_has_quickstart():
    blocks = _python_blocks()
    assert blocks, "README.md has no python example"
    assert len(blocks[0].strip().splitlines()) <= 15


def test_readme_python_blocks_run(capsys):
    from spotree._compat import PYEPO_INSTALLED

    for block in _python_blocks():
        if "pyepo" in block and not PYEPO_INSTALLED:
            continue  # an optional extra the test environment may lack
        namespace = {}
        exec(compile(block, "README.md", "exec"), namespace)
    lines = capsys.readouterr().out.splitlines()
    # The quickstart prints SPOT's and CART's test loss and leaves; check them
    # against a recomputation that solves the predicted costs afresh (not the
    # trees' stored decisions) and against the text that quotes them.
    from spotree import SPOTree, ShortestPath
    from spotree.datasets import make_shortest_path
    from spotree.metrics import normalized_spo_loss

    problem = ShortestPath(grid=(4, 4))
    X, C, B = make_shortest_path(1000, degree=6, noise=0.5, random_state=0, return_B=True)
    Xt, Ct = make_shortest_path(5000, degree=6, noise=0.5, B=B, random_state=1)
    text = (ROOT / "README.md").read_text()
    for line, criterion in zip(lines[:2], ("spo", "mse")):
        m = re.fullmatch(rf"{criterion}: normalized extra cost ([0-9.]+), (\d+) leaves", line)
        assert m, line
        tree = SPOTree(problem, criterion=criterion, max_depth=4, min_samples_leaf=20)
        tree = tree.fit(X[200:], C[200:]).prune(X[:200], C[:200])
        loss = normalized_spo_loss(Ct, tree.predict(Xt), problem=problem)
        assert float(m.group(1)) == pytest.approx(loss, abs=5e-5)
        assert int(m.group(2)) == tree.get_n_leaves() > 1
        assert f"{100 * loss:.1f}%" in text and f"{tree.get_n_leaves()} " in text


def test_readme_commands_match_ci():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    # The same test command, word for word, in both (two xdist workers).
    command = "python -m pytest -n 2"
    assert f'pip install -e ".[dev]" && {command}\n' in readme
    assert f"\n{command}\n" in ci and '".[dev]"' in ci
    assert "spotree reproduce shortest-path --quick" in readme
