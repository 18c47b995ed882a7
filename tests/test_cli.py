"""The `spotree` command, end to end through the installed entry point (subprocess)."""

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import spotree
from spotree.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TRAIN = EXAMPLES / "shortest_path_train.csv"
NEW = EXAMPLES / "shortest_path_new.csv"
SPEC = EXAMPLES / "shortest_path.json"
SPOTREE = shutil.which("spotree")
ENV = dict(os.environ, MPLBACKEND="Agg")


def run(*args, cwd=None, module=False):
    cmd = [sys.executable, "-m", "spotree", *args] if module else [SPOTREE, *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=ENV, timeout=600)


def run_many(*arg_lists):
    """Run several commands at once (each pays Python's start-up and import time)."""
    procs = [subprocess.Popen([SPOTREE, *a], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=ENV) for a in arg_lists]
    out = []
    for a, p in zip(arg_lists, procs):
        stdout, stderr = p.communicate(timeout=600)
        out.append(subprocess.CompletedProcess([SPOTREE, *a], p.returncode, stdout, stderr))
    return out


def assert_one_line_error(res, *needles):
    assert res.returncode != 0
    err = res.stderr.strip()
    assert "Traceback" not in res.stderr
    assert len(err.splitlines()) == 1, err
    assert err.startswith("spotree ")
    for n in needles:
        assert n in err, err


def read_rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """`spotree fit` on the example CSV and spec, once for the module."""
    assert SPOTREE is not None, "the spotree console script is not installed"
    d = tmp_path_factory.mktemp("cli")
    res = run("fit", "--data", str(TRAIN), "--features", "x*", "--costs", "c*", "--problem",
              str(SPEC), "--model", str(d / "model.json"), "--max-depth", "3",
              "--min-samples-leaf", "20", "--validation-fraction", "0.2", "--random-state", "0")
    assert res.returncode == 0, res.stderr
    assert "saved to" in res.stdout
    return d, d / "model.json", res


def test_help_reads_well_and_python_dash_m_works():
    res = run("--help", module=True)
    assert res.returncode == 0
    for word in ("reproduce", "fit", "predict", "show", "plot", "examples:"):
        assert word in res.stdout
    sub = run("reproduce", "--help")
    assert sub.returncode == 0
    for word in ("--quick", "--out", "--jobs", "--seeds", "--scheduler", "--data",
                 "shortest-path", "illustrative", "news", "R6A"):
        assert word in sub.stdout


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
def test_fit_matches_the_library_and_predict_round_trips(fitted, tmp_path):
    d, model_path, res = fitted
    model = spotree.load(model_path)
    doc = json.loads(model_path.read_text())
    assert doc["columns"]["features"] == [f"x{j}" for j in range(1, 6)]
    assert doc["columns"]["costs"] == [f"c{k}" for k in range(1, 25)]
    # The same fit in Python: first 20% validate, the rest train.
    data = np.genfromtxt(TRAIN, delimiter=",", skip_header=1)
    X, C = data[:, :5], data[:, 5:]
    ref = spotree.SPOTree(spotree.ShortestPath((4, 4)), max_depth=3, min_samples_leaf=20,
                          random_state=0).fit(X[80:], C[80:]).prune(X[:80], C[:80])
    assert f"{ref.get_n_leaves()} leaves" in res.stdout
    Xn = np.genfromtxt(NEW, delimiter=",", skip_header=1)
    np.testing.assert_allclose(model.predict(Xn), ref.predict(Xn))
    assert list(model.feature_names_in_) == [f"x{j}" for j in range(1, 6)]

    out = tmp_path / "preds.csv"
    res = run("predict", "--model", str(model_path), "--data", str(NEW), "--out", str(out))
    assert res.returncode == 0, res.stderr
    rows = read_rows(out)
    assert len(rows) == Xn.shape[0]
    C_hat = np.array([[float(r[f"pred_c{k}"]) for k in range(1, 25)] for r in rows])
    W = np.array([[float(r[f"decision_c{k}"]) for k in range(1, 25)] for r in rows])
    np.testing.assert_allclose(C_hat, ref.predict(Xn), rtol=1e-10)
    np.testing.assert_array_equal(W, ref.predict_decision(Xn))
    assert set(W.sum(axis=1)) == {6.0}  # every decision is a 6-edge path


def test_predict_to_stdout_reorders_columns_by_name(fitted, tmp_path):
    _, model_path, _ = fitted
    shuffled = tmp_path / "shuffled.csv"
    rows = read_rows(NEW)
    with open(shuffled, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["x5", "extra", "x3", "x1", "x2", "x4"])
        w.writeheader()
        for r in rows:
            w.writerow(dict(r, extra="ignored"))
    res, ref = run_many(("predict", "--model", str(model_path), "--data", str(shuffled)),
                        ("predict", "--model", str(model_path), "--data", str(NEW)))
    assert res.returncode == 0, res.stderr
    assert res.stdout == ref.stdout and res.stdout.count("\n") == len(rows) + 1


def test_show_and_plot(fitted, tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    import matplotlib.image as mpimg

    _, model_path, _ = fitted
    model = spotree.load(model_path)
    png = tmp_path / "tree.png"
    res, dot, plot = run_many(("show", str(model_path)), ("show", str(model_path), "--dot"),
                              ("plot", str(model_path), "--out", str(png)))
    assert res.returncode == 0
    assert res.stdout.count("decision: ") == model.get_n_leaves()
    assert "x" in res.stdout and "->16" in res.stdout
    assert dot.stdout.startswith("digraph")
    assert plot.returncode == 0, plot.stderr
    img = mpimg.imread(png)
    assert img.ndim == 3 and img[..., :3].std() > 0.05
    assert matplotlib is not None


def test_bad_input_through_the_entry_point(fitted, tmp_path):
    """Missing file, NaN, malformed spec, not-a-model: one line, exit != 0, no output."""
    _, model_path, _ = fitted
    out = tmp_path / "m.json"
    nan_csv = tmp_path / "nan.csv"
    lines = TRAIN.read_text().splitlines()
    lines[3] = "nan," + lines[3].split(",", 1)[1]
    nan_csv.write_text("\n".join(lines) + "\n")
    bad_spec = tmp_path / "spec.json"
    bad_spec.write_text('{"type": "shortest_path", "grid": [4, 4],}')
    cases = [
        (("fit", "--data", str(tmp_path / "none.csv"), "--features", "x*", "--costs", "c*",
          "--problem", str(SPEC), "--model", str(out)), ["not found", "none.csv"]),
        (("fit", "--data", str(nan_csv), "--features", "x*", "--costs", "c*",
          "--problem", str(SPEC), "--model", str(out)), ["line 4", "'x1'", "finite"]),
        (("fit", "--data", str(TRAIN), "--features", "x*", "--costs", "c*",
          "--problem", str(bad_spec), "--model", str(out)), ["spec.json", "invalid JSON"]),
        (("predict", "--model", str(TRAIN), "--data", str(NEW), "--out",
          str(tmp_path / "p.csv")), ["not a spotree model"]),
    ]
    for res, (_, needles) in zip(run_many(*[a for a, _ in cases]), cases):
        assert_one_line_error(res, *needles)
    assert sorted(os.listdir(tmp_path)) == ["nan.csv", "spec.json"]


@pytest.mark.parametrize("args, needles", [
    (["--features", "x9", "--costs", "c*"], ["--features", "'x9'"]),
    (["--features", "x*", "--costs", "c1,c2"], ["2 columns", "24 costs"]),
    (["--features", "x*", "--costs", "c*", "--weights", "w"], ["--weights", "'w'"]),
    (["--features", "x*,c1", "--costs", "c*"], ["both features and costs"]),
    (["--features", "x*", "--costs", "c*", "--validation-fraction", "1.5"],
     ["--validation-fraction"]),
    (["--features", "x*", "--costs", "c*", "--thresholds", "many"], ["--thresholds"]),
])
def test_bad_fit_options_in_process(tmp_path, capsys, args, needles):
    out = tmp_path / "m.json"
    code = main(["fit", "--data", str(TRAIN), "--problem", str(SPEC), "--model", str(out),
                 *args])
    err = capsys.readouterr().err.strip()
    assert code == 1 and len(err.splitlines()) == 1
    for n in needles:
        assert n in err
    assert not out.exists() and os.listdir(tmp_path) == []


def test_bad_csv_shapes_in_process(tmp_path, capsys):
    cases = {
        "empty.csv": ("", "is empty"),
        "header.csv": ("x1,c1\n", "no data rows"),
        "ragged.csv": ("x1,x2\n1,2\n3\n", "line 3: 1 fields"),
        "dup.csv": ("x1,x1\n1,2\n", "duplicate column"),
        "text.csv": ("x1,x2\n1,abc\n", "'abc' is not a number"),
        "blank.csv": ("x1,x2\n1,\n", "is empty"),
    }
    for name, (text, needle) in cases.items():
        (tmp_path / name).write_text(text)
        code = main(["predict", "--model", str(EXAMPLES / "none.json"), "--data",
                     str(tmp_path / name)])
        err = capsys.readouterr().err
        assert code == 1 and "model file not found" in err
    model = tmp_path / "m.json"
    assert main(["fit", "--data", str(TRAIN), "--features", "x1,x2", "--costs", "c*",
                 "--problem", str(SPEC), "--model", str(model), "--max-depth", "1"]) == 0
    capsys.readouterr()
    for name, (text, needle) in cases.items():
        code = main(["predict", "--model", str(model), "--data", str(tmp_path / name),
                     "--out", str(tmp_path / "p.csv")])
        err = capsys.readouterr().err.strip()
        assert code == 1 and len(err.splitlines()) == 1 and needle in err, (name, err)
        assert not (tmp_path / "p.csv").exists()


def test_usage_errors_are_one_line_with_exit_code_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["fit", "--data", "x.csv"])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "required" in err
    with pytest.raises(SystemExit):
        main(["reproduce", "everything"])
    assert "invalid choice" in capsys.readouterr().err


def test_reproduce_option_errors(tmp_path, capsys):
    for args, needle in [(["illustrative", "--data", str(tmp_path)], "--data applies"),
                         (["news", "--n-train", "200"], "--n-train applies"),
                         (["shortest-path", "--seeds", "x"], "--seeds"),
                         (["shortest-path", "--depths", "0"], "--depths"),
                         (["shortest-path", "--methods", "XGBoost"], "unknown method"),
                         (["shortest-path", "--jobs", "0"], "--jobs")]:
        code = main(["reproduce", *args, "--out", str(tmp_path / "o")])
        err = capsys.readouterr().err.strip()
        assert code == 1 and needle in err and len(err.splitlines()) == 1, err


def test_fit_predict_show_without_pandas(tmp_path, capsys, monkeypatch):
    """A plain `pip install spotree` has no pandas: column names come from the model file."""
    from spotree import _compat

    monkeypatch.setattr(_compat, "PANDAS_INSTALLED", False)
    model = tmp_path / "m.json"
    assert main(["fit", "--data", str(TRAIN), "--features", "x2,x4", "--costs", "c*",
                 "--problem", str(SPEC), "--model", str(model), "--max-depth", "2"]) == 0
    assert getattr(spotree.load(model), "feature_names_in_", None) is None
    capsys.readouterr()
    assert main(["show", str(model)]) == 0
    shown = capsys.readouterr().out
    assert "x2 <= " in shown or "x4 <= " in shown
    assert main(["predict", "--model", str(model), "--data", str(NEW)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 21 and out[0].startswith("pred_c1,")


def test_fit_forest_and_optimal_estimators(tmp_path, capsys):
    forest = tmp_path / "f.json"
    assert main(["fit", "--data", str(TRAIN), "--features", "x*", "--costs", "c*",
                 "--problem", str(SPEC), "--model", str(forest), "--estimator", "forest",
                 "--n-estimators", "5", "--min-samples-leaf", "20",
                 "--validation-fraction", "0.2", "--random-state", "0"]) == 0
    out = capsys.readouterr().out
    assert "SPOForest" in out and "5 trees" in out and "max_features=" in out
    model = spotree.load(forest)
    assert len(model.estimators_) == 5 and model.max_features in (2, 3, 4, 5)
    assert main(["predict", "--model", str(forest), "--data", str(NEW)]) == 0
    assert capsys.readouterr().out.count("\n") == 21
    assert main(["show", str(forest)]) == 1
    assert "holds a SPOForest" in capsys.readouterr().err

    optimal = tmp_path / "o.json"
    assert main(["fit", "--data", str(TRAIN), "--features", "x*", "--costs", "c*",
                 "--problem", str(SPEC), "--model", str(optimal), "--estimator", "optimal",
                 "--max-depth", "2", "--min-samples-leaf", "20"]) == 0
    model = spotree.load(optimal)
    assert type(model).__name__ == "OptimalSPOTree" and model.get_depth() <= 2
    assert main(["fit", "--data", str(TRAIN), "--features", "x*", "--costs", "c*",
                 "--problem", str(SPEC), "--model", str(tmp_path / "x.json"),
                 "--estimator", "optimal", "--criterion", "mse"]) == 1
    assert "SPO loss only" in capsys.readouterr().err
