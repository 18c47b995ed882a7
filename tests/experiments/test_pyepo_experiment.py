"""The PyEPO comparison (`spotree reproduce pyepo`): grid, summary, regret, cache, figure."""

import os
import re

import numpy as np
import pytest

from spotree import _compat
from spotree.datasets import make_pyepo_shortest_path
from spotree.experiments import PYEPO_METHODS, make_grid, run_experiment
from spotree.experiments._configs import pyepo_skip_note
from spotree.experiments._tables import read_csv, summary_markdown

TINY = dict(problems=["shortest-path", "knapsack"], n_train=[30], degrees=[1, 6],
            seeds=[0, 1], methods=["LS", "SPOTree"], progress=False)


def no_time(rows):
    return [{k: v for k, v in r.items() if k != "fit_time"} for r in rows]


def brute_force_regret(C_true, C_pred, paths):
    """Normalized regret of the paths that are best for C_pred, by enumeration."""
    chosen = paths[np.argmin(C_pred @ paths.T, axis=1)]
    best = np.min(C_true @ paths.T, axis=1)
    return float((np.einsum("ij,ij->i", C_true, chosen) - best).sum() / np.abs(best).sum())


def test_full_and_quick_grids():
    full = make_grid("pyepo", methods=["LS", "SPOForest"])
    assert len(full) == 2 * 4 * 3 * 5 * 2  # problems, degrees, n_train, seeds, methods
    assert {r["problem"] for r in full} == {"shortest-path", "knapsack"}
    assert {r["degree"] for r in full} == {1, 2, 4, 6}
    assert {r["n_train"] for r in full} == {100, 1000, 5000}
    assert {r["seed"] for r in full} == set(range(5))
    assert all(r["n_test"] == 1000 and r["noise"] == 0.5 and r["n_features"] == 5
               for r in full)
    assert all(r["capacity"] == 20.0 and r["n_items"] == 32 and r["n_resources"] == 2
               for r in full if r["problem"] == "knapsack")
    assert all(r["grid"] == [5, 5] for r in full if r["problem"] == "shortest-path")
    assert all(r["n_estimators"] == 50 for r in full if r["method"] == "SPOForest")
    quick = make_grid("pyepo", quick=True)
    assert {r["n_train"] for r in quick} == {200} and {r["degree"] for r in quick} == {1, 6}
    expected = ["SPOBoost", "SPOForest", "SPOTree", "SPOPlusLinear", "LS", "RF", "GB-mse"]
    if _compat.PYEPO_INSTALLED and _compat.TORCH_INSTALLED:
        expected.append("PyEPO SPO+")
    assert list(dict.fromkeys(r["method"] for r in quick)) == expected
    assert "SPOPlusLinear-conv" in PYEPO_METHODS  # the benchmark's reference, not default


def test_pyepo_is_skipped_with_a_note_when_missing(monkeypatch):
    monkeypatch.setattr(_compat, "PYEPO_INSTALLED", False)
    assert "PyEPO SPO+" not in {r["method"] for r in make_grid("pyepo", quick=True)}
    note = pyepo_skip_note(None)
    assert "PyEPO SPO+ was skipped" in note and "pip install" in note
    assert pyepo_skip_note(["LS"]) is None  # the user chose the methods
    with pytest.raises(ImportError, match=re.escape("--methods 'PyEPO SPO+' requires pyepo")):
        make_grid("pyepo", methods=["PyEPO SPO+"])
    meta = {"experiment": "pyepo", "quick": True, "n_runs": 0, "n_cached": 0, "notes": [note]}
    assert f"**Note:** {note}" in summary_markdown("pyepo", [], meta)


@pytest.mark.parametrize("kw, match", [
    (dict(problems=["tsp"]), "--problems: unknown problem"),
    (dict(methods=["SPOT"]), "--methods: unknown method"),
    (dict(n_train=[5]), "--n-train must be at least 20"),
    (dict(degrees=[0]), "--degrees"),
    (dict(depths=[2]), "--depths does not apply"),
])
def test_bad_selections_name_the_option_and_create_nothing(tmp_path, kw, match):
    with pytest.raises(ValueError, match=match):
        run_experiment("pyepo", out=tmp_path / "out", **dict(TINY, **kw))
    with pytest.raises(ValueError, match="--problems applies to the pyepo experiment only"):
        run_experiment("shortest-path", out=tmp_path / "out", problems=["knapsack"])
    assert os.listdir(tmp_path) == []


def test_tiny_run_summary_regret_cache_and_figure(tmp_path, grid_paths):
    res = run_experiment("pyepo", out=tmp_path, figures=_compat.MATPLOTLIB_INSTALLED, **TINY)
    assert not res["errors"] and res["n_runs"] == 2 * 2 * 2 * 2
    rows = read_csv(tmp_path / "results.csv")
    assert len(rows) == 16 and len({r["key"] for r in rows}) == 16
    text = (tmp_path / "summary.md").read_text()

    # Every table cell is the mean ± std over the seeds of results.csv's rows.
    for problem in ("shortest-path", "knapsack"):
        section = text.split(f"### {problem}, n_train = 30")[1].split("\n##")[0]
        for method in ("LS", "SPOTree"):
            line = next(x for x in section.splitlines() if x.startswith(f"| {method} |"))
            cells = [c.strip() for c in line.strip("|").split("|")][1:]
            for i, degree in enumerate(("1", "6")):
                sel = [r for r in rows if (r["problem"], r["method"], r["degree"])
                       == (problem, method, degree)]
                regret = [float(r["normalized_spo_loss"]) for r in sel]
                fit = [float(r["fit_time"]) for r in sel]
                assert len(regret) == 2
                assert cells[i] == f"{np.mean(regret):.4f} ± {np.std(regret, ddof=1):.4f}"
                assert cells[2 + i] == f"{np.mean(fit):.3f}"

    # The least-squares regret, recomputed from scratch: PyEPO's draw, one linear
    # regression per cost, decisions by enumerating the 70 paths of the 5x5 grid.
    paths = grid_paths(5, 5)
    for r in rows:
        if r["problem"] != "shortest-path" or r["method"] != "LS":
            continue
        X, C = make_pyepo_shortest_path(1030, degree=int(r["degree"]), noise=0.5,
                                        random_state=int(r["seed"]))
        A = np.column_stack([X[:30], np.ones(30)])
        coef = np.linalg.lstsq(A, C[:30], rcond=None)[0]
        C_pred = np.column_stack([X[30:], np.ones(1000)]) @ coef
        expected = brute_force_regret(C[30:], C_pred, paths)
        assert float(r["normalized_spo_loss"]) == pytest.approx(expected, rel=1e-9, abs=1e-12)
    # The knapsack's regrets are regrets: non-negative, and below 1 for these methods.
    ks = [float(r["normalized_spo_loss"]) for r in rows if r["problem"] == "knapsack"]
    assert len(ks) == 8 and all(0.0 <= v < 1.0 for v in ks)

    if _compat.MATPLOTLIB_INSTALLED:
        import matplotlib.image as mpimg

        img = mpimg.imread(res["files"]["pyepo.png"])
        assert img.ndim == 3 and min(img.shape[:2]) > 300 and img[..., :3].std() > 0.05
        assert "![pyepo.png](pyepo.png)" in text

    # Cached and deterministic: a rerun reuses everything; a lost run is recomputed
    # to the same numbers.
    again = run_experiment("pyepo", out=tmp_path, figures=False, **TINY)
    assert again["n_cached"] == 16 and again["rows"] == res["rows"]
    cache = sorted(f for f in os.listdir(tmp_path / "cache") if f.endswith(".json"))
    os.remove(tmp_path / "cache" / cache[0])
    third = run_experiment("pyepo", out=tmp_path, figures=False, **TINY)
    assert third["n_cached"] == 15 and no_time(third["rows"]) == no_time(res["rows"])


def test_every_method_fits_and_scores_a_tiny_run():
    from spotree.experiments import execute_run, pyepo_available

    names = [m for m in PYEPO_METHODS if m != "PyEPO SPO+" or pyepo_available()]
    runs = make_grid("pyepo", problems=["shortest-path"], n_train=[20], degrees=[2],
                     seeds=[0], methods=names)
    for run in runs:
        run["n_test"] = 50
        if "n_estimators" in run:
            run["n_estimators"] = 2
        rec = execute_run(run)
        assert "error" not in rec, rec
        assert 0.0 <= rec["row"]["normalized_spo_loss"] < 2.0 and rec["row"]["fit_time"] >= 0
    assert {r["method"] for r in runs} == set(names)
