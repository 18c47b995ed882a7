"""Experiment grids, the cached runner, tables and figures (small grids, in process)."""

import gc
import json
import math
import os
import re
import warnings

import numpy as np
import pytest

import spotree
from spotree.experiments import METHODS, Method, make_grid, parse_seeds, register_method
from spotree.experiments import _configs, _runner, run_experiment
from spotree.experiments._tables import improvement_table, read_csv

def no_time(rows):
    return [{k: v for k, v in r.items() if k != "fit_time"} for r in rows]


SMALL = dict(seeds=[0, 1], methods=["SPOT", "CART"], n_train=[200], depths=[1, None],
             figures=False, progress=False)


def test_full_shortest_path_grid_is_the_papers():
    runs = make_grid("shortest-path", methods=["SPOT", "CART"])
    assert len(runs) == 2 * (2 * 2 * 4 * 10 * 2)  # n, degree, noise, depth, seed, method
    for n, depths, noises in ((200, {1, 2, 3, None}, {0.0, 0.25}),
                              (10000, {2, 4, 6, None}, {0.0, 0.5})):
        sub = [r for r in runs if r["n_train"] == n]
        assert {r["depth"] for r in sub} == depths
        assert {r["noise"] for r in sub} == noises
        assert {r["degree"] for r in sub} == {2, 10}
        assert {r["seed"] for r in sub} == set(range(10))
        assert all(r["min_samples_leaf"] == 20 and r["n_test"] == 1000
                   and r["validation_fraction"] == 0.2 for r in sub)


def test_method_kinds_choose_their_depths(monkeypatch):
    monkeypatch.setitem(METHODS, "FF", Method("FF", spotree.SPOForest, "forest"))
    monkeypatch.setitem(METHODS, "FO", Method("FO", spotree.OptimalSPOTree, "optimal"))
    runs = make_grid("shortest-path", methods=["FF", "FO"], n_train=[200])
    assert {r["depth"] for r in runs if r["method"] == "FF"} == {None}
    assert all(r["n_estimators"] == 100 and r["max_features_grid"] == [2, 3, 4, 5]
               for r in runs if r["method"] == "FF")
    assert {r["depth"] for r in runs if r["method"] == "FO"} == {1, 2, 3}


def test_methods_are_estimator_classes_and_unknown_names_fail():
    # The paper's five methods, in this order, as the registry held them
    # when it imported the estimators at once.
    builtin = [("SPOT", spotree.SPOTree, "tree", {"criterion": "spo"}),
               ("CART", spotree.SPOTree, "tree", {"criterion": "mse"}),
               ("SPOT Optimal", spotree.OptimalSPOTree, "optimal", {"time_limit": 60}),
               ("SPO Forest", spotree.SPOForest, "forest",
                {"criterion": "spo", "ridge_features": False}),
               ("CART Forest", spotree.SPOForest, "forest",
                {"criterion": "mse", "ridge_features": False})]
    assert list(METHODS)[:5] == [b[0] for b in builtin]
    for name, cls, kind, params in builtin:
        m = METHODS[name]
        assert isinstance(m, Method) and m.estimator is cls
        assert (m.name, m.kind, m.params) == (name, kind, params)
        assert METHODS[name] is m and METHODS.get(name) is m and dict(METHODS)[name] is m
    with pytest.raises(ValueError, match="unknown method"):
        make_grid("shortest-path", methods=["Nope"])
    with pytest.raises(ValueError, match="kind"):
        register_method(Method("X", spotree.SPOTree, "boosting"))
    # No placeholder methods: a name that is not a class is refused at once.
    with pytest.raises(TypeError, match="estimator class"):
        register_method(Method("Later", "NotWrittenYet", "tree"))
    assert "Later" not in METHODS


def test_parse_seeds():
    assert parse_seeds("3") == [0, 1, 2]
    assert parse_seeds("0,5,7") == [0, 5, 7]
    assert parse_seeds("2:5") == [2, 3, 4]
    for bad in ("x", "0", "-1,2"):
        with pytest.raises(ValueError, match="--seeds"):
            parse_seeds(bad)


def test_runs_are_cached_and_resume_after_interruption(tmp_path, monkeypatch):
    calls = []
    real = _runner.execute_run

    def counting(run, data=None):
        calls.append(run)
        return real(run, data)

    monkeypatch.setattr(_runner, "execute_run", counting)
    first = run_experiment("shortest-path", out=tmp_path, **SMALL)
    n = 2 * 2 * 2 * 2 * 2  # degrees, noises, methods, depths, seeds
    assert len(calls) == n == first["n_runs"] and first["n_cached"] == 0
    cache = sorted(os.listdir(tmp_path / "cache"))
    assert len(cache) == n and all(f.endswith(".json") for f in cache)

    calls.clear()
    again = run_experiment("shortest-path", out=tmp_path, **SMALL)
    assert calls == [] and again["n_cached"] == n
    assert again["rows"] == first["rows"]

    # An interrupted run leaves one result missing and another half-written.
    os.remove(tmp_path / "cache" / cache[0])
    (tmp_path / "cache" / cache[1]).write_text('{"run": {"experi')
    calls.clear()
    third = run_experiment("shortest-path", out=tmp_path, **SMALL)
    assert len(calls) == 2 and third["n_cached"] == n - 2
    # Deterministic: the recomputed runs give the same numbers (fit times aside).
    assert no_time(third["rows"]) == no_time(first["rows"])
    assert not [f for f in os.listdir(tmp_path / "cache") if f.startswith(".")]


def test_csv_has_one_row_per_run_and_summary_matches_it(tmp_path):
    res = run_experiment("shortest-path", out=tmp_path, **SMALL)
    rows = read_csv(tmp_path / "results.csv")
    assert len(rows) == res["n_runs"] == 32
    for col in ("method", "n_train", "degree", "noise", "depth", "seed",
                "normalized_spo_loss", "n_leaves", "fit_time", "key"):
        assert col in rows[0]
    assert len({r["key"] for r in rows}) == 32
    # The summary's cell is the mean ± std of the CSV's rows of that cell.
    text = (tmp_path / "summary.md").read_text()
    cell = [float(r["normalized_spo_loss"]) for r in rows if r["method"] == "SPOT"
            and r["degree"] == "2" and r["noise"] == "0.25" and r["depth"] == "1"]
    assert len(cell) == 2
    expected = f"{np.mean(cell):.4f} ± {np.std(cell, ddof=1):.4f}"
    section = text.split("### degree 2, noise 0.25")[1].split("###")[0]
    assert f"| 1 | {expected} |" in section
    assert "% improvement of greedy SPOT over CART" in text and "paper" in text


def test_improvement_table_by_hand():
    rows = []
    for deg, spot, cart in ((2, [1.0, 3.0], [4.0, 4.0]), (10, [2.0, 2.0], [1.0, 3.0])):
        for m, vals in (("SPOT", spot), ("CART", cart)):
            for v in vals:
                rows.append({"method": m, "depth": 1, "degree": deg, "noise": 0.0,
                             "normalized_spo_loss": v})
    imp = improvement_table(rows)
    mean, per, wins = imp["1"]
    assert per == [pytest.approx(50.0), pytest.approx(0.0)]
    assert mean == pytest.approx(25.0) and wins == 1


def test_a_failing_method_is_reported_not_cached(tmp_path, monkeypatch):
    class Broken(spotree.SPOTree):
        def fit(self, X, C, sample_weight=None):
            raise RuntimeError("solver exploded")

    monkeypatch.setitem(METHODS, "Broken", Method("Broken", Broken, "tree"))
    res = run_experiment("shortest-path", out=tmp_path,
                         **dict(SMALL, seeds=[0], methods=["SPOT", "Broken"], depths=[1]))
    assert len(res["errors"]) == 4 and "solver exploded" in res["errors"][0]["error"]
    assert len(res["rows"]) == 4 and {r["method"] for r in res["rows"]} == {"SPOT"}
    assert len(os.listdir(tmp_path / "cache")) == 4
    assert "4 runs failed" in res["summary"]


def test_jobs_minus_one_counts_the_cpus_this_process_may_use(monkeypatch):
    # The progress line's time left divides by the workers; --jobs -1 counted
    # os.cpu_count() (64 here) where joblib runs one worker per usable CPU (2).
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert _runner._workers(-1) == 2 and _runner._workers(3) == 3


def test_parallel_jobs_give_the_same_rows(tmp_path):
    kw = dict(SMALL, seeds=[3], depths=[2])
    serial = run_experiment("shortest-path", out=tmp_path / "a", **kw)
    parallel = run_experiment("shortest-path", out=tmp_path / "b", jobs=2, **kw)
    assert no_time(serial["rows"]) == no_time(parallel["rows"])


def test_a_registered_method_runs_in_parallel_workers(tmp_path, monkeypatch):
    """Worker processes know only the built-in methods: a registered one failed there
    with KeyError (and a replaced built-in would have run as the original)."""
    monkeypatch.setitem(METHODS, "MyCART", Method("MyCART", spotree.SPOTree, "tree",
                                                  {"criterion": "mse"}))
    monkeypatch.setitem(METHODS, "SPOT", Method("SPOT", spotree.SPOTree, "tree",
                                                {"criterion": "mse"}))
    kw = dict(SMALL, seeds=[3], depths=[2], methods=["MyCART", "SPOT", "CART"])
    res = run_experiment("shortest-path", out=tmp_path, jobs=2, **kw)
    assert not res["errors"]
    rows = {}
    for r in no_time(res["rows"]):
        key = (r["degree"], r["noise"])
        rows.setdefault(r["method"], {})[key] = (r["normalized_spo_loss"], r["n_leaves"])
    # Both fit CART (criterion mse) on the same data: the built-in CART's results.
    assert rows["MyCART"] == rows["CART"] == rows["SPOT"]


def test_dask_scheduler_runs_the_grid(tmp_path):
    distributed = pytest.importorskip("distributed")
    kw = dict(SMALL, seeds=[4], depths=[1], methods=["SPOT"])
    serial = run_experiment("shortest-path", out=tmp_path / "a", **kw)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        res = run_experiment("shortest-path", out=tmp_path / "b",
                             scheduler=cluster.scheduler_address, **kw)
    assert [r["normalized_spo_loss"] for r in res["rows"]] == \
        [r["normalized_spo_loss"] for r in serial["rows"]]


def test_illustrative_spot_finds_the_true_boundary_and_cart_does_not(tmp_path):
    mpimg = pytest.importorskip("matplotlib.image")
    res = run_experiment("illustrative", out=tmp_path, depths=[1, 4], progress=False)
    by = {(r["method"], r["depth"]): r for r in res["rows"]}
    true = (0.1 + math.sqrt(1.75)) / 5
    spot = by[("SPOT", 1)]
    assert abs(spot["root_threshold"] - true) < 0.01
    assert abs(float(spot["decision_boundaries"]) - true) < 0.01
    assert spot["normalized_spo_loss"] < 1e-3 and spot["wrong_decisions"] < 0.01
    cart = by[("CART", 1)]
    assert abs(cart["root_threshold"] - 0.62) < 0.01
    assert cart["decision_boundaries"] == "none"  # always road 1
    assert 0.25 < cart["wrong_decisions"] < 0.31
    assert by[("CART", 4)]["normalized_spo_loss"] < cart["normalized_spo_loss"]
    img = mpimg.imread(res["files"]["illustrative.png"])
    assert img[..., :3].std() > 0.05
    assert "illustrative.png" in (tmp_path / "summary.md").read_text()


def test_news_on_synthetic_data_says_so(tmp_path):
    res = run_experiment("news", quick=True, out=tmp_path, seeds=[0], depths=[2],
                         progress=False, figures=False)
    assert "synthetic" in res["summary"]
    for r in res["rows"]:
        assert 0 < r["click_probability"] <= r["optimal_click_probability"] + 1e-12


def test_news_on_a_synthetic_yahoo_log(tmp_path):
    from spotree.datasets._yahoo import write_synthetic_r6

    (tmp_path / "log").mkdir()
    write_synthetic_r6(tmp_path / "log" / "ydata.gz", 6000, n_articles=10, random_state=2)
    res = run_experiment("news", quick=True, out=tmp_path / "out", seeds=[0], depths=[2],
                         data=tmp_path / "log", progress=False, figures=False,
                         data_options={"n_user_clusters": 30, "min_records": 5})
    assert not res["errors"]
    assert "R6A" in res["summary"] and res["rows"][0]["data"].startswith("yahoo-")
    npz = [f for f in os.listdir(tmp_path / "out" / "cache") if f.endswith(".npz")]
    assert len(npz) == 1  # the preprocessed log is cached for the next run
    rows = read_csv(tmp_path / "out" / "results.csv")
    assert len(rows) == 2 and json.dumps(rows)
    # A damaged cache of the preprocessed log is rebuilt, as a damaged run is (it
    # raised BadZipFile on every later run until deleted by hand).
    cache = tmp_path / "out" / "cache" / npz[0]
    kept = dict(np.load(cache))
    cache.write_bytes(cache.read_bytes()[:100])
    for f in (tmp_path / "out" / "cache").glob("*.json"):
        f.unlink()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        res = run_experiment("news", quick=True, out=tmp_path / "out", seeds=[0], depths=[2],
                             data=tmp_path / "log", progress=False, figures=False,
                             data_options={"n_user_clusters": 30, "min_records": 5})
        gc.collect()
    # np.load left the damaged file open (a ResourceWarning when collected).
    assert not [str(w.message) for w in caught if w.category is ResourceWarning]
    assert not res["errors"] and res["n_cached"] == 0
    with np.load(cache) as z:
        assert sorted(z.files) == sorted(kept)
        for k in kept:
            np.testing.assert_array_equal(z[k], kept[k])


def test_without_matplotlib_tables_are_written_and_figures_skipped(tmp_path, monkeypatch):
    import io

    from spotree import _compat

    monkeypatch.setattr(_compat, "MATPLOTLIB_INSTALLED", False)
    err = io.StringIO()
    res = run_experiment("shortest-path", out=tmp_path, stream=err,
                         **dict(SMALL, seeds=[0], depths=[1], figures=True, progress=True))
    assert "pip install spotree[plot]" in err.getvalue()
    assert sorted(res["files"]) == ["results.csv", "summary.md"]
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".png")]


def test_cache_keys_change_with_the_library_code(monkeypatch):
    from spotree.experiments import _configs

    runs = _configs.make_grid("illustrative", quick=True)
    keys = {_configs.run_key(r) for r in runs}
    # Another version of the code gives other keys, so stale results are recomputed.
    monkeypatch.setattr(_configs, "_FINGERPRINT", ["0123456789ab"])
    other = _configs.make_grid("illustrative", quick=True)
    assert keys.isdisjoint({_configs.run_key(r) for r in other})
    assert all(r["code"] == "0123456789ab" for r in other)


# ------------------------------------------------ structure, honesty, Ctrl-C
def _relative_imports(path):
    """Modules of spotree.experiments imported by ``path``, at any depth of the file."""
    import ast

    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.add(node.module.split(".")[0])
            else:
                out.update(a.name for a in node.names)
    return out


def test_experiment_modules_import_one_way():
    """_configs <- _tables, _figures, _pyepo, _energy <- _runner: no cycle, even inside
    functions."""
    pkg = os.path.dirname(spotree.experiments.__file__)
    from pathlib import Path

    graph = {p.stem: _relative_imports(p) for p in Path(pkg).glob("_*.py")}
    assert graph["_configs"] == set()
    assert graph["_tables"] <= {"_configs"} and graph["_figures"] <= {"_configs"}
    assert graph["_pyepo"] <= {"_configs"} and graph["_energy"] <= {"_configs"}
    assert graph["_runner"] <= {"_configs", "_tables", "_figures", "_pyepo", "_energy"}
    # And in general: a topological order exists.
    done = set()
    while len(done) < len(graph):
        ready = [m for m in graph if m not in done and graph[m] & set(graph) <= done]
        assert ready, f"import cycle among {sorted(set(graph) - done)}"
        done.update(ready)


class WarningTree(spotree.SPOTree):
    def fit(self, X, C, sample_weight=None):
        import warnings

        warnings.warn("something the user should see", UserWarning)
        return super().fit(X, C, sample_weight=sample_weight)


def test_warnings_inside_a_run_reach_the_caller(tmp_path, monkeypatch):
    monkeypatch.setitem(METHODS, "Warns", Method("Warns", WarningTree, "tree"))
    with pytest.warns(UserWarning, match="something the user should see"):
        run_experiment("shortest-path", out=tmp_path,
                       **dict(SMALL, seeds=[0], depths=[1], methods=["Warns"]))


FITS = []


class InterruptedTree(spotree.SPOTree):
    """Ctrl-C arrives during the 6th fit (warm-up included)."""

    wrap = False

    def fit(self, X, C, sample_weight=None):
        FITS.append(X.shape[0])
        if len(FITS) == 6:
            if self.wrap:  # what numba does when the interrupt hits compiled code
                try:
                    raise KeyboardInterrupt
                except KeyboardInterrupt as exc:
                    raise SystemError("CPUDispatcher(<function _grow>) returned a result "
                                      "with an exception set") from exc
            raise KeyboardInterrupt
        return super().fit(X, C, sample_weight=sample_weight)


@pytest.mark.parametrize("wrapped", [False, True])
def test_ctrl_c_stops_the_experiment_and_keeps_finished_runs(tmp_path, monkeypatch, wrapped):
    FITS.clear()
    monkeypatch.setattr(InterruptedTree, "wrap", wrapped)
    monkeypatch.setattr(_runner, "_WARM", {})
    monkeypatch.setitem(METHODS, "Stop", Method("Stop", InterruptedTree, "tree"))
    with pytest.raises(KeyboardInterrupt):
        run_experiment("shortest-path", out=tmp_path,
                       **dict(SMALL, seeds=[0, 1, 2], depths=[1], methods=["Stop"]))
    assert len(FITS) == 6  # stopped at once: no further run started
    # The warm-up and 4 runs finished: 4 complete cache files, no summary, no table.
    cached = os.listdir(tmp_path / "cache")
    assert len(cached) == 4
    for f in cached:
        assert json.loads((tmp_path / "cache" / f).read_text())["run"]["method"] == "Stop"
    assert sorted(os.listdir(tmp_path)) == ["cache"]


SIZES = []


class SizeTree(spotree.SPOTree):
    def fit(self, X, C, sample_weight=None):
        SIZES.append((self.criterion, X.shape[0]))
        return super().fit(X, C, sample_weight=sample_weight)


def test_each_method_is_warmed_up_before_its_timed_fits(tmp_path, monkeypatch):
    SIZES.clear()
    monkeypatch.setattr(_runner, "_WARM", {})
    monkeypatch.setitem(METHODS, "S1", Method("S1", SizeTree, "tree", {"criterion": "spo"}))
    monkeypatch.setitem(METHODS, "S2", Method("S2", SizeTree, "tree", {"criterion": "mse"}))
    res = run_experiment("shortest-path", out=tmp_path,
                         **dict(SMALL, seeds=[0, 1], depths=[2], methods=["S1", "S2"]))
    # n_train = 200 with 20% validation: timed fits see 160 rows, warm-ups fewer, and
    # each method's warm-up comes before its first timed fit.
    for crit in ("spo", "mse"):
        sizes = [n for c, n in SIZES if c == crit]
        assert sizes[0] < 160 and sizes[1:] == [160] * 8
    assert res["warmup_seconds"] > 0
    assert "2 warm-up fits" in res["summary"] and "Compilation is not included" in \
        res["summary"]
    again = run_experiment("shortest-path", out=tmp_path,
                           **dict(SMALL, seeds=[0, 1], depths=[2], methods=["S1", "S2"]))
    assert "no runs were fitted" in again["summary"]


def test_progress_estimates_time_left_from_finished_runs_only():
    import io

    stream = io.StringIO()
    prog = _runner._Progress("x", stream=stream)
    todo = [{"method": m} for m in ("A", "A", "A", "B", "B", "B")]
    prog.start(todo, total=6, cached=0, workers=1)
    assert "compiling" in prog.eta() and "left" not in prog.eta()
    prog.finished({"run": {"method": "A"}, "row": {}, "seconds": 2.0})
    assert "left" not in prog.eta() and "first B run" in prog.eta()
    prog.finished({"run": {"method": "B"}, "row": {}, "seconds": 4.0})
    # A: 2 left x 2 s, B: 2 left x 4 s.
    assert prog.eta() == ", about 12s left"
    prog.finished({"run": {"method": "A"}, "row": {}, "seconds": 4.0})
    assert prog.eta() == ", about 11s left"  # A: 1 x mean(2, 4) + B: 2 x 4
    prog.workers = 2
    assert prog.eta() == ", about 6s left"  # 11 s of work over 2 workers
    prog.workers = 4
    assert prog.eta() == ", about 4s left"  # 11 s over the 3 workers with runs to do
    prog.workers = 2
    prog.finished({"run": {"method": "A"}, "error": "boom"})
    assert prog.errors == 1 and prog.eta() == ", about 4s left"  # only B: 2 x 4 s / 2
    prog.update(force=True)
    last = stream.getvalue().splitlines()[-1]
    assert last.startswith("[x] 4/6 runs (0 cached, 1 failed), ")
    assert last.endswith(", about 4s left")


def test_bad_arguments_create_no_folder(tmp_path):
    out = tmp_path / "out"
    for kw, match in ((dict(methods=["Bogus"]), "unknown method"),
                      (dict(n_train=[7]), "--n-train"),
                      (dict(jobs=0), "jobs"),
                      # (True ran as jobs=1 without a word.)
                      (dict(jobs=True), "jobs"),
                      (dict(methods=["SPOT Optimal"], depths=[None]), "no runs"),
                      (dict(data=tmp_path), "only used by the news")):
        with pytest.raises(ValueError, match=match):
            run_experiment("shortest-path", out=out, **dict(SMALL, **kw))
    with pytest.raises(FileNotFoundError):
        run_experiment("news", out=out, data=tmp_path / "no-such-log", progress=False)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("method", ["SPO Forest", "CART Forest"])
def test_illustrative_refuses_forests_before_any_run(tmp_path, method):
    """'spotree reproduce illustrative --methods "SPO Forest"' was accepted and every run
    failed with "KeyError: 'n_estimators'" (the illustrative runs carry no forest
    settings, no validation rows to tune max_features on, and a forest has no root split
    for the table): the grid now refuses forests with a message, before any folder."""
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=f"--methods '{method}': the illustrative experiment "
                                         "compares single trees"):
        run_experiment("illustrative", out=out, methods=["SPOT", method], progress=False,
                       figures=False)
    assert not out.exists()
    # Every other method of the experiments makes runs that this experiment can fit.
    runs = make_grid("illustrative", methods=["SPOT", "CART", "SPOT Optimal"], depths=[1])
    assert [r["method"] for r in runs] == ["SPOT", "CART", "SPOT Optimal"]


@pytest.mark.parametrize("experiment, kw, match", [
    ("shortest-path", dict(n_train=[200, 500]), r"--n-train must be among \[200, 10000\] "
                                                r"for this grid; got \[200, 500\]"),
    ("shortest-path", dict(n_train=[200, 10000], quick=True), r"among \[200\] for this "
                                                              r"grid; got \[200, 10000\]"),
    ("illustrative", dict(n_train=[500]), "--n-train applies to the shortest-path and pyepo"),
    ("news", dict(n_train=[500]), "--n-train applies to the shortest-path and pyepo"),
])
def test_training_sizes_outside_the_grid_are_refused_not_dropped(experiment, kw, match):
    """--n-train 200,500 ran the n = 200 runs and dropped 500 without a word (only a
    list with no size of the grid was refused); the illustrative and news grids ignored
    n_train altogether."""
    with pytest.raises(ValueError, match=match):
        make_grid(experiment, methods=["SPOT"], **kw)
    assert {r["n_train"] for r in make_grid("shortest-path", methods=["SPOT"],
                                            n_train=[10000])} == {10000}


@pytest.mark.parametrize("experiment", ["shortest-path", "illustrative", "news", "pyepo"])
def test_numpy_seeds_and_depths_are_ints(experiment):
    """seeds=np.arange(2) went into the runs as numpy ints, and the run's cache key (JSON)
    failed: "Object of type int64 is not JSON serializable" (shortest-path, illustrative,
    news). They are now the same runs as with Python ints; other values are named."""
    methods = ["LS"] if experiment == "pyepo" else ["SPOT"]
    depths = None if experiment == "pyepo" else [1, None]
    plain = make_grid(experiment, seeds=[0, 1], methods=methods, depths=depths)
    numpy = make_grid(experiment, seeds=np.arange(2), methods=methods,
                      depths=None if depths is None else [np.int64(1), None])
    assert [_configs.run_key(r) for r in numpy] == [_configs.run_key(r) for r in plain]
    for seeds, match in (([1.5], "seeds must be ints in [0, 2**32 - 1]; got 1.5"),
                         ([-1], "seeds must be ints in [0, 2**32 - 1]; got -1"),
                         ([True], "seeds must be ints in [0, 2**32 - 1]; got True"),
                         ([], "seeds must name at least one value")):
        with pytest.raises(ValueError, match=re.escape(match)):
            make_grid(experiment, seeds=seeds, methods=methods)
    if experiment != "pyepo":
        with pytest.raises(ValueError, match=re.escape("depths must be ints >= 1 or None; "
                                                       "got 0")):
            make_grid(experiment, depths=[0], methods=methods)
    else:  # degree 1.5 ran as degree 1, n_train 100.7 as 100
        with pytest.raises(ValueError, match=re.escape("--degrees must be ints >= 1; got 1.5")):
            make_grid(experiment, degrees=[1.5], methods=methods)
        with pytest.raises(ValueError, match=re.escape("--n-train must be ints >= 1; got 100.7")):
            make_grid(experiment, n_train=[100.7], methods=methods)


BACKENDS = []


class BackendForest(spotree.SPOForest):
    def _grow(self, *args, **kwargs):
        from joblib.parallel import get_active_backend

        BACKENDS.append(type(get_active_backend()[0]).__name__)
        return super()._grow(*args, **kwargs)


def test_runs_in_dask_workers_do_not_nest_joblib_calls(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    BACKENDS.clear()
    monkeypatch.setitem(METHODS, "BF", Method("BF", BackendForest, "forest"))
    kw = dict(SMALL, seeds=[0], methods=["BF"])
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        res = run_experiment("shortest-path", out=tmp_path,
                             scheduler=cluster.scheduler_address, **kw)
    assert not res["errors"] and len(res["rows"]) == 4
    # Inside a worker a forest's trees are grown right there, one after the other.
    assert BACKENDS and set(BACKENDS) == {"SequentialBackend"}


def test_method_names_are_known_before_any_estimator_loads():
    # `spotree reproduce --methods` checks names against METHODS: listing them
    # must not import the estimators (scikit-learn, numba: over a second).
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = ("import json, sys\n"
            "from spotree.experiments import METHODS\n"
            "names = list(METHODS)\n"
            "before = [m in sys.modules for m in ('numpy', 'sklearn', 'spotree.tree',"
            " 'spotree.experiments._runner')]\n"
            "cls = METHODS['CART'].estimator\n"
            "print(json.dumps([names[:5], before, cls.__module__, 'spotree.tree' in sys.modules,"
            " 'spotree.forest' in sys.modules]))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [root] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=root, timeout=120)
    assert res.returncode == 0, res.stderr
    names, before, module, tree_loaded, forest_loaded = json.loads(res.stdout.splitlines()[-1])
    assert names == ["SPOT", "CART", "SPOT Optimal", "SPO Forest", "CART Forest"]
    assert before == [False, False, False, False]
    # A method read loads its estimator's module, and no other.
    assert module == "spotree.tree._classes" and tree_loaded and not forest_loaded


@pytest.mark.parametrize("name", ["SPOT", "SPOT Optimal", "SPO Forest"])
def test_news_leaves_hold_10000_records_by_weight(name):
    """The paper's news leaves hold 10,000 records "computed using the sample weights".
    As min_samples_leaf=10000 (which counts rows, here user clusters) no tree could
    split: every news tree was a single leaf and SPOT equalled CART."""
    from spotree.problems import news_recommendation

    run = make_grid("news", quick=True, seeds=[0], depths=[2], methods=[name])[0]
    assert run["min_leaf_weight"] == 10000 and "min_samples_leaf" not in run
    d = _runner.news_synthetic_data(run["synthetic_sizes"])
    X, C, sw = d["X_train"], d["C_train"], d["sample_weight_train"]
    assert X.shape[0] < 10000  # rows: a row count of 10000 allows no split
    est, _, _ = _runner._fit_method(METHODS[name], news_recommendation(random_state=0), run,
                                    X, C, sw, d["X_val"], d["C_val"], d["sample_weight_val"])
    for tree in getattr(est, "estimators_", [est]):
        assert tree.get_n_leaves() > 1
    if name == "SPOT":  # every leaf's training weight, summed by hand
        leaf_weight = {}
        for leaf, w in zip(est.apply(X), sw):
            leaf_weight[leaf] = leaf_weight.get(leaf, 0.0) + w
        assert len(leaf_weight) == est.get_n_leaves() and min(leaf_weight.values()) >= 10000
    if name == "SPOT Optimal":  # rows that hold 10,000 records on average
        rows = np.bincount(est.apply(X))
        assert rows[rows > 0].min() >= math.ceil(10000 / sw.mean())


def test_illustrative_table_with_several_seeds_shows_the_seed(tmp_path):
    """With --seeds 2 the table listed one row per run and no seed: rows looked repeated."""
    res = run_experiment("illustrative", out=tmp_path, seeds=[0, 1], depths=[1],
                         methods=["SPOT"], progress=False, figures=False)
    table = [ln for ln in res["summary"].splitlines() if ln.startswith("| SPOT | 1 |")]
    assert [ln.split(" | ")[2] for ln in table] == ["0", "1"]
    header = next(ln for ln in res["summary"].splitlines() if ln.startswith("| method |"))
    assert header.split(" | ")[2] == "seed" and header.count("|") == table[0].count("|")
    one = run_experiment("illustrative", out=tmp_path, seeds=[0], depths=[1],
                         methods=["SPOT"], progress=False, figures=False)
    assert "| seed |" not in one["summary"]


def test_cached_illustrative_rows_use_only_fingerprinted_code(monkeypatch):
    """A run's row is cached under the hash of the library code minus the CLI and the
    plots, so nothing in a row may come from spotree.plotting: the illustrative row's
    learned boundaries did, and an edit there kept serving the old boundaries."""
    import spotree.plotting

    def wrong(*args, **kwargs):
        raise AssertionError("a cached row was computed by spotree.plotting")

    monkeypatch.setattr(spotree.plotting, "decision_boundaries", wrong)
    monkeypatch.setattr(spotree.plotting, "_boundaries", wrong)
    run = dict(make_grid("illustrative", depths=[2], methods=["CART"], seeds=[0])[0],
               n_train=2000, n_test=100)
    rec = _runner.execute_run(run)
    assert "error" not in rec, rec.get("error")
    # By hand: midpoints of the grid steps where the decision changes.
    x, W = np.asarray(rec["extra"]["x"]), np.asarray(rec["extra"]["W_pred"])
    mids = [0.5 * (x[i] + x[i + 1]) for i in range(len(x) - 1) if not np.array_equal(W[i], W[i + 1])]
    assert rec["row"]["decision_boundaries"] == (" ".join(f"{b:.3f}" for b in mids) or "none")


def test_a_method_replaced_by_another_estimator_is_not_served_from_the_cache(tmp_path,
                                                                                monkeypatch):
    """A run's cache key held the method's name and parameters, not its estimator
    class or kind: registering another estimator under a built-in name (same
    parameters) was answered with the built-in's cached results, never fitted."""
    fitted = []

    class Logged(spotree.SPOTree):
        def fit(self, X, C, sample_weight=None):
            fitted.append(X.shape[0])
            return super().fit(X, C, sample_weight=sample_weight)

    kw = dict(SMALL, seeds=[0], depths=[1], methods=["SPOT"])
    first = run_experiment("shortest-path", out=tmp_path, **kw)
    assert first["n_cached"] == 0
    monkeypatch.setitem(METHODS, "SPOT", Method("SPOT", Logged, "tree", {"criterion": "spo"}))
    fitted.clear()
    again = run_experiment("shortest-path", out=tmp_path, **kw)
    # The 4 degree/noise settings, each fitted on its 160 training rows.
    assert again["n_cached"] == 0 and fitted.count(160) == 4
    # ... and once it is cached, the same registration is reused.
    fitted.clear()
    third = run_experiment("shortest-path", out=tmp_path, **kw)
    assert third["n_cached"] == 4 and fitted == []


def test_the_preprocessed_news_log_of_other_code_is_not_reused(tmp_path, monkeypatch):
    """Runs of other library code are recomputed (their key holds the code's hash),
    but the preprocessed Yahoo! log was cached under the files and options only:
    the new runs were fitted on the old code's preprocessing."""
    from spotree.datasets._yahoo import write_synthetic_r6
    from spotree.experiments import _configs

    (tmp_path / "log").mkdir()
    write_synthetic_r6(tmp_path / "log" / "ydata.gz", 3000, n_articles=10, random_state=2)
    calls = []
    real = _runner.load_yahoo_r6

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(_runner, "load_yahoo_r6", counting)
    kw = dict(quick=True, out=tmp_path / "out", seeds=[0], depths=[2], methods=["SPOT"],
              data=tmp_path / "log", progress=False, figures=False,
              data_options={"n_user_clusters": 20, "min_records": 5})
    assert not run_experiment("news", **kw)["errors"] and len(calls) == 1
    assert run_experiment("news", **kw)["n_cached"] == 1 and len(calls) == 1
    monkeypatch.setattr(_configs, "_FINGERPRINT", ["0123456789ab"])  # other code
    res = run_experiment("news", **kw)
    assert res["n_cached"] == 0 and len(calls) == 2


def test_optimal_trees_stopped_by_the_time_limit_are_reported(tmp_path, monkeypatch):
    """'SPOT Optimal' stops at its time limit (60 s, the paper's 12 hours) with the best
    tree found so far; its rows and tables did not say which trees were proven
    optimal, so a search cut short read as an optimal tree."""
    quick = Method("SPOT Optimal", spotree.OptimalSPOTree, "optimal",
                   {"time_limit": 1e-9})
    monkeypatch.setitem(METHODS, "SPOT Optimal", quick)
    kw = dict(SMALL, seeds=[0], depths=[2], methods=["SPOT Optimal"])
    res = run_experiment("shortest-path", out=tmp_path, **kw)
    assert not res["errors"] and len(res["rows"]) == 4
    # Each run's own fit, by hand: the same data and settings, its status.
    for r in res["rows"]:
        ss = np.random.SeedSequence([0, 200, r["degree"], int(round(1000 * r["noise"]))])
        rng = np.random.RandomState(ss.generate_state(1)[0])
        X, C = spotree.datasets.make_shortest_path(200, degree=r["degree"], noise=r["noise"],
                                                   random_state=rng)
        est = spotree.OptimalSPOTree(spotree.ShortestPath((4, 4)), max_depth=2,
                                     min_samples_leaf=20, time_limit=1e-9,
                                     random_state=0).fit(X[40:], C[40:])
        assert r["search_status"] == est.result_["status"] == "time_limit"
    assert "SPOT Optimal: 4 of 4 trees stopped at the time limit" in res["summary"]
    # With time to finish, every search proves its tree optimal and nothing is noted.
    monkeypatch.setitem(METHODS, "SPOT Optimal", Method(
        "SPOT Optimal", spotree.OptimalSPOTree, "optimal", {"time_limit": 60}))
    res = run_experiment("shortest-path", out=tmp_path / "b", **kw)
    assert {r["search_status"] for r in res["rows"]} == {"optimal"}
    assert "stopped at the time limit" not in res["summary"]


def test_fit_time_leaves_out_the_validation_score_of_the_row(monkeypatch):
    """A pruned tree's fit time included the validation loss computed afterwards for
    the row (a predict and a solve of every validation row: a quarter of SPOT's
    reported fit time at n = 200). A fake clock that only the scoring moves shows
    whether the scoring is inside the timed span."""
    import types

    now = [0.0]
    monkeypatch.setattr(_runner, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    real = _runner.normalized_spo_loss

    def scoring(*args, **kwargs):
        now[0] += 1000.0
        return real(*args, **kwargs)

    monkeypatch.setattr(_runner, "normalized_spo_loss", scoring)
    run = make_grid("shortest-path", quick=True, seeds=[0], methods=["SPOT"], depths=[1])[0]
    row, _ = _runner._run_shortest_path(run)
    assert "val_normalized_spo_loss" in row
    assert row["fit_time"] == 0.0  # the fit itself does not move the fake clock


def test_news_scores_are_weighted_by_the_test_clusters_records():
    """The click probability and the normalized regret of a news run weigh each test
    user cluster by its records; both unweighted went unseen. A one-leaf tree (its
    leaf weight is the whole training weight) decides for the weighted mean of the
    training costs; every decision here is scipy's linprog on the run's LP."""
    from scipy.optimize import linprog

    from spotree.experiments._runner import _run_news, news_synthetic_data
    from spotree.problems import news_recommendation

    run = next(r for r in make_grid("news", quick=True, seeds=[1], depths=[2])
               if r["method"] == "CART")
    run["min_leaf_weight"] = 10 ** 9
    data = news_synthetic_data((40, 20, 30), random_state=3)
    row, _ = _run_news(run, data)
    assert row["n_leaves"] == 1
    lp = news_recommendation(n_articles=6, random_state=1)

    def best(c):  # a maximization
        res = linprog(-c, A_ub=lp.A_ub, b_ub=lp.b_ub, A_eq=lp.A_eq, b_eq=lp.b_eq,
                      bounds=lp.bounds, method="highs")
        return res.x, -res.fun

    w_fit = np.average(data["C_train"], weights=data["sample_weight_train"], axis=0)
    W = best(w_fit)[0]
    Ct, wt = data["C_test"], data["sample_weight_test"]
    z = np.array([best(c)[1] for c in Ct])
    got = Ct @ W
    assert row["click_probability"] == pytest.approx(np.dot(wt, got) / wt.sum(), rel=1e-6)
    assert row["optimal_click_probability"] == pytest.approx(np.dot(wt, z) / wt.sum(), rel=1e-6)
    assert row["normalized_spo_loss"] == pytest.approx(
        np.dot(wt, z - got) / np.dot(wt, np.abs(z)), rel=1e-6)
    assert abs(np.mean(got) - np.dot(wt, got) / wt.sum()) > 1e-4


def test_the_first_rows_validate_and_their_count_is_rounded():
    """Paper 5.1: the first validation_fraction of the training rows validate. Taking
    the last rows, or truncating 0.3 * 9 = 2.7 to 2, went unseen (the grid's sizes
    times 0.2 are whole numbers, and the rows are exchangeable)."""
    X = np.arange(9.0).reshape(-1, 1)
    C = np.column_stack([np.arange(9.0), -np.arange(9.0)])
    sw = np.arange(9.0) + 1
    X_fit, C_fit, X_val, C_val, sw_fit, sw_val = _runner._split_validation(X, C, 0.3, sw)
    assert X_val.ravel().tolist() == [0, 1, 2] and X_fit.ravel().tolist() == list(range(3, 9))
    assert C_val[:, 0].tolist() == [0, 1, 2] and C_fit[:, 1].tolist() == [-k for k in range(3, 9)]
    assert sw_val.tolist() == [1, 2, 3] and sw_fit.tolist() == list(range(4, 10))


def test_the_illustrative_test_rows_are_a_draw_of_their_own():
    """The test rows are make_illustrative's draw with seed + 1000, not the training
    rows again (scoring on the training draw went unseen). Reference: a CART stump on
    the training draw, its decisions chosen by hand between the two roads."""
    from spotree import FiniteDecisions, SPOTree
    from spotree.datasets import make_illustrative
    from spotree.experiments._runner import _run_illustrative

    run = next(r for r in make_grid("illustrative", seeds=[4])
               if (r["method"], r["depth"]) == ("CART", 1))
    run.update(n_train=60, n_test=50)
    row, _ = _run_illustrative(run)
    X, C = make_illustrative(60, random_state=4)
    Xt, Ct = make_illustrative(50, random_state=1004)
    assert not np.allclose(Xt, X[:50])
    ref = SPOTree(FiniteDecisions(np.eye(2)), criterion="mse", max_depth=1,
                  random_state=4).fit(X, C)
    P = ref.predict(Xt)
    got = Ct[np.arange(50), np.argmin(P, axis=1)]
    expected = (got - Ct.min(axis=1)).sum() / np.abs(Ct.min(axis=1)).sum()
    assert row["normalized_spo_loss"] == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert row["wrong_decisions"] == pytest.approx(np.mean(got > Ct.min(axis=1)))


def test_cache_records_are_strict_json_and_older_ones_with_nan_literals_still_read(
        tmp_path, monkeypatch):
    # The cache records were written with json.dump's NaN and Infinity
    # literals (a NaN score), which strict JSON readers (JavaScript's
    # JSON.parse, jq, json.loads with parse_constant refusing them) reject.
    real = _runner.execute_run

    def with_nonfinite(run, data=None):
        rec = real(run, data)
        rec["row"]["normalized_spo_loss"] = float("nan")
        rec["extra"]["bounds"] = [float("-inf"), 1.0, float("inf")]
        return rec

    monkeypatch.setattr(_runner, "execute_run", with_nonfinite)
    small = dict(SMALL, seeds=[0], methods=["CART"], depths=[1])
    first = run_experiment("shortest-path", out=tmp_path, **small)
    n = first["n_runs"]
    files = sorted((tmp_path / "cache").glob("*.json"))
    assert len(files) == n > 0

    def refuse(name):
        raise ValueError(f"non-finite literal {name}")

    for f in files:
        rec = json.loads(f.read_text(), parse_constant=refuse)
        assert rec["row"]["normalized_spo_loss"] == {"__float__": "NaN"}
        assert rec["extra"]["bounds"] == [{"__float__": "-Infinity"}, 1.0,
                                          {"__float__": "Infinity"}]

    def reread():
        monkeypatch.setattr(_runner, "execute_run", lambda run, data=None: 1 / 0)
        res = run_experiment("shortest-path", out=tmp_path, **small)
        assert res["n_cached"] == n and not res["errors"]
        assert all(math.isnan(r["normalized_spo_loss"]) for r in res["rows"])
        keep = [{k: v for k, v in r.items() if k != "normalized_spo_loss"}
                for r in res["rows"]]
        assert keep == [{k: v for k, v in r.items() if k != "normalized_spo_loss"}
                        for r in first["rows"]]

    reread()
    # A cache file of an older spotree, written with the literals, is still read.
    for f in files:
        rec = json.loads(f.read_text())
        rec["row"]["normalized_spo_loss"] = float("nan")
        rec["extra"]["bounds"] = [float("-inf"), 1.0, float("inf")]
        f.write_text(json.dumps(rec))
        assert "NaN" in f.read_text() and "-Infinity" in f.read_text()
    reread()


@pytest.mark.parametrize("experiment", ["shortest-path", "illustrative", "news", "pyepo"])
def test_a_seed_beyond_numpys_range_is_refused_before_any_folder(tmp_path, experiment):
    """--seeds 4294967296 (2**32) made the grid, created the output folder and then every
    run failed on "random_state must be an int in [0, 2**32 - 1]"; the command said
    "rerun to retry the failed ones", which failed again. The grid now refuses it."""
    out = tmp_path / "out"
    methods = ["LS"] if experiment == "pyepo" else ["SPOT"]
    with pytest.raises(ValueError, match=r"--seeds must be ints in \[0, 2\*\*32 - 1\]; "
                                         r"got 4294967296"):
        run_experiment(experiment, out=out, seeds=[0, 2**32], methods=methods,
                       progress=False, figures=False)
    assert not out.exists()
    assert {r.get("seed", r.get("constraint_set"))
            for r in make_grid(experiment, seeds=[2**32 - 1], methods=methods)} == {2**32 - 1}


def test_the_largest_seed_runs_the_illustrative_experiment():
    """Its test rows are drawn with seed + 1000, which passed numpy's 2**32 - 1 for the
    last 1000 seeds; the draw now wraps around (the same draw for every other seed)."""
    from spotree.datasets import make_illustrative
    from spotree.metrics import normalized_spo_loss
    from spotree.problems import FiniteDecisions

    run = make_grid("illustrative", seeds=[2**32 - 1], methods=["SPOT"], depths=[1])[0]
    row, _ = _runner._run_illustrative(dict(run, n_train=200, n_test=50))
    assert 0.0 <= row["wrong_decisions"] <= 1.0
    # Below the wrap the test draw is seed + 1000, as before.
    small = dict(make_grid("illustrative", seeds=[3], methods=["SPOT"], depths=[1])[0],
                 n_train=200, n_test=50)
    Xt, Ct = make_illustrative(50, random_state=1003)
    est = METHODS["SPOT"].estimator(FiniteDecisions(np.eye(2)), max_depth=1,
                                    random_state=3, min_samples_leaf=1)
    est.fit(*make_illustrative(200, random_state=3))
    expected = normalized_spo_loss(Ct, est.predict(Xt), problem=est.problem)
    assert _runner._run_illustrative(small)[0]["normalized_spo_loss"] == pytest.approx(expected)


def test_news_data_options_with_numpy_numbers(tmp_path):
    """data_options={"n_user_clusters": np.int64(30)} (or a float32 coverage) crashed
    run_experiment with "Object of type int64 is not JSON serializable" (the cache id of
    the preprocessed log); they now name the same data as plain numbers. A RandomState,
    which no id can name, is refused by name before any folder."""
    from spotree.datasets._yahoo import write_synthetic_r6

    (tmp_path / "log").mkdir()
    write_synthetic_r6(tmp_path / "log" / "ydata.gz", 50, random_state=2)
    plain = _runner._news_data_id(tmp_path / "log", {"n_user_clusters": 30,
                                                     "min_article_coverage": 0.5})
    numpy = _runner._news_data_id(tmp_path / "log", {
        "n_user_clusters": np.int64(30), "min_article_coverage": np.float32(0.5)})
    assert numpy[2] == plain[2] and numpy[1] == plain[1]
    assert type(numpy[1]["n_user_clusters"]) is int
    out = tmp_path / "out"
    with pytest.raises(ValueError, match="data_options random_state must be"):
        run_experiment("news", out=out, data=tmp_path / "log", progress=False,
                       data_options={"random_state": np.random.RandomState(0)})
    assert not out.exists()
