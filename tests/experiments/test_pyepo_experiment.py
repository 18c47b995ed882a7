"""The PyEPO comparison (`spotree reproduce pyepo`): grid, summary, regret, cache, figure."""

import os
import re

import numpy as np
import pytest

from spotree import _compat
from spotree.datasets import make_pyepo_shortest_path
from spotree.experiments import PYEPO_METHODS, make_grid, run_experiment
from spotree.experiments._configs import pyepo_skip_note, run_key
from spotree.experiments._tables import read_csv, summary_markdown

TINY = dict(problems=["shortest-path", "knapsack"], n_train=[30], degrees=[1, 6],
            seeds=[0, 1], methods=["LS", "SPOTree"], noises=[0.5], progress=False)


def no_time(rows):
    return [{k: v for k, v in r.items() if k != "fit_time"} for r in rows]


def brute_force_regret(C_true, C_pred, paths):
    """Normalized regret of the paths that are best for C_pred, by enumeration."""
    chosen = paths[np.argmin(C_pred @ paths.T, axis=1)]
    best = np.min(C_true @ paths.T, axis=1)
    return float((np.einsum("ij,ij->i", C_true, chosen) - best).sum() / np.abs(best).sum())


def test_full_and_quick_grids():
    full = make_grid("pyepo", methods=["LS", "SPOForest"])
    assert len(full) == 2 * 4 * 3 * 2 * 5 * 2  # problems, degrees, n_train, noises, seeds, methods
    assert {r["noise"] for r in full} == {0.0, 0.5}
    assert {r["problem"] for r in full} == {"shortest-path", "knapsack"}
    assert {r["degree"] for r in full} == {1, 2, 4, 6}
    assert {r["n_train"] for r in full} == {100, 1000, 5000}
    assert {r["seed"] for r in full} == set(range(5))
    assert all(r["n_test"] == 1000 and r["n_features"] == 5 for r in full)
    assert all(r["capacity"] == 20.0 and r["n_items"] == 32 and r["n_resources"] == 2
               for r in full if r["problem"] == "knapsack")
    assert all(r["grid"] == [5, 5] for r in full if r["problem"] == "shortest-path")
    assert all(r["n_estimators"] == 50 for r in full if r["method"] == "SPOForest")
    quick = make_grid("pyepo", quick=True)
    assert {r["n_train"] for r in quick} == {200} and {r["degree"] for r in quick} == {1, 6}
    assert {r["noise"] for r in quick} == {0.5}
    expected = ["SPOBoost", "SPOForest", "SPOTree", "SPOPlusLinear", "LS", "PolyRidge", "MLP",
                "RF", "SPOBoost-mse"]
    if _compat.PYEPO_INSTALLED and _compat.TORCH_INSTALLED:
        expected.append("PyEPO SPO+")
    assert list(dict.fromkeys(r["method"] for r in quick)) == expected
    everything = {r["method"] for r in make_grid("pyepo", n_train=[100], degrees=[1],
                                                 seeds=[0])}
    pyepo = {"PyEPO SPO+", "PyEPO SPO+ NN", "PyEPO PFYL", "PyEPO PFYL NN"}
    assert pyepo <= everything if _compat.PYEPO_INSTALLED and _compat.TORCH_INSTALLED \
        else not pyepo & everything
    selected = make_grid("pyepo", methods=["LS"], noises=[0.25], n_train=[100], seeds=[0])
    assert {r["noise"] for r in selected} == {0.25}
    assert "SPOPlusLinear-conv" in PYEPO_METHODS  # the benchmark's reference, not default


def test_pyepo_is_skipped_with_a_note_when_missing(monkeypatch):
    monkeypatch.setattr(_compat, "PYEPO_INSTALLED", False)
    assert not {m for m in (r["method"] for r in make_grid("pyepo")) if "PyEPO" in m}
    note = pyepo_skip_note(None)
    assert "PyEPO's methods (PyEPO SPO+, PFYL" in note and "pip install" in note
    assert pyepo_skip_note(["LS"]) is None  # the user chose the methods
    with pytest.raises(ImportError, match=re.escape("--methods 'PyEPO PFYL' requires pyepo")):
        make_grid("pyepo", methods=["LS", "PyEPO PFYL"])
    meta = {"experiment": "pyepo", "quick": True, "n_runs": 0, "n_cached": 0, "notes": [note]}
    assert f"**Note:** {note}" in summary_markdown("pyepo", [], meta)


@pytest.mark.parametrize("kw, match", [
    (dict(problems=["tsp"]), "--problems: unknown problem"),
    (dict(methods=["SPOT"]), "--methods: unknown method"),
    (dict(n_train=[5]), "--n-train must be at least 20"),
    (dict(degrees=[0]), "--degrees"),
    (dict(noises=[1.5]), "--noise must be half-widths in"),
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

    # Every table cell is the mean ± std over the seeds of results.csv's rows; the
    # excess is the mean regret over the mean floor, minus 1.
    def cells_of(section, label):
        line = next(x for x in section.splitlines() if x.startswith(f"| {label} |"))
        return [c.strip() for c in line.strip("|").split("|")][1:]

    for problem in ("shortest-path", "knapsack"):
        section = text.split(f"### {problem}, n_train = 30, noise 0.5")[1].split("\n##")[0]
        floor_cells = cells_of(section, "Bayes floor")
        for i, degree in enumerate(("1", "6")):
            floors = {r["seed"]: float(r["bayes_floor"]) for r in rows
                      if (r["problem"], r["degree"]) == (problem, degree)}
            assert len(floors) == 2
            assert floor_cells[i] == (f"{np.mean(list(floors.values())):.4f} ± "
                                      f"{np.std(list(floors.values()), ddof=1):.4f}")
        for method in ("LS", "SPOTree"):
            cells = cells_of(section, method)
            for i, degree in enumerate(("1", "6")):
                sel = [r for r in rows if (r["problem"], r["method"], r["degree"])
                       == (problem, method, degree)]
                regret = [float(r["normalized_spo_loss"]) for r in sel]
                floor = [float(r["bayes_floor"]) for r in sel]
                fit = [float(r["fit_time"]) for r in sel]
                assert len(regret) == 2
                assert cells[i] == f"{np.mean(regret):.4f} ± {np.std(regret, ddof=1):.4f}"
                assert cells[2 + i] == f"{100 * (np.mean(regret) / np.mean(floor) - 1):+.1f}%"
                assert cells[4 + i] == f"{np.mean(fit):.3f}"

    # The floor, recomputed from scratch: E[c|x] by the generator's formula from the
    # drawn B and x (the noise has mean 1), decisions by enumerating the paths.
    paths = grid_paths(5, 5)
    for r in rows:
        if r["problem"] != "shortest-path":
            continue
        X, C, B = make_pyepo_shortest_path(1030, degree=int(r["degree"]), noise=0.5,
                                           random_state=int(r["seed"]), return_B=True)
        mean = ((X[30:] @ B.T / np.sqrt(5) + 3) ** int(r["degree"]) + 1) / 3.5 ** int(r["degree"])
        expected = brute_force_regret(C[30:], mean, paths)
        assert float(r["bayes_floor"]) == pytest.approx(expected, rel=1e-9, abs=1e-12)
        assert 0 < float(r["bayes_floor"]) < float(r["normalized_spo_loss"])

    # The least-squares regret, recomputed from scratch: PyEPO's draw, one linear
    # regression per cost, decisions by enumerating the 70 paths of the 5x5 grid.
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

    # PyEPO's own methods (SPO+ and PFYL, linear and network) only where pyepo is installed.
    names = [m for m, meth in PYEPO_METHODS.items()
             if meth.model != "pyepo" or pyepo_available()]
    runs = make_grid("pyepo", problems=["shortest-path"], n_train=[20], degrees=[2],
                     seeds=[0], methods=names)
    for run in runs:
        run["n_test"] = 50
        if "n_estimators" in run:
            run["n_estimators"] = 2
        if run["model"] == "pyepo":  # PyEPO's training loop, briefly
            run["params"] = dict(run["params"], epochs=2)
        rec = execute_run(run)
        assert "error" not in rec, rec
        assert 0.0 <= rec["row"]["normalized_spo_loss"] < 2.0 and rec["row"]["fit_time"] >= 0
    assert {r["method"] for r in runs} == set(names)


def test_polynomial_ridge_picks_degree_and_penalty_by_leave_one_out():
    """Against brute-force leave-one-out refits of Ridge over every (degree, alpha)."""
    from sklearn.linear_model import Ridge
    from sklearn.preprocessing import PolynomialFeatures, StandardScaler

    from spotree.experiments._pyepo import PolynomialRidge

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    C = np.column_stack([X[:, 0] ** 3 - X[:, 1], X[:, 0] * X[:, 1] ** 2])
    C += 0.1 * rng.normal(size=C.shape)
    alphas = (0.01, 1.0, 100.0)
    model = PolynomialRidge(max_degree=4, alphas=alphas).fit(X, C)
    best = None
    for degree in range(1, 5):
        Z = StandardScaler().fit_transform(PolynomialFeatures(degree, include_bias=False)
                                           .fit_transform(X))
        for alpha in alphas:
            err = 0.0
            for i in range(len(X)):
                keep = np.arange(len(X)) != i
                fit = Ridge(alpha=alpha).fit(Z[keep], C[keep])
                err += ((fit.predict(Z[i:i + 1]) - C[i]) ** 2).sum()
            if best is None or err < best[0]:
                best = (err, degree, alpha)
    assert (model.degree_, model.alpha_) == best[1:]
    assert model.degree_ >= 3
    assert model.predict(X).shape == C.shape


def test_two_stage_hgb_fits_one_early_stopped_model_per_cost():
    """Against scikit-learn's HistGradientBoostingRegressor fitted on each column by hand."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    from spotree.experiments._pyepo import TwoStageHGB

    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    C = np.column_stack([np.sin(X[:, 0]), X[:, 1] ** 2, -X[:, 2], np.zeros(300)])
    C[:, :3] += 0.3 * rng.normal(size=(300, 3))
    Xt = rng.normal(size=(20, 3))
    model = TwoStageHGB(seed=4, max_iter=60).fit(X, C)
    expected = np.column_stack([
        HistGradientBoostingRegressor(random_state=4, max_iter=60, early_stopping=True)
        .fit(X, C[:, j]).predict(Xt) for j in range(4)])
    np.testing.assert_array_equal(model.predict(Xt), expected)
    # early stopping is on (60 rounds would otherwise all run on every cost)
    assert min(m.n_iter_ for m in model.models_) < 60


def test_cache_keys_change_with_the_libraries_that_fit_the_methods(monkeypatch):
    """RF, MLP, HGB and PolyRidge are scikit-learn's, PyEPO's methods pyepo's and
    torch's: a run's key held spotree's code only, so after an upgrade of those the
    cache served results of the old versions beside new ones in one table."""
    import importlib.metadata

    runs = make_grid("pyepo", quick=True, methods=["RF", "LS"])
    keys = {run_key(r) for r in runs}
    real = importlib.metadata.version

    def other_sklearn(name):
        return "0.0.1" if name == "scikit-learn" else real(name)

    monkeypatch.setattr(importlib.metadata, "version", other_sklearn)
    other = make_grid("pyepo", quick=True, methods=["RF", "LS"])
    assert keys.isdisjoint(run_key(r) for r in other)
    assert all("scikit-learn 0.0.1" in r["libraries"] for r in other)


def test_the_quick_grid_is_described_as_it_is():
    """--help and the README describe 'reproduce pyepo --quick' as the full grid with
    fewer sizes, degrees, seeds and trees and 'PyEPO's SPO+ linear only'; the quick grid
    also leaves out HGB, which neither said. Each non-PyEPO method the quick grid leaves
    out is now named in both descriptions."""
    from pathlib import Path

    from spotree.cli import build_parser
    from spotree.experiments import EXPERIMENTS
    from spotree.experiments._configs import pyepo_method_needs_pyepo

    full, quick = (EXPERIMENTS["pyepo"][k]["methods"] for k in ("full", "quick"))
    dropped = [m for m in full if m not in quick and not pyepo_method_needs_pyepo(m)]
    assert dropped == ["HGB"]
    sub = build_parser()._subparsers._group_actions[0].choices["reproduce"]
    help_quick = " ".join(sub.epilog.split("pyepo ", 1)[1].split("energy ")[0].split())
    readme = Path(__file__).resolve().parents[2].joinpath("README.md").read_text()
    readme_quick = " ".join(readme.split("`--quick` runs n_train 200")[1].split(";")[0].split())
    for m in dropped:
        assert f"no {m}" in help_quick and f"no {m}" in readme_quick
    # The same for shortest-path --quick, which leaves out the optimal trees.
    full, quick = (EXPERIMENTS["shortest-path"][k]["methods"] for k in ("full", "quick"))
    assert [m for m in full if m not in quick] == ["SPOT Optimal"]
    help_sp = " ".join(sub.epilog.split("shortest-path ", 1)[1].split("news ")[0].split())
    assert "--quick: n = 200 only, 5 seeds, 50-tree forests, no optimal trees" in help_sp


def test_knapsack_run_regret_and_floor_by_an_independent_solver():
    """The knapsack's numbers were only checked to lie in [0, 1): a run that solved
    another knapsack (twice the capacity, say) went unseen. Here every decision is a
    scipy MILP of PyEPO's knapsack: 2 resources of capacity 20, its drawn weights."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    from spotree.datasets import make_pyepo_knapsack
    from spotree.experiments._pyepo import run_pyepo

    (run,) = make_grid("pyepo", problems=["knapsack"], n_train=[20], degrees=[2], seeds=[7],
                       methods=["LS"], noises=[0.5])
    run["n_test"] = 6
    row, _ = run_pyepo(run)
    X, C, weights, M = make_pyepo_knapsack(26, degree=2, noise=0.5, random_state=7,
                                           return_mean=True)
    assert weights.shape == (2, 32)

    def best(c, cut=None):
        """max c.w subject to weights @ w <= 20, w binary (and w != cut)."""
        cons = [LinearConstraint(weights, -np.inf, 20.0)]
        if cut is not None:
            cons.append(LinearConstraint(2 * cut - 1, -np.inf, cut.sum() - 1))
        res = milp(-c, constraints=cons, integrality=np.ones(32), bounds=Bounds(0, 1),
                   options={"mip_rel_gap": 0})
        return np.round(res.x), -res.fun

    A = np.column_stack([X[:20], np.ones(20)])
    C_pred = np.column_stack([X[20:], np.ones(6)]) @ np.linalg.lstsq(A, C[:20], rcond=None)[0]
    Ct = C[20:]
    z = np.array([best(c)[1] for c in Ct])

    def regret(P, unique=False):
        chosen = []
        for p in P:
            w, v = best(p)
            # Items that share a row of B have the same mean: E[c | x] can tie, and the
            # floor then depends on the tie-break. Seed 7's test rows have none.
            assert not unique or best(p, cut=w)[1] < v - 1e-9
            chosen.append(w)
        return float((z - np.einsum("ij,ij->i", Ct, chosen)).sum() / np.abs(z).sum())

    assert row["normalized_spo_loss"] == pytest.approx(regret(C_pred), rel=1e-9, abs=1e-12)
    assert row["bayes_floor"] == pytest.approx(regret(M[20:], unique=True), rel=1e-9,
                                               abs=1e-12)
    assert 0 < row["bayes_floor"] < row["normalized_spo_loss"]


def test_a_tree_run_grows_on_the_later_rows_and_prunes_on_the_first(grid_paths):
    """Methods that prune hold out the first validation_fraction of the training rows:
    a tree grown on all of them (the held-out rows too) went unseen. The reference tree
    is grown on rows 8-39 and pruned on rows 0-7; its regret by path enumeration."""
    from spotree import ShortestPath, SPOTree
    from spotree.experiments._pyepo import run_pyepo

    (run,) = make_grid("pyepo", problems=["shortest-path"], n_train=[40], degrees=[4],
                       seeds=[1], methods=["SPOTree"], noises=[0.5])
    run["n_test"] = 100
    assert run["validation_fraction"] == 0.2 and run["min_samples_leaf"] == 5
    row, _ = run_pyepo(run)
    X, C = make_pyepo_shortest_path(140, degree=4, noise=0.5, random_state=1)
    ref = SPOTree(ShortestPath((5, 5)), criterion="spo", min_samples_leaf=5, random_state=1)
    ref = ref.fit(X[8:40], C[8:40]).prune(X[:8], C[:8])
    assert row["n_leaves"] == ref.get_n_leaves()
    expected = brute_force_regret(C[40:], ref.predict(X[40:]), grid_paths(5, 5))
    assert row["normalized_spo_loss"] == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_numpy_values_in_a_methods_params_make_the_same_runs(tmp_path, monkeypatch):
    """A method registered with n_estimators=np.int64(5) (a grid built with np.arange)
    crashed run_experiment with "Object of type int64 is not JSON serializable" (the
    run's cache key), after the output folder was made; the runs are now those of the
    plain int. A parameter that is no JSON value is named before any folder."""
    from spotree.experiments import PyEPOMethod

    cell = dict(seeds=[0], n_train=[50], problems=["shortest-path"], degrees=[1],
                noises=[0.5])
    monkeypatch.setitem(PYEPO_METHODS, "B5", PyEPOMethod("B5", "boost", {"n_estimators": 5}))
    plain = make_grid("pyepo", methods=["B5"], **cell)
    monkeypatch.setitem(PYEPO_METHODS, "B5", PyEPOMethod(
        "B5", "boost", {"n_estimators": np.int64(5), "learning_rate": np.float32(0.5)}))
    runs = make_grid("pyepo", methods=["B5"], **cell)
    assert runs[0]["params"] == {"n_estimators": 5, "learning_rate": 0.5}
    assert type(runs[0]["params"]["n_estimators"]) is int
    assert run_key(dict(plain[0], params=dict(plain[0]["params"], learning_rate=0.5))) == \
        run_key(runs[0])
    monkeypatch.setitem(PYEPO_METHODS, "B5", PyEPOMethod(
        "B5", "boost", {"init": object()}))
    out = tmp_path / "out"
    with pytest.raises(ValueError, match="method 'B5': its params must be JSON values"):
        run_experiment("pyepo", methods=["B5"], out=out, progress=False, figures=False,
                       **cell)
    assert not out.exists()
