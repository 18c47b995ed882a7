"""``spotree fit --categorical``: feature columns of integer codes (a weekday 0..6) made
categorical, and such models in predict, evaluate, show and compare.

The command runs in this process (:func:`spotree.cli.main`); each saved model is checked
against the estimator fitted in Python with ``categorical_features`` on the same rows,
read from the CSV with the csv module, and regrets are counted by hand over the three
roads of a finite problem (the cheapest road's cost is the optimal value).
"""

import csv
import json

import numpy as np
import pandas as pd
import pytest

import spotree

from ._helpers import assert_one_line_error, run_in_process

ROADS = spotree.FiniteDecisions(np.eye(3))
# Road 0 is cheap except on days 1 and 4, road 2 on days 0, 3 and 6: sets of days no
# threshold on the code separates.
N = 120


def read_columns(path, columns):
    """The columns as floats, an empty cell NaN (the csv module, not pandas)."""
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    return np.array([[float(r[c]) if r[c] else np.nan for c in columns] for r in rows])


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(1)
    day = rng.integers(0, 7, N)
    noise = 0.3 * rng.normal(size=(N, 3))
    C = np.column_stack([1 + np.isin(day, [1, 4]), np.full(N, 1.5), 2 - (day % 3 == 0)])
    pd.DataFrame({"x": rng.normal(size=N).round(3), "day": day,
                  **{f"c{k}": (C[:, k] + noise[:, k]).round(3) for k in range(3)}}
                 ).to_csv(tmp_path / "train.csv", index=False)
    # Rows to predict: seen codes, a code never seen at fit (9), a missing one.
    (tmp_path / "new.csv").write_text("x,day,c0,c1,c2\n0.1,1,2,1.5,1\n-0.5,4,2,1.5,2\n"
                                      "0.3,9,1,1.5,2\n0.2,,1,1.2,1\n1.5,6,1,1.5,1\n")
    (tmp_path / "roads.json").write_text(json.dumps(
        {"type": "finite", "decisions": np.eye(3, dtype=int).tolist(), "sense": "min"}))
    return tmp_path


def frame(path):
    return pd.DataFrame(read_columns(path, ["x", "day"]), columns=["x", "day"])


def regret_by_hand(W, C):
    """sum (c.w - min c) / sum min c: one road per row."""
    z = C.min(axis=1)
    return (np.einsum("ij,ij->i", C, W) - z).sum() / np.abs(z).sum()


def fit_args(d, model, *extra):
    return ("fit", "--data", d / "train.csv", "--features", "x,day", "--costs", "c*",
            "--problem", d / "roads.json", "--model", model, "--random-state", "0", *extra)


@pytest.mark.parametrize("estimator, cli, params", [
    ("tree", ["--max-depth", "2"], dict(max_depth=2)),
    ("forest", ["--n-estimators", "4", "--max-depth", "2"],
     dict(n_estimators=4, max_depth=2, max_features="sqrt")),
    ("boost", ["--n-estimators", "5", "--init", "ridge", "--max-depth", "2"],
     dict(n_estimators=5, init="ridge", max_depth=2)),
])
def test_fit_categorical_equals_the_estimator_fitted_in_python(files, capsys, estimator, cli,
                                                                params):
    """The saved model predicts (seen, unseen and missing codes), evaluates and compares
    as the estimator fitted in Python with categorical_features=['day'] on the same rows;
    without --categorical the day is a number and the model differs."""
    d = files
    model, plain = d / f"{estimator}.json", d / "plain.json"
    for path, extra in ((model, ["--categorical", "d*"]), (plain, [])):
        res = run_in_process(capsys, *fit_args(d, path, "--estimator", estimator, *cli, *extra))
        assert res.returncode == 0, res.stderr
    cls = {"tree": spotree.SPOTree, "forest": spotree.SPOForest,
           "boost": spotree.SPOBoost}[estimator]
    X, C = frame(d / "train.csv"), read_columns(d / "train.csv", ["c0", "c1", "c2"])
    ref = cls(ROADS, categorical_features=["day"], random_state=0, **params).fit(X, C)
    assert spotree.load(model).categorical_features == ["day"]

    res = run_in_process(capsys, "predict", "--model", model, "--data", d / "new.csv")
    assert res.returncode == 0, res.stderr
    out = pd.read_csv(pd.io.common.StringIO(res.stdout))
    Xn = frame(d / "new.csv")
    assert np.isnan(Xn["day"][3]) and 9 not in set(X["day"])
    np.testing.assert_allclose(out[["pred_c0", "pred_c1", "pred_c2"]], ref.predict(Xn),
                               rtol=1e-10)
    np.testing.assert_array_equal(out.filter(like="decision_"), ref.predict_decision(Xn))
    # As the help says: an unseen code is a missing one (tree, forest), or both have
    # all-zero indicators (boost).
    loaded = spotree.load(model)
    both = pd.DataFrame({"x": [0.3, 0.3], "day": [9.0, np.nan]})
    np.testing.assert_array_equal(*loaded.predict(both))

    Cn = read_columns(d / "new.csv", ["c0", "c1", "c2"])
    res = run_in_process(capsys, "evaluate", "--model", model, "--data", d / "new.csv")
    want = regret_by_hand(ref.predict_decision(Xn), Cn)
    assert f"normalized SPO loss {want:.4f}" in res.stdout, (res.stdout, res.stderr)

    # The day as a number makes another model (no threshold separates days {1, 4}).
    numeric = cls(ROADS, random_state=0, **params).fit(X, C)
    np.testing.assert_allclose(spotree.load(plain).predict(X), numeric.predict(X), rtol=1e-10)
    assert regret_by_hand(ref.predict_decision(X), C) < regret_by_hand(
        numeric.predict_decision(X), C)
    res = run_in_process(capsys, "compare", "--data", d / "train.csv", model, plain)
    assert res.returncode == 0, res.stderr
    # The table's loss column, one row per model in the order given (printed
    # with at least 4 significant digits).
    rows = [line.strip("|").split("|") for line in res.stdout.splitlines()
            if line.startswith("|")][2:]
    assert len(rows) == 2, res.stdout
    for m, row in zip((ref, numeric), rows):
        assert float(row[1]) == pytest.approx(regret_by_hand(m.predict_decision(X), C),
                                              rel=6e-4), res.stdout
    if estimator == "tree":
        res = run_in_process(capsys, "show", model)
        assert "|--- day in {" in res.stdout, res.stdout


def test_a_python_fitted_spoboost_with_categorical_codes_predicts_on_the_cli(files, capsys):
    """A SPOBoost fitted in Python with categorical_features (its codes mapped by value)
    predicted nothing on the command line: the CSV's codes were read as text labels
    ("holds text or categories ... but was numeric"). They are numbers, as at fit."""
    d = files
    X, C = frame(d / "train.csv"), read_columns(d / "train.csv", ["c0", "c1", "c2"])
    ref = spotree.SPOBoost(ROADS, categorical_features=[1], n_estimators=3, init="ridge",
                           random_state=0).fit(X, C)
    ref.save(d / "py.json")
    # Codes written as 4.0 are the code 4, not an unseen label "4.0".
    (d / "float.csv").write_text((d / "new.csv").read_text().replace(",4,", ",4.0,"))
    for data in ("new.csv", "float.csv"):
        res = run_in_process(capsys, "predict", "--model", d / "py.json", "--data", d / data)
        assert res.returncode == 0, res.stderr
        out = pd.read_csv(pd.io.common.StringIO(res.stdout))
        np.testing.assert_allclose(out[["pred_c0", "pred_c1", "pred_c2"]],
                                   ref.predict(frame(d / "new.csv")), rtol=1e-10)
    # Text in the column of codes names the cell.
    (d / "text.csv").write_text("x,day\n0.1,Mon\n")
    assert_one_line_error(
        run_in_process(capsys, "predict", "--model", d / "py.json", "--data", d / "text.csv"),
        "text.csv, line 2, column 'day'", "'Mon' is not a number")


def test_categorical_errors_name_the_option(files, capsys):
    d = files
    cases = [(["--categorical", "c0"], ["--categorical: column(s) c0", "not features",
                                        "(x, day)"]),
             (["--categorical", "x,c*"], ["column(s) c0, c1, c2"]),
             (["--categorical", "weekday"], ["--categorical: no column 'weekday'"]),
             (["--categorical", "w*"], ["--categorical: no column 'w*'"]),
             # A repeated column was dropped silently.
             (["--categorical", "day,day"], ["--categorical: 'day' selects only column(s) "
                                             "already selected (day)"]),
             (["--categorical", "day", "--estimator", "optimal"],
              ["--categorical does not apply to --estimator optimal",
               "tree, forest and boost"])]
    for extra, needles in cases:
        assert_one_line_error(run_in_process(capsys, *fit_args(d, d / "m.json", *extra)),
                              *needles)
    assert not (d / "m.json").exists()
    # boost: an empty code is a missing category (all-zero indicators), an empty number
    # is refused.
    text = (d / "train.csv").read_text().splitlines()
    x, day = text[1].split(",")[:2]
    (d / "gap.csv").write_text("\n".join([text[0], text[1].replace(f"{x},{day},", f"{x},,"),
                                          *text[2:]]) + "\n")
    boost = ["--estimator", "boost", "--n-estimators", "2", "--init", "ridge"]
    args = list(fit_args(d, d / "m.json", *boost))
    args[args.index(d / "train.csv")] = d / "gap.csv"
    assert run_in_process(capsys, *args, "--categorical", "day").returncode == 0
    assert_one_line_error(run_in_process(capsys, *args), "gap.csv, line 2, column 'day'",
                          "missing value")


@pytest.mark.parametrize("estimator, cli, params", [
    ("tree", ["--max-depth", "1"], dict(max_depth=1)),
    ("forest", ["--n-estimators", "3", "--max-depth", "1"],
     dict(n_estimators=3, max_depth=1, max_features="sqrt")),
])
def test_categorical_splits_subset_equals_the_estimator_fitted_in_python(files, capsys,
                                                                         estimator, cli, params):
    """--categorical-splits reaches the estimator's categorical_splits: 'subset' fits the
    model SPOTree/SPOForest(categorical_splits='subset') fits in Python, 'equal' (the
    default) the other one; a depth-1 tree of 'subset' sends the days {1, 4} one way."""
    d = files
    cls = {"tree": spotree.SPOTree, "forest": spotree.SPOForest}[estimator]
    X, C = frame(d / "train.csv"), read_columns(d / "train.csv", ["c0", "c1", "c2"])
    for splits, extra in (("subset", ["--categorical-splits", "subset"]), ("equal", [])):
        path = d / f"{splits}.json"
        res = run_in_process(capsys, *fit_args(d, path, "--estimator", estimator, *cli,
                                               "--categorical", "day", *extra))
        assert res.returncode == 0, res.stderr
        ref = cls(ROADS, categorical_features=["day"], categorical_splits=splits,
                  random_state=0, **params).fit(X, C)
        loaded = spotree.load(path)
        assert loaded.categorical_splits == splits
        np.testing.assert_allclose(loaded.predict(X), ref.predict(X), rtol=1e-10)
    if estimator == "tree":
        res = run_in_process(capsys, "show", d / "subset.json")
        assert "|--- day in {1, 4}" in res.stdout, res.stdout
        assert not np.allclose(spotree.load(d / "subset.json").predict(X),
                               spotree.load(d / "equal.json").predict(X))


def test_categorical_splits_is_refused_where_it_does_nothing(files, capsys):
    d = files
    for estimator in ("boost", "optimal"):
        res = run_in_process(capsys, *fit_args(d, d / "m.json", "--estimator", estimator,
                                               "--categorical-splits", "subset"))
        assert_one_line_error(res, f"--categorical-splits does not apply to --estimator "
                                   f"{estimator}", "tree and forest")
    # No categorical feature: 'subset' has nothing to split.
    assert_one_line_error(run_in_process(capsys, *fit_args(d, d / "m.json",
                                                           "--categorical-splits", "subset")),
                          "--categorical-splits subset", "all numeric", "--categorical")
    assert_one_line_error(run_in_process(capsys, *fit_args(d, d / "m.json",
                                                           "--categorical-splits", "any")),
                          "--categorical-splits", "invalid choice", code=2,
                          prefix="spotree fit: error: argument --categorical-splits")
    assert not (d / "m.json").exists()
