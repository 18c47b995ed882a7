"""The ICON energy comparison (`spotree reproduce energy`): grid, regret recomputed
with an independent knapsack solver, tables, bad selections; the real file where present."""

import os

import numpy as np
import pytest

from spotree.datasets import load_icon_energy
from spotree.experiments import ENERGY_METHODS, make_grid, run_experiment
from spotree.experiments._energy import ItemLinear
from spotree.experiments._tables import read_csv


def _write_file(path, n_train_days=700, n_test_days=60, seed=0):
    """A small file in the benchmark's layout whose values depend on the forecasts."""
    rng = np.random.default_rng(seed)
    parts = {}
    for name, days, first in (("train", n_train_days, 0), ("test", n_test_days, n_train_days)):
        cal = np.repeat(rng.integers(0, 7, size=(days, 4)), 48, axis=0)
        fc = rng.normal(50, 10, size=(days * 48, 4))
        parts[f"X_1g{name}"] = np.column_stack([np.repeat(np.arange(first, first + days), 48),
                                                cal, fc]).astype(float)
        parts[f"y_{name}"] = np.maximum(0, 3 * fc[:, 2] + fc[:, 0] - 100
                                        + rng.normal(0, 20, days * 48))
    parts["weights"] = np.tile([3, 5, 7], 16)
    np.savez(path, **parts)
    return path


def _knapsack_dp(values, weights, capacity):
    """Best value of a 0/1 knapsack with integer weights, by a plain table over capacity."""
    best = np.zeros(int(capacity) + 1)
    for v, w in zip(values, weights.astype(int)):
        if v > 0:
            best[w:] = np.maximum(best[w:], best[:-w] + v)
    return best[-1]


def _relative_regret_by_hand(C_true, C_pred, weights, capacity):
    """Decisions: items chosen by the DP on the predictions, traced back by hand."""
    out = []
    for c, p in zip(C_true, C_pred):
        cap, chosen = int(capacity), np.zeros(len(c), bool)
        table = [np.zeros(cap + 1)]
        for v, w in zip(p, weights.astype(int)):
            nxt = table[-1].copy()
            if v > 0:
                nxt[w:] = np.maximum(nxt[w:], table[-1][:-w] + v)
            table.append(nxt)
        for j in range(len(p) - 1, -1, -1):
            if table[j + 1][cap] != table[j][cap]:
                chosen[j] = True
                cap -= int(weights[j])
        z = _knapsack_dp(c, weights, capacity)
        out.append((z - c[chosen].sum()) / z)
    return 100 * float(np.mean(out))


def test_grid_full_quick_and_selection(tmp_path):
    path = str(_write_file(tmp_path / "Data.npz"))
    full = make_grid("energy", data_id="x", data_path=path)
    assert len(full) == 7 * 5 * 3 * 2  # methods, seeds, capacities, scalings
    assert {r["capacity"] for r in full} == {60.0, 120.0, 180.0}
    assert {r["scaling"] for r in full} == {"raw", "standardized"}
    assert list(dict.fromkeys(r["method"] for r in full)) == list(ENERGY_METHODS)
    quick = make_grid("energy", quick=True, data_id="x", data_path=path)
    assert {(r["capacity"], r["scaling"], r["seed"]) for r in quick} == {(120.0, "raw", 0)}
    assert all(r["params"].get("n_estimators") == 20 for r in quick
               if r["method"] in ("SPOForest", "RF"))


@pytest.mark.parametrize("kw, match", [
    (dict(methods=["LS"]), "--methods: unknown method"),
    (dict(capacities=[0]), "--capacities must be finite positive"),
    (dict(capacities=[120, float("inf")]), "--capacities must be finite positive"),
    (dict(scalings=["log"]), "--scaling must be among"),
    (dict(degrees=[2]), "--degrees does not apply to the energy"),
    (dict(data=None), "needs --data"),
])
def test_bad_selections(tmp_path, kw, match):
    path = _write_file(tmp_path / "Data.npz")
    args = dict(data=path, methods=["LS-day"], progress=False)
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        run_experiment("energy", out=tmp_path / "out", **args)
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="--capacities applies to the energy"):
        make_grid("pyepo", capacities=[60])


def test_least_squares_runs_regret_by_hand_and_tables(tmp_path):
    path = _write_file(tmp_path / "Data.npz")
    res = run_experiment("energy", data=path, out=tmp_path / "out", seeds=[0, 1],
                         capacities=[60, 120], methods=["LS-item", "LS-day"], figures=False,
                         progress=False)
    assert not res["errors"] and res["n_runs"] == 2 * 2 * 2 * 2
    rows = read_csv(tmp_path / "out" / "results.csv")
    from sklearn.linear_model import LinearRegression
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):  # small fits: more BLAS threads only contend
        for r in rows:
            data = load_icon_energy(path, random_state=int(r["seed"]),
                                    standardize=r["scaling"] == "standardized")
            fit = np.concatenate([data.train, data.validation])
            if r["method"] == "LS-item":
                # One model shared by the items: all (day, item) rows stacked.
                Z = data.X_items[fit].reshape(-1, 8)
                lr = LinearRegression().fit(Z, data.C[fit].ravel())
                pred = lr.predict(data.X_items[data.test].reshape(-1, 8)).reshape(-1, 48)
            else:
                pred = LinearRegression().fit(data.X[fit], data.C[fit]).predict(data.X_test)
            expected = _relative_regret_by_hand(data.C_test, pred, data.weights,
                                                float(r["capacity"]))
            assert float(r["relative_regret"]) == pytest.approx(expected, rel=1e-9, abs=1e-9)
    # Least squares is affine-invariant: standardizing the features changes nothing
    # (so both scalings used the same days).
    key = lambda r: (r["method"], r["capacity"], r["seed"])  # noqa: E731
    raw = {key(r): float(r["relative_regret"]) for r in rows if r["scaling"] == "raw"}
    std = {key(r): float(r["relative_regret"]) for r in rows if r["scaling"] == "standardized"}
    assert raw.keys() == std.keys() and len(raw) == 8
    for k in raw:
        assert std[k] == pytest.approx(raw[k], abs=1e-6)

    text = (tmp_path / "out" / "summary.md").read_text()
    section = text.split("### raw features")[1].split("###")[0]
    line = next(x for x in section.splitlines() if x.startswith("| LS-day |"))
    cells = [c.strip() for c in line.strip("|").split("|")][1:]
    for i, cap in enumerate(("60.0", "120.0")):
        sel = [r for r in rows if (r["method"], r["scaling"], r["capacity"])
               == ("LS-day", "raw", cap)]
        rel = [float(r["relative_regret"]) for r in sel]
        norm = [float(r["normalized_spo_loss"]) for r in sel]
        assert cells[i] == f"{np.mean(rel):.2f} ± {np.std(rel, ddof=1):.2f}"
        assert cells[2 + i] == f"{np.mean(norm):.4f} ± {np.std(norm, ddof=1):.4f}"
    assert "### standardized minus raw" in text
    moved = [x for x in text.split("### standardized minus raw")[1].split("\n## ")[0].splitlines()
             if x.startswith("| LS-")]
    assert len(moved) == 2 and moved[0].startswith("| LS-item | +0.00 (spread")
    assert not any(x.endswith("moved |") or " moved |" in x for x in moved)


def test_a_replaced_data_file_is_read_again(tmp_path):
    """The loaded data were kept per process under the file's path alone: after the file
    was replaced, a new run_experiment (new fingerprint, so new run keys) computed its
    runs on the old contents and cached them under the new keys (relative regret 3.5017
    for both files here; the second file's is 3.3074)."""
    from sklearn.linear_model import LinearRegression

    path = _write_file(tmp_path / "Data.npz", seed=0)
    kw = dict(methods=["LS-day"], capacities=[120], scalings=["raw"], seeds=[0],
              progress=False, figures=False)
    first = run_experiment("energy", data=path, out=tmp_path / "a", **kw)["rows"][0]
    _write_file(path, seed=1)
    second = run_experiment("energy", data=path, out=tmp_path / "b", **kw)["rows"][0]
    assert second["data"] != first["data"]
    data = load_icon_energy(path, random_state=0)
    fit = np.concatenate([data.train, data.validation])
    pred = LinearRegression().fit(data.X[fit], data.C[fit]).predict(data.X_test)
    expected = _relative_regret_by_hand(data.C_test, pred, data.weights, 120.0)
    assert second["relative_regret"] == pytest.approx(expected, rel=1e-9)
    assert abs(first["relative_regret"] - expected) > 0.01
    # A file that is not the one the run names (replaced mid-experiment) is refused.
    from spotree.experiments._energy import energy_data

    with pytest.raises(ValueError, match="changed during the experiment"):
        energy_data(str(path), 1, False, "icon-energy-000000000000")


def test_item_linear_is_one_model_for_all_items():
    rng = np.random.default_rng(1)
    Xi = rng.normal(size=(30, 48, 8))
    coef = rng.normal(size=8)
    C = Xi @ coef + 2.0
    model = ItemLinear().fit(Xi, C)
    assert np.allclose(model.coef_, np.r_[coef, 2.0])
    assert np.allclose(model.predict(Xi[:3]), C[:3])


def test_real_data_least_squares(icon_energy_file, tmp_path):
    res = run_experiment("energy", data=icon_energy_file, out=tmp_path, seeds=[0],
                         capacities=[120], scalings=["raw"], methods=["LS-item"],
                         figures=False, progress=False)
    (row,) = res["rows"]
    data = load_icon_energy(icon_energy_file, random_state=0)
    fit = np.concatenate([data.train, data.validation])
    pred = ItemLinear().fit(data.X_items[fit], data.C[fit]).predict(data.X_items[data.test])
    expected = _relative_regret_by_hand(data.C_test, pred, data.weights, 120)
    assert row["relative_regret"] == pytest.approx(expected, rel=1e-9)
    assert os.path.exists(tmp_path / "summary.md")


def test_a_bad_data_file_fails_once_before_any_folder(tmp_path):
    """It failed in every run, after writing an empty results.csv and summary.md."""
    bad = tmp_path / "Data.npz"
    bad.write_text("<html></html>")
    with pytest.raises(ValueError, match="not a readable .npz archive"):
        run_experiment("energy", data=bad, out=tmp_path / "out", methods=["LS-day"],
                       progress=False)
    assert not (tmp_path / "out").exists()
    parts = dict(np.load(_write_file(tmp_path / "ok.npz")))
    parts["X_1gtrain"][3, 1] += 1  # the holiday flag changes within day 0
    np.savez(tmp_path / "cal.npz", **parts)
    with pytest.raises(ValueError, match="calendar columns"):
        run_experiment("energy", data=tmp_path / "cal.npz", out=tmp_path / "out",
                       methods=["LS-day"], progress=False)
    assert not (tmp_path / "out").exists()


def test_a_capacity_below_every_item_weight_is_refused(tmp_path):
    """No item fits: every run failed with 'the optimal values are all zero'."""
    path = _write_file(tmp_path / "Data.npz")  # item weights 3, 5 and 7
    with pytest.raises(ValueError, match=r"--capacities 2\.5 is below the lightest item's "
                                         r"weight \(3\)"):
        run_experiment("energy", data=path, out=tmp_path / "out", capacities=[120, 2.5],
                       methods=["LS-day"], progress=False)
    assert not (tmp_path / "out").exists()


def test_a_tree_run_grows_on_training_days_and_prunes_on_validation_days(tmp_path):
    """Only the least-squares runs were checked: a tree left unpruned (or pruned on
    the training days) went unseen. The reference is grown on the training days,
    pruned on the validation days, and scored by the DP above (the run's warm-up
    size: the first 25 days of each part)."""
    from spotree import SPOTree
    from spotree.experiments._energy import data_id, run_energy
    from spotree.problems import Knapsack

    path = str(_write_file(tmp_path / "Data.npz"))
    (run,) = make_grid("energy", data_id=data_id(path), data_path=path, methods=["SPOTree"],
                       seeds=[2], capacities=[60], scalings=["raw"])
    run["max_days"] = 25
    row, _ = run_energy(run)
    data = load_icon_energy(path, random_state=2)
    tr, va, te = data.train[:25], data.validation[:25], data.test[:25]
    ref = SPOTree(Knapsack(data.weights, 60.0), random_state=2).fit(data.X[tr], data.C[tr])
    ref = ref.prune(data.X[va], data.C[va])
    assert row["n_leaves"] == ref.get_n_leaves()
    expected = _relative_regret_by_hand(data.C[te], ref.predict(data.X[te]), data.weights, 60)
    assert row["relative_regret"] == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_finished_runs_are_reused_after_the_data_file_moves(tmp_path):
    """A run's key held the data file's path as well as its fingerprint: after the folder
    was moved or renamed (or the results opened on another machine), every finished run
    was computed again. The fingerprint alone names the data now; the rows give the
    path of this call, and a different file at the old path is still other data."""
    import shutil

    (tmp_path / "d1").mkdir()
    _write_file(tmp_path / "d1" / "Data.npz", seed=0)
    kw = dict(methods=["LS-day"], capacities=[120], scalings=["raw"], seeds=[0],
              progress=False, figures=False, out=tmp_path / "out")
    first = run_experiment("energy", data=tmp_path / "d1", **kw)
    shutil.move(tmp_path / "d1", tmp_path / "d2")
    again = run_experiment("energy", data=tmp_path / "d2", **kw)
    assert (first["n_cached"], again["n_cached"]) == (0, 1)
    strip = [{k: v for k, v in r.items() if k not in ("fit_time", "data_path")}
             for r in first["rows"]]
    assert [{k: v for k, v in r.items() if k not in ("fit_time", "data_path")}
            for r in again["rows"]] == strip
    assert {r["data_path"] for r in again["rows"]} == {str(tmp_path / "d2" / "Data.npz")}
    # Other contents at the first path: other runs, not the cached ones.
    (tmp_path / "d1").mkdir()
    _write_file(tmp_path / "d1" / "Data.npz", seed=1)
    other = run_experiment("energy", data=tmp_path / "d1", **kw)
    assert other["n_cached"] == 0
    assert other["rows"][0]["relative_regret"] != first["rows"][0]["relative_regret"]
