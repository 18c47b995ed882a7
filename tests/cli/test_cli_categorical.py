"""Models with feature columns of integer codes (a weekday 0..6) made categorical by
``categorical_features``, in predict, evaluate, show and compare.

The command runs in this process (:func:`spotree.cli.main`); each saved model is checked
against the estimator fitted in Python with ``categorical_features`` on the same rows,
read from the CSV with the csv module, and regrets are counted by hand over the three
roads of a finite problem (the cheapest road's cost is the optimal value).
"""

import csv
import json
import subprocess

import numpy as np
import pandas as pd
import pytest

import spotree
from spotree.cli import main

ROADS = spotree.FiniteDecisions(np.eye(3))
# Road 0 is cheap except on days 1 and 4, road 2 on days 0, 3 and 6: sets of days no
# threshold on the code separates.
N = 120


def run_in_process(capsys, *args):
    capsys.readouterr()
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:  # argparse usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), code, out, err)


def assert_one_line_error(res, *needles, code=1):
    assert res.returncode == code, (res.returncode, res.stdout, res.stderr)
    err = res.stderr.strip()
    assert len(err.splitlines()) == 1 and err.startswith("spotree "), err
    for n in needles:
        assert n in err, err
    assert "Traceback" not in err


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
