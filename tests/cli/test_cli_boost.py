"""``spotree fit --estimator boost``: SPOBoost on the command line, and its model in
every command that takes one (show, plot, predict, evaluate).

The command runs in this process (:func:`spotree.cli.main`, no start-up); each
result is checked against SPOBoost fitted in Python on the same rows, the
example CSV read with the csv module, and regrets counted over the 4x4 grid's
20 paths.
"""

import csv
import inspect
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import spotree
from spotree.cli import build_parser
from spotree.cli._commands import _make_estimator
from spotree.cli._parser import FIT_ESTIMATOR_OPTIONS

from ._helpers import assert_one_line_error, run_in_process

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TRAIN = EXAMPLES / "shortest_path_train.csv"
TEST = EXAMPLES / "shortest_path_test.csv"
NEW = EXAMPLES / "shortest_path_new.csv"
SPEC = EXAMPLES / "shortest_path.json"
FEATURES = [f"x{j}" for j in range(5)]
COSTS = [f"c{k}" for k in range(24)]
GRID = spotree.ShortestPath((4, 4))


def arrays(path, columns):
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    return np.array([[float(r[c]) for c in columns] for r in rows])


def fit_args(model, *extra, data=TRAIN, estimator="boost"):
    return ("fit", "--data", data, "--features", "x*", "--costs", "c*", "--problem", SPEC,
            "--model", model, "--estimator", estimator, *extra)


def regret_by_enumeration(W, C, w=None):
    """sum w (c.w - z*) / sum w |z*|, z* the cheapest of the grid's 20 paths."""
    w = np.ones(len(C)) if w is None else w
    z = (C @ GRID.vertices().T).min(axis=1)
    return np.dot(w, np.einsum("ij,ij->i", C, W) - z) / np.dot(w, np.abs(z))


def test_boost_fit_equals_spoboost_in_python_and_predict_evaluate_use_it(tmp_path, capsys):
    """Every boost option reaches SPOBoost: the saved model predicts what SPOBoost fitted
    in Python with the same parameters on the same (weighted) rows predicts."""
    X, C = arrays(TRAIN, FEATURES), arrays(TRAIN, COSTS)
    w = 1.0 + np.arange(len(C)) % 3  # weights 1, 2, 3
    data = tmp_path / "weighted.csv"
    pd.read_csv(TRAIN).assign(w=w).to_csv(data, index=False)
    model = tmp_path / "boost.json"
    res = run_in_process(capsys, *fit_args(
        model, "--weights", "w", "--n-estimators", "12", "--learning-rate", "0.3",
        "--max-depth", "2", "--min-samples-leaf", "10", "--subsample", "0.8",
        "--max-features", "3", "--init", "mean", "--n-iter-no-change", "4",
        "--validation-fraction", "0.25", "--random-state", "3", data=data))
    assert res.returncode == 0, res.stderr
    ref = spotree.SPOBoost(GRID, n_estimators=12, learning_rate=0.3, max_depth=2,
                           min_samples_leaf=10, subsample=0.8, max_features=3, init="mean",
                           n_iter_no_change=4, validation_fraction=0.25,
                           random_state=3).fit(X, C, sample_weight=w)
    assert ref.n_estimators_ > 0  # trees kept: the check covers them, not only the start
    assert (f"start 'mean' + {ref.n_estimators_} trees ({ref.n_estimators_} of "
            f"{ref.n_iter_} rounds kept by early stopping on a random 0.25") in res.stdout
    want = regret_by_enumeration(ref.predict_decision(X), C, w)
    assert f"training normalized SPO loss {want:.4f};" in res.stdout

    out = tmp_path / "pred.csv"
    res = run_in_process(capsys, "predict", "--model", model, "--data", NEW, "--out", out)
    assert res.returncode == 0, res.stderr
    pred = pd.read_csv(out)
    Xn = arrays(NEW, FEATURES)
    np.testing.assert_allclose(pred[[f"pred_{c}" for c in COSTS]].to_numpy(), ref.predict(Xn),
                               rtol=1e-10)
    np.testing.assert_array_equal(pred[[f"decision_{c}" for c in COSTS]].to_numpy(),
                                  ref.predict_decision(Xn))

    res = run_in_process(capsys, "evaluate", "--model", model, "--data", TEST)
    assert res.returncode == 0, res.stderr
    Xt, Ct = arrays(TEST, FEATURES), arrays(TEST, COSTS)
    want = regret_by_enumeration(ref.predict_decision(Xt), Ct)
    assert res.stdout == f"SPOBoost on 100 rows of {TEST}: normalized SPO loss {want:.4f}\n"


def test_boost_defaults_are_spoboosts_own(tmp_path, capsys):
    """Options left out take SPOBoost's defaults (300 rounds, depth 3, 20 rows per leaf,
    a 0.2 validation part), not the forest's or the tree's, and the help says so."""
    params = inspect.signature(spotree.SPOBoost).parameters
    for dest, defaults in FIT_ESTIMATOR_OPTIONS.items():
        if "boost" in defaults:
            assert defaults["boost"] == params[dest].default, dest
    base = ("fit", "--data", "d.csv", "--features", "x*", "--costs", "c*", "--problem", "p")
    est = _make_estimator(build_parser().parse_args([*base, "--estimator", "boost"]), GRID)
    assert est.get_params() == spotree.SPOBoost(GRID).get_params()
    # The help's defaults, option by option.
    text = " ".join(build_parser()._subparsers._group_actions[0].choices["fit"]
                    .format_help().split())
    for option, default in (("--n-estimators", "(default: 100; boost: 300)"),
                            ("--max-depth", "(default: none; optimal: 2; boost: 3)"),
                            ("--min-samples-leaf", "(default: 1; boost: 20)"),
                            ("--learning-rate", "(default: 0.1)"),
                            ("--n-iter-no-change", "(default: 10)"),
                            ("--validation-fraction", "(default: 0; boost: 0.2)")):
        first = re.search(r"\(default: [^)]*\)", text.split(f" {option} ", 1)[1]).group()
        assert first == default, (option, first)
    # End to end: the fit with no option equals SPOBoost() fitted in Python.
    model = tmp_path / "b.json"
    res = run_in_process(capsys, *fit_args(model, "--random-state", "0"))
    assert res.returncode == 0, res.stderr
    X, C = arrays(TRAIN, FEATURES), arrays(TRAIN, COSTS)
    ref = spotree.SPOBoost(GRID, random_state=0).fit(X, C)
    loaded = spotree.load(model)
    unsaved = {"problem": None, "random_state": None}  # model files do not keep these
    assert loaded.get_params() | unsaved == ref.get_params() | unsaved
    assert (loaded.n_iter_, loaded.n_estimators_) == (ref.n_iter_, ref.n_estimators_)
    np.testing.assert_allclose(loaded.predict(pd.DataFrame(X, columns=FEATURES)),
                               ref.predict(X), rtol=1e-12)


def test_options_that_do_not_apply_are_refused_naming_them(tmp_path, capsys):
    boost_refuses = [("--thresholds", "5"), ("--min-samples-split", "5"),
                     ("--spo-weight", "0.5"), ("--ccp-alpha", "0.1"), ("--no-ridge-features",),
                     ("--categorical-splits", "subset")]
    for extra in boost_refuses:
        res = run_in_process(capsys, *fit_args(tmp_path / "m.json", *extra))
        assert_one_line_error(res, f"{extra[0]} does not apply to --estimator boost")
    # SPOBoost's options are refused for the other estimators; an option given its
    # forest default (--n-estimators 100) was taken silently by a tree.
    others = [("tree", "--learning-rate", "0.1"), ("forest", "--init", "mean"),
              ("optimal", "--subsample", "0.5"), ("forest", "--n-iter-no-change", "none"),
              ("tree", "--n-estimators", "100")]
    for est, *extra in others:
        res = run_in_process(capsys, *fit_args(tmp_path / "m.json", *extra, estimator=est))
        assert_one_line_error(res, f"{extra[0]} does not apply to --estimator {est}")
    cases = [(("--criterion", "auto"), ["--criterion auto", "--estimator forest"], 1),
             (("--validation-fraction", "0"), ["--validation-fraction 0",
                                               "--n-iter-no-change none"], 1),
             (("--n-iter-no-change", "none", "--validation-fraction", "0.3"),
              ["--validation-fraction", "--n-iter-no-change none"], 1),
             (("--validation-fraction", "0.999"), ["--validation-fraction 0.999",
                                                   "400 of 400 rows"], 1),
             (("--learning-rate", "0"), ["--learning-rate", "(0.0, inf)"], 1),
             (("--learning-rate", "nan"), ["--learning-rate"], 1),
             (("--subsample", "1.5"), ["--subsample", "(0.0, 1.0]"], 1),
             (("--init", "zero"), ["--init", "invalid choice"], 2),
             (("--n-iter-no-change", "0"), ["--n-iter-no-change", "'none'"], 2)]
    for extra, needles, code in cases:
        assert_one_line_error(run_in_process(capsys, *fit_args(tmp_path / "m.json", *extra)),
                              *needles, code=code)
    assert os.listdir(tmp_path) == []


def test_early_stopping_counts_the_rows_of_positive_weight(tmp_path, capsys):
    # SPOBoost holds out its validation part from the rows of positive weight;
    # the command's check counted all the rows, so one row of positive weight
    # passed it and SPOBoost's error named validation_fraction, not the option.
    df = pd.read_csv(TRAIN)
    df["w"] = 0.0
    df.loc[5, "w"] = 1.0
    data = tmp_path / "weighted.csv"
    df.to_csv(data, index=False)
    res = run_in_process(capsys, *fit_args(tmp_path / "m.json", "--weights", "w", data=data))
    assert_one_line_error(res, "--validation-fraction 0.2 holds out 1 of 1 row of positive "
                               f"weight (--weights 'w'; {len(df)} in all)")
    assert not (tmp_path / "m.json").exists()


def test_show_plot_and_their_refusals_on_a_boost_model(tmp_path, capsys):
    model = tmp_path / "b.json"
    res = run_in_process(capsys, *fit_args(model, "--n-estimators", "6", "--init", "mean",
                                           "--n-iter-no-change", "none", "--random-state",
                                           "0"))
    assert res.returncode == 0, res.stderr
    loaded = spotree.load(model)
    X, C = arrays(TRAIN, FEATURES), arrays(TRAIN, COSTS)
    res = run_in_process(capsys, "show", model)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("SPOBoost for ShortestPath(grid=(4, 4)")
    assert "start 'mean' + 6 trees (6 rounds, no early stopping)" in lines[0]
    # Without early stopping the last round is the model itself, on all the rows.
    W = loaded.predict_decision(pd.DataFrame(X, columns=FEATURES))
    assert lines[-2] == f"  round 6 (kept, last): {regret_by_enumeration(W, C):.4f}"
    # The mean start alone decides the same path for every row.
    W0 = np.repeat(GRID.solve(C.mean(axis=0, keepdims=True))[0], len(C), axis=0)
    assert lines[-3] == f"  round 0 (the start): {regret_by_enumeration(W0, C):.4f}"
    shares = dict(re.findall(r"(x\d) ([0-9.]+)", lines[-1]))
    assert set(shares) <= set(FEATURES) and abs(sum(map(float, shares.values())) - 1) < 0.01

    png = tmp_path / "curve.png"
    res = run_in_process(capsys, "plot", model, "--out", png)
    if res.returncode == 1 and "matplotlib" in res.stderr:
        pytest.skip("matplotlib is not installed")
    assert res.returncode == 0, res.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for args, option in ((("show", model, "--dot"), "--dot"),
                         (("show", model, "--max-depth", "1"), "--max-depth"),
                         (("plot", model, "--out", tmp_path / "t.png", "--max-depth", "1"),
                          "--max-depth")):
        assert_one_line_error(run_in_process(capsys, *args), option, "holds a SPOBoost")
    assert sorted(os.listdir(tmp_path)) == ["b.json", "curve.png"]


def test_an_empty_numeric_feature_cell_is_refused_naming_file_line_and_column(tmp_path,
                                                                              capsys):
    """SPOBoost takes no missing values in numeric columns; its error named 'Input X',
    neither the file nor the cell."""
    holes = tmp_path / "holes.csv"
    df = pd.read_csv(TRAIN)
    df.loc[3, "x2"] = np.nan  # line 5: the header, then rows 0..3
    df.to_csv(holes, index=False)
    res = run_in_process(capsys, *fit_args(tmp_path / "m.json", data=holes))
    assert_one_line_error(res, f"{holes}, line 5, column 'x2': empty cell",
                          "--estimator boost", "--estimator tree or forest")
    model = tmp_path / "b.json"
    res = run_in_process(capsys, *fit_args(model, "--n-estimators", "2", "--n-iter-no-change",
                                           "none"))
    assert res.returncode == 0, res.stderr
    for command in ("predict", "evaluate"):
        res = run_in_process(capsys, command, "--model", model, "--data", holes)
        assert_one_line_error(res, f"{holes}, line 5, column 'x2': empty cell", "SPOBoost")
    assert sorted(os.listdir(tmp_path)) == ["b.json", "holes.csv"]


def test_show_of_a_boost_fitted_in_python_with_x_val(tmp_path, capsys):
    """A model fitted in Python on X_val is not refitted on all the rows (its file does not
    say how the validation rows came), and without early stopping X_val is only scored:
    show printed 'then refitted on all the rows' for the first and two losses under the
    heading 'on the training rows' for the second."""
    X, C = arrays(TRAIN, FEATURES), arrays(TRAIN, COSTS)
    Xf, Cf, Xv, Cv = X[:300], C[:300], X[300:], C[300:]
    # The mean start decides one path for every row: its regrets by enumeration.
    W0 = np.repeat(GRID.solve(Cf.mean(axis=0, keepdims=True))[0], len(C), axis=0)
    start = f"{regret_by_enumeration(W0[:300], Cf):.4f} / {regret_by_enumeration(W0[300:], Cv):.4f}"
    for n_iter_no_change, heading in ((2, "refitted on all the rows afterwards if the "
                                          "validation rows were held out by "
                                          "validation_fraction, not if given as X_val"),
                                      (None, "on the training rows / the validation rows "
                                             "(X_val)")):
        model = spotree.SPOBoost(GRID, n_estimators=3, init="mean",
                                 n_iter_no_change=n_iter_no_change,
                                 random_state=0).fit(Xf, Cf, X_val=Xv, C_val=Cv)
        path = tmp_path / f"b{n_iter_no_change}.json"
        model.save(path)
        res = run_in_process(capsys, "show", path)
        assert res.returncode == 0, res.stderr
        lines = res.stdout.splitlines()
        assert heading in lines[1] and "then refitted" not in res.stdout, lines[1]
        assert re.fullmatch(r"  round 0 \(the start(, kept)?\): " + start, lines[2]), lines[2]


def test_show_says_unlimited_for_a_boost_of_unrestricted_depth(tmp_path, capsys):
    """show printed 'max depth None' for trees grown without a depth limit."""
    X, C = arrays(TRAIN, FEATURES)[:60], arrays(TRAIN, COSTS)[:60]
    for depth, text in ((None, "max depth unlimited"), (2, "max depth 2")):
        path = tmp_path / f"b{depth}.json"
        spotree.SPOBoost(GRID, n_estimators=1, init="mean", max_depth=depth,
                         n_iter_no_change=None).fit(X, C).save(path)
        res = run_in_process(capsys, "show", path)
        assert res.returncode == 0, res.stderr
        first = res.stdout.splitlines()[0]
        assert first.endswith(text) and "None" not in first, first


def test_show_prints_each_loss_column_of_a_boost_alike(capsys):
    """show printed each round's loss with 4 decimals unless that one needed 4 significant
    digits: '0.2500' above '3e-05' in one column (compare's table has one format per
    column since 4acd9fd). Now the whole column switches (expected text by hand)."""
    from spotree.cli._commands import _show_boost

    X, C = arrays(TRAIN, FEATURES)[:40], arrays(TRAIN, COSTS)[:40]
    m = spotree.SPOBoost(GRID, n_estimators=2, init="mean", max_depth=1,
                         n_iter_no_change=None).fit(X, C)
    for train, want in (([0.25, 0.1, 3e-5], ["2.500e-01", "3.000e-05"]),
                        ([0.25, 0.1, 0.0123], ["0.2500", "0.0123"])):
        m.train_score_ = -np.array(train)
        _show_boost(m, None, False)
        lines = capsys.readouterr().out.splitlines()
        got = [x.rsplit(": ", 1)[1] for x in lines if x.startswith("  round ")]
        assert got == want


def test_criterion_mse_boosts_on_squared_error(tmp_path, capsys):
    """--criterion mse is SPOBoost(loss="mse"), the two-stage baseline: a mutation that
    always passed loss="spo+" went unnoticed by the tests above."""
    model = tmp_path / "mse.json"
    res = run_in_process(capsys, *fit_args(model, "--criterion", "mse", "--init", "mean",
                                           "--n-estimators", "4", "--n-iter-no-change",
                                           "none", "--random-state", "0"))
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("fitted SPOBoost (mse loss): start 'mean' + 4 trees;")
    X, C = arrays(TRAIN, FEATURES), arrays(TRAIN, COSTS)
    # The model SPOBoost(loss="mse") fitted in Python gives.
    loaded = spotree.load(model)
    assert loaded.loss == "mse"
    Xd = pd.DataFrame(X, columns=FEATURES)
    ref = spotree.SPOBoost(GRID, loss="mse", init="mean", n_estimators=4,
                           n_iter_no_change=None, random_state=0).fit(X, C)
    np.testing.assert_allclose(loaded.predict(Xd), ref.predict(X), rtol=1e-12)


def test_random_state_help_says_what_it_seeds():
    """--random-state had no help, while a boosted model fitted without it draws other
    validation rows on every run (three runs on the example: 0, 0 and 11 trees kept)."""
    text = " ".join(build_parser()._subparsers._group_actions[0].choices["fit"]
                    .format_help().split())
    helptext = text.split(" --random-state SEED ", 1)[1]
    assert helptext.startswith("seed of the estimator's random draws: boost: its validation "
                               "rows"), helptext[:120]
    assert "each run draws anew" in helptext
    # The command fits OptimalSPOTree by its search, which draws nothing (the
    # help said --random-state seeded the MILP solver, which fit never runs).
    assert "optimal: nothing" in helptext and "MILP" not in helptext
    assert spotree.OptimalSPOTree().method == "search"


def test_show_prints_a_small_feature_importance_by_its_value(tmp_path, capsys):
    """Importances were printed with three decimals: a feature of importance 4e-4,
    listed because it is positive, read "x1 0.000"."""
    import json

    X, C = arrays(TRAIN, FEATURES)[:60], arrays(TRAIN, COSTS)[:60]
    m = spotree.SPOBoost(GRID, n_estimators=2, max_depth=1, init="mean",
                         n_iter_no_change=None, random_state=0).fit(X, C)
    m.save(tmp_path / "b.json")
    doc = json.loads((tmp_path / "b.json").read_text())
    doc["fitted"]["feature_importances_"] = [0.9996, 0.0004, 0.0, 0.0, 0.0]
    (tmp_path / "b.json").write_text(json.dumps(doc))
    res = run_in_process(capsys, "show", tmp_path / "b.json")
    assert res.returncode == 0, res.stderr
    assert res.stdout.rstrip().endswith("x0 1.000, x1 0.0004"), res.stdout
