"""The `spotree` command end to end: `python -m spotree` in a subprocess.

The command is started as ``sys.executable -m spotree`` with a PATH that does
not hold the virtual environment, so the tests pass whether or not the venv
is activated. Commands that do not depend on each other start together
(:func:`run_many`): each pays Python's start-up and import time.
"""

import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import spotree
from spotree.cli import build_parser
from spotree.metrics import normalized_spo_loss

from ._helpers import assert_one_line_error, run_in_process

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TRAIN = EXAMPLES / "shortest_path_train.csv"
NEW = EXAMPLES / "shortest_path_new.csv"
SPEC = EXAMPLES / "shortest_path.json"
# No venv on PATH: the tests must not rely on an activated environment.
ENV = dict(os.environ, MPLBACKEND="Agg", PATH=os.pathsep.join(["/usr/bin", "/bin"]))
FEATURES = [f"x{j}" for j in range(5)]
COSTS = [f"c{k}" for k in range(24)]


def cmd(*args):
    return [sys.executable, "-m", "spotree", *map(str, args)]


def run(*args, cwd=None):
    return subprocess.run(cmd(*args), capture_output=True, text=True, cwd=cwd, env=ENV,
                          timeout=600)


def run_many(*arg_lists, cwd=None, at_once=4):
    """Run the commands, ``at_once`` at a time; results in order."""
    out = []
    for i in range(0, len(arg_lists), at_once):
        batch = arg_lists[i:i + at_once]
        procs = [subprocess.Popen(cmd(*a), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env=ENV, cwd=cwd) for a in batch]
        for a, p in zip(batch, procs):
            stdout, stderr = p.communicate(timeout=600)
            out.append(subprocess.CompletedProcess(cmd(*a), p.returncode, stdout, stderr))
    return out


def read_rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def train_arrays():
    """The example training data, read independently of the CLI (csv module)."""
    rows = read_rows(TRAIN)
    X = np.array([[float(r[c]) for c in FEATURES] for r in rows])
    C = np.array([[float(r[c]) for c in COSTS] for r in rows])
    return X, C


def fit_args(model, *extra, data=TRAIN, problem=SPEC):
    return ("fit", "--data", data, "--features", "x*", "--costs", "c*", "--problem", problem,
            "--model", model, *extra)


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """`spotree fit` on the example CSV and spec, once for the module."""
    d = tmp_path_factory.mktemp("cli")
    res = run(*fit_args(d / "model.json", "--max-depth", "3", "--min-samples-leaf", "20",
                        "--validation-fraction", "0.2", "--random-state", "0"))
    assert res.returncode == 0, res.stderr
    assert "saved to" in res.stdout
    return d, d / "model.json", res


def test_help_and_version_without_an_activated_venv():
    top, sub, version = run_many(("--help",), ("reproduce", "--help"), ("--version",))
    assert top.returncode == 0
    for word in ("reproduce", "fit", "predict", "evaluate", "show", "plot", "examples:"):
        assert word in top.stdout
    assert sub.returncode == 0
    for word in ("--quick", "--out", "--jobs", "--seeds", "--scheduler", "--data",
                 "shortest-path", "illustrative", "news", "R6A", "DIR/EXPERIMENT",
                 "pyepo", "--problems", "--degrees", "spotree reproduce pyepo --quick"):
        assert word in sub.stdout
    assert version.stdout.strip() == f"spotree {spotree.__version__}"


def test_fit_matches_the_library_and_predict_round_trips(fitted, tmp_path):
    d, model_path, res = fitted
    model = spotree.load(model_path)
    doc = json.loads(model_path.read_text())
    assert doc["columns"]["features"] == FEATURES and doc["columns"]["costs"] == COSTS
    # The same fit in Python: first 20% validate, the rest train.
    X, C = train_arrays()
    ref = spotree.SPOTree(spotree.ShortestPath((4, 4)), max_depth=3, min_samples_leaf=20,
                          random_state=0).fit(X[80:], C[80:]).prune(X[:80], C[:80])
    assert f"{ref.get_n_leaves()} leaves" in res.stdout
    # The training loss printed (read from the leaves' decisions) against the
    # decisions solved afresh from the reference's predicted costs.
    want = normalized_spo_loss(C[80:], ref.predict(X[80:]), problem=spotree.ShortestPath((4, 4)))
    got = float(re.search(r"training normalized SPO loss ([0-9.]+)", res.stdout).group(1))
    assert want > 0.01 and got == pytest.approx(want, abs=5e-5)
    Xn = pd.read_csv(NEW)[FEATURES].to_numpy()
    np.testing.assert_allclose(model.predict(pd.DataFrame(Xn, columns=FEATURES)),
                               ref.predict(Xn))
    assert list(model.feature_names_in_) == FEATURES

    out = tmp_path / "preds.csv"
    res = run("predict", "--model", model_path, "--data", NEW, "--out", out)
    assert res.returncode == 0, res.stderr
    rows = read_rows(out)
    assert len(rows) == Xn.shape[0]
    C_hat = np.array([[float(r[f"pred_{c}"]) for c in COSTS] for r in rows])
    W = np.array([[float(r[f"decision_{c}"]) for c in COSTS] for r in rows])
    np.testing.assert_allclose(C_hat, ref.predict(Xn), rtol=1e-10)
    np.testing.assert_array_equal(W, ref.predict_decision(Xn))
    assert set(W.sum(axis=1)) == {6.0}  # every decision is a 6-edge path


def test_predict_to_stdout_reorders_columns_by_name(fitted, tmp_path):
    _, model_path, _ = fitted
    shuffled = tmp_path / "shuffled.csv"
    rows = read_rows(NEW)
    with open(shuffled, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["x4", "extra", "x2", "x0", "x1", "x3"])
        w.writeheader()
        for r in rows:
            w.writerow(dict(r, extra="ignored text"))
    res, ref = run_many(("predict", "--model", model_path, "--data", shuffled),
                        ("predict", "--model", model_path, "--data", NEW))
    assert res.returncode == 0, res.stderr
    assert res.stdout == ref.stdout and res.stdout.count("\n") == len(rows) + 1


def test_predict_out_dash_is_standard_output(fitted, tmp_path, capsys, monkeypatch):
    """--out - wrote a file named "-" in the working folder, not to standard output."""
    _, model_path, _ = fitted
    monkeypatch.chdir(tmp_path)
    dash, plain = (run_in_process(capsys, "predict", "--model", model_path, "--data", NEW,
                                  *extra) for extra in (("--out", "-"), ()))
    assert dash.returncode == 0 and dash.stdout == plain.stdout, dash.stderr
    assert dash.stdout.count("\n") == len(read_rows(NEW)) + 1
    assert os.listdir(tmp_path) == []


def _normalized_regret_by_enumeration(W, C, w):
    """sum w (c.w - z*) / sum w |z*|, z* the cheapest of the 4x4 grid's 20 paths."""
    paths = spotree.ShortestPath((4, 4)).vertices()
    z = (C @ paths.T).min(axis=1)
    return np.dot(w, np.einsum("ij,ij->i", C, W) - z) / np.dot(w, np.abs(z))


def test_evaluate_with_weights_whose_total_passes_the_float_range(fitted, tmp_path, capsys):
    # Every weight 1e308: the weighted sums were inf and evaluate printed a
    # normalized SPO loss of 0.0000 (a perfect score) for a model that is not
    # perfect. Equal weights change nothing: the unweighted loss, by enumeration.
    _, model_path, _ = fitted
    X, C = train_arrays()
    W = spotree.load(model_path).predict_decision(pd.DataFrame(X, columns=FEATURES))
    heavy = tmp_path / "heavy.csv"
    pd.read_csv(TRAIN).assign(w=1e308).to_csv(heavy, index=False)
    res = run_in_process(capsys, "evaluate", "--model", model_path, "--data", heavy,
                         "--weights", "w")
    assert res.returncode == 0, res.stderr
    expected = _normalized_regret_by_enumeration(W, C, np.ones(len(C)))
    assert expected > 0.001
    assert res.stdout.endswith(f", weighted by 'w': normalized SPO loss {expected:.4f}\n")


def test_evaluate_scores_the_decisions_on_realized_costs(fitted, tmp_path, capsys):
    # The command line could fit and predict but not say how good the decisions
    # are on held-out costs; evaluate does, with the cost columns of the fit.
    _, model_path, _ = fitted
    X, C = train_arrays()
    W = spotree.load(model_path).predict_decision(pd.DataFrame(X, columns=FEATURES))
    weighted = tmp_path / "weighted.csv"
    weights = np.arange(len(C)) % 3.0  # a third of the rows weigh 0
    pd.read_csv(TRAIN).assign(w=weights).to_csv(weighted, index=False)
    res = run_in_process(capsys, "evaluate", "--model", model_path, "--data", TRAIN)
    assert res.returncode == 0, res.stderr
    expected = _normalized_regret_by_enumeration(W, C, np.ones(len(C)))
    assert res.stdout == (f"SPOTree on 400 rows of {TRAIN}: normalized SPO loss "
                          f"{expected:.4f}\n")
    res = run_in_process(capsys, "evaluate", "--model", model_path, "--data", weighted,
                         "--weights", "w")
    assert res.returncode == 0, res.stderr
    expected = _normalized_regret_by_enumeration(W, C, weights)
    assert res.stdout.endswith(f", weighted by 'w': normalized SPO loss {expected:.4f}\n")
    # A model saved from Python names no cost columns: --costs gives them.
    plain = tmp_path / "plain.json"
    spotree.SPOTree(spotree.ShortestPath((4, 4)), max_depth=1).fit(X, C).save(plain)
    assert_one_line_error(run_in_process(capsys, "evaluate", "--model", plain, "--data",
                                         TRAIN), "does not name its cost columns", "--costs")
    res = run_in_process(capsys, "evaluate", "--model", plain, "--data", TRAIN,
                         "--costs", "c*")
    assert res.returncode == 0, res.stderr
    W = spotree.load(plain).predict_decision(X)
    assert res.stdout.endswith(
        f"{_normalized_regret_by_enumeration(W, C, np.ones(len(C))):.4f}\n")
    for data, costs, needle in ((NEW, (), "lacks the model's cost column(s): c0, c1"),
                                (TRAIN, ("--costs", "c1,c0,c[2-9],c1?,c2?"),
                                 "in another order")):
        assert_one_line_error(run_in_process(capsys, "evaluate", "--model", model_path,
                                             "--data", data, *costs), needle)

def test_a_small_nonzero_loss_is_not_printed_as_zero(tmp_path, capsys):
    # Two roads; the model always takes road 0, which is worse than road 1 by
    # 0.001 on one row of 100: fit and evaluate printed "normalized SPO loss
    # 0.0000", a perfect score, for decisions that are not all optimal.
    c1 = np.full(100, 101.0)
    c1[0] = 99.999
    data = tmp_path / "roads.csv"
    pd.DataFrame({"x": np.zeros(100), "c0": 100.0, "c1": c1}).to_csv(data, index=False)
    spec = tmp_path / "roads.json"
    spec.write_text('{"type": "finite", "decisions": [[1, 0], [0, 1]]}')
    model = tmp_path / "m.json"
    res = run_in_process(capsys, "fit", "--data", data, "--features", "x", "--costs", "c*",
                         "--problem", spec, "--model", model)
    assert res.returncode == 0, res.stderr
    # By hand: regret 100 - 99.999 on row 0, over the optimal values' total.
    expected = (100.0 - 99.999) / (99.999 + 99 * 100.0)
    assert f"training normalized SPO loss {expected:.4g};" in res.stdout
    assert float(f"{expected:.4g}") > 0
    res = run_in_process(capsys, "evaluate", "--model", model, "--data", data)
    assert res.returncode == 0, res.stderr
    assert res.stdout.endswith(f"normalized SPO loss {expected:.4g}\n")


def test_example_assignment_spec_fits_and_evaluates_end_to_end(tmp_path, capsys):
    # examples/assignment.json through the command line: 3 drivers to 3 jobs, Cy
    # forbidden the north job; the printed regret against the 4 allowed
    # permutations enumerated here.
    import itertools

    spec = EXAMPLES / "assignment.json"
    allowed = np.array(json.loads(spec.read_text())["allowed"])
    perms = [p for p in itertools.permutations(range(3))
             if all(allowed[i, j] for i, j in enumerate(p))]
    V = np.zeros((len(perms), 9))
    for k, p in enumerate(perms):
        V[k, [3 * i + j for i, j in enumerate(p)]] = 1.0
    rng = np.random.default_rng(0)
    costs = [f"c{k}" for k in range(9)]

    def draw(n):
        X = rng.uniform(-1, 1, size=(n, 2))
        C = 5 + 3 * np.outer(X[:, 0], np.linspace(-1, 1, 9)) + rng.normal(0, 0.5, (n, 9))
        return X, C

    paths = []
    for name, n in (("train", 80), ("test", 40)):
        X, C = draw(n)
        paths.append(tmp_path / f"{name}.csv")
        pd.DataFrame(np.hstack([X, C]), columns=["x0", "x1", *costs]).to_csv(paths[-1],
                                                                           index=False)
    model_path = tmp_path / "model.json"
    res = run_in_process(capsys, "fit", "--data", paths[0], "--features", "x*", "--costs",
                         "c*", "--problem", spec, "--model", model_path, "--max-depth", "2",
                         "--min-samples-leaf", "10")
    assert res.returncode == 0, res.stderr
    res = run_in_process(capsys, "evaluate", "--model", model_path, "--data", paths[1])
    assert res.returncode == 0, res.stderr
    test = pd.read_csv(paths[1])
    Ct = test[costs].to_numpy()
    # The decisions: the cheapest allowed permutation for the predicted costs.
    W = V[np.argmin(spotree.load(model_path).predict(test[["x0", "x1"]]) @ V.T, axis=1)]
    z = (Ct @ V.T).min(axis=1)
    expected = (np.einsum("ij,ij->i", Ct, W) - z).sum() / np.abs(z).sum()
    assert expected > 0
    assert res.stdout == (f"SPOTree on 40 rows of {paths[1]}: normalized SPO loss "
                          f"{expected:.4f}\n")


def test_show_and_plot(fitted, tmp_path):
    mpimg = pytest.importorskip("matplotlib.image")
    _, model_path, _ = fitted
    model = spotree.load(model_path)
    png = tmp_path / "tree.png"
    res, dot, plot = run_many(("show", model_path), ("show", model_path, "--dot"),
                              ("plot", model_path, "--out", png))
    assert res.returncode == 0
    assert res.stdout.count("decision: ") == model.get_n_leaves()
    assert "x" in res.stdout and "->16" in res.stdout
    assert dot.stdout.startswith("digraph")
    assert plot.returncode == 0, plot.stderr
    img = mpimg.imread(png)
    assert img.ndim == 3 and img[..., :3].std() > 0.05


def test_show_max_depth_prints_the_top_levels(fitted, capsys):
    # 'spotree plot' took --max-depth, 'spotree show' did not.
    from spotree import export_text

    _, model_path, _ = fitted
    model = spotree.load(model_path)
    res = run_in_process(capsys, "show", model_path, "--max-depth", "1")
    assert res.returncode == 0, res.stderr
    assert res.stdout.split("\n", 1)[1] == export_text(model, max_depth=1)
    assert res.stdout.count("(subtree cut)") == 2  # both children of the root split
    dot = run_in_process(capsys, "show", model_path, "--dot", "--max-depth", "0")
    assert dot.returncode == 0 and 'more0 [label="..."' in dot.stdout

def test_show_a_tree_deeper_than_the_recursion_limit(tmp_path, capsys, deep_chain_model):
    import sys

    depth = sys.getrecursionlimit() + 200
    path = tmp_path / "deep.json"
    deep_chain_model(depth).save(path)
    res = run_in_process(capsys, "show", path)
    assert res.returncode == 0, res.stderr
    assert f"{depth + 1} leaves, depth {depth}" in res.stdout
    assert res.stdout.count("decision: ") == depth + 1
    dot = run_in_process(capsys, "show", path, "--dot")
    assert dot.returncode == 0, dot.stderr
    assert dot.stdout.count(" -> ") == 2 * depth


def test_reproduce_writes_to_out_slash_experiment(tmp_path):
    res = run("reproduce", "illustrative", "--depths", "1", "--no-figures", "--out",
              tmp_path / "res")
    assert res.returncode == 0, res.stderr
    assert sorted(os.listdir(tmp_path / "res")) == ["illustrative"]
    assert {"results.csv", "summary.md", "cache"} <= set(os.listdir(tmp_path / "res" /
                                                                    "illustrative"))
    assert f"to {tmp_path / 'res' / 'illustrative'}" in res.stdout
    # The first progress line comes before any run has finished: no time left yet.
    first = res.stderr.splitlines()[0]
    assert "compiling" in first and "left" not in first


def test_weak_errors_of_issue_9_name_the_users_input(fitted, tmp_path):
    """Each error names the user's column or path and the reason; nothing is written."""
    _, model_path, _ = fitted
    work = tmp_path / "work"
    work.mkdir()
    df = pd.read_csv(TRAIN)
    df["c2"] = 1e308  # finite, but the mean of 400 such costs overflows
    df.to_csv(work / "huge.csv", index=False)
    (work / "folder").mkdir()
    cases = [
        (fit_args(work / "m.json", data=work / "huge.csv"),
         ["huge.csv", "column 'c2'", "too large"], ["C_pred"]),
        (fit_args(work / "m.json", problem=work / "folder"),
         ["problem spec file", "folder is a directory"], ["not found"]),
        (("show", work / "folder"), ["model file", "folder is a directory"], ["not found"]),
        (fit_args(work / "folder"), ["--model", "folder is a directory"], []),
        (("predict", "--model", model_path, "--data", NEW, "--out", work / "folder"),
         ["--out", "folder is a directory"], []),
        (("plot", model_path, "--out", work / "folder"), ["--out"], []),
    ]
    if sys.platform.startswith("linux") and os.path.isdir("/proc"):
        cases += [
            (("predict", "--model", model_path, "--data", NEW, "--out", "/proc/x.csv"),
             ["--out /proc/x.csv", "cannot create files in /proc"], []),
            (fit_args("/proc/x.json"), ["--model /proc/x.json", "cannot create"], []),
        ]
    before = sorted(os.listdir(work))
    for res, (_, needles, absent) in zip(run_many(*[a for a, _, _ in cases]), cases):
        assert_one_line_error(res, *needles, absent=(".spotree-", "Traceback", *absent))
    assert sorted(os.listdir(work)) == before and os.listdir(work / "folder") == []


def test_plot_checks_the_image_size_before_drawing(fitted, tmp_path):
    _, model_path, _ = fitted
    big = tmp_path / "big.json"
    assert run(*fit_args(big, "--max-depth", "6")).returncode == 0
    huge, large, lowest = run_many(
        ("plot", model_path, "--out", tmp_path / "a.png", "--dpi", "100000"),
        ("plot", big, "--out", tmp_path / "b.png", "--dpi", "1000"),
        ("plot", model_path, "--out", tmp_path / "c.png", "--dpi", "9"))
    assert_one_line_error(huge, "--dpi", "[10, 1000]", "100000", code=2,
                          absent=("MemoryError", "Traceback"))
    assert_one_line_error(large, "--dpi 1000", "megapixels", "pixels")
    assert_one_line_error(lowest, "--dpi", code=2)
    assert sorted(os.listdir(tmp_path)) == ["big.json"]


def test_reproduce_validates_everything_before_creating_folders(tmp_path, capsys):
    out = tmp_path / "res"
    # The two cases of issue 9 through the command itself...
    bogus, n7 = run_many(("reproduce", "shortest-path", "--methods", "Bogus", "--out", out),
                         ("reproduce", "shortest-path", "--n-train", "7", "--out", out))
    assert_one_line_error(bogus, "--methods", "'Bogus'", code=2)
    assert_one_line_error(n7, "--n-train", "7")
    assert os.listdir(tmp_path) == []
    # ... and the others in process.
    cases = [
        (("reproduce", "shortest-path", "--quick", "--n-train", "10000", "--out", out),
         ["--n-train"], 1),
        (("reproduce", "shortest-path", "--methods", "SPOT Optimal", "--depths", "none",
          "--out", out), ["no runs"], 1),
        (("reproduce", "news", "--data", tmp_path / "nowhere", "--out", out),
         ["--data", "no such directory"], 1),
        (("reproduce", "illustrative", "--jobs", "0", "--out", out), ["--jobs"], 2),
        (("reproduce", "illustrative", "--seeds", "x", "--out", out), ["--seeds"], 2),
        (("reproduce", "illustrative", "--depths", "0", "--out", out), ["--depths"], 2),
        (("reproduce", "news", "--n-train", "200", "--out", out), ["--n-train applies"], 1),
        (("reproduce", "illustrative", "--data", tmp_path, "--out", out), ["--data applies"],
         1),
        (("reproduce", "news", "--user-clusters", "5", "--out", out), ["need --data"], 1),
    ]
    for args, needles, code in cases:
        assert_one_line_error(run_in_process(capsys, *args), *needles, code=code)
    assert os.listdir(tmp_path) == []
    (tmp_path / "file").write_text("x")
    res = run_in_process(capsys, "reproduce", "illustrative", "--out", tmp_path / "file")
    assert_one_line_error(res, "--out", "not a directory")
    assert os.listdir(tmp_path) == ["file"]


def test_reproduce_pyepo_end_to_end(tmp_path, grid_paths):
    from spotree.datasets import make_pyepo_shortest_path

    res = run("reproduce", "pyepo", "--problems", "shortest-path", "--n-train", "40",
              "--degrees", "1,6", "--noise", "0.5", "--seeds", "2", "--methods", "SPOTree,LS",
              "--out", tmp_path)
    assert res.returncode == 0, res.stderr
    out = tmp_path / "pyepo"
    assert {"results.csv", "summary.md", "cache"} <= set(os.listdir(out))
    assert f"to {out}" in res.stdout and "runs" in res.stderr
    rows = read_rows(out / "results.csv")
    assert len(rows) == 2 * 2 * 2  # degrees, methods, seeds
    summary = (out / "summary.md").read_text()
    assert summary in res.stdout  # the summary is printed too
    assert summary.startswith("# spotree reproduce pyepo\n")
    section = summary.split("### shortest-path, n_train = 40, noise 0.5")[1].split("\n## ")[0]
    lines = [x for x in section.splitlines() if x.startswith("| ")]
    assert lines[0] == ("| method | regret deg 1 | regret deg 6 | excess deg 1 | excess deg 6 "
                        "| fit s deg 1 | fit s deg 6 |")
    assert lines[1].startswith("| Bayes floor | ")
    lines = [lines[0]] + lines[2:]
    paths = grid_paths(5, 5)
    for line in lines[1:]:
        method, *cells = [c.strip() for c in line.strip("|").split("|")]
        for i, degree in enumerate(("1", "6")):
            sel = [r for r in rows if r["method"] == method and r["degree"] == degree]
            reg = [float(r["normalized_spo_loss"]) for r in sel]
            assert cells[i] == f"{np.mean(reg):.4f} ± {np.std(reg, ddof=1):.4f}"
            assert cells[4 + i] == f"{np.mean([float(r['fit_time']) for r in sel]):.3f}"
    assert [x.split("|")[1].strip() for x in lines[1:]] == ["SPOTree", "LS"]
    # The tree's regret from its predictions, recomputed by enumerating the paths:
    # PyEPO's draw with seed s, the first 20% of the 40 training rows prune.
    problem = spotree.ShortestPath((5, 5))
    for r in rows:
        if r["method"] != "SPOTree":
            continue
        seed = int(r["seed"])
        X, C = make_pyepo_shortest_path(1040, degree=int(r["degree"]), noise=0.5,
                                        random_state=seed)
        tree = spotree.SPOTree(problem, min_samples_leaf=5, random_state=seed)
        tree = tree.fit(X[8:40], C[8:40]).prune(X[:8], C[:8])
        C_pred, Ct = tree.predict(X[40:]), C[40:]
        chosen = paths[np.argmin(C_pred @ paths.T, axis=1)]
        best = np.min(Ct @ paths.T, axis=1)
        regret = (np.einsum("ij,ij->i", Ct, chosen) - best).sum() / best.sum()
        assert float(r["normalized_spo_loss"]) == pytest.approx(regret, rel=1e-9)
        assert int(r["n_leaves"]) == tree.get_n_leaves()
    if "pyepo.png" in os.listdir(out):
        assert "![pyepo.png](pyepo.png)" in summary


def test_reproduce_pyepo_bad_options_name_the_option(tmp_path, capsys):
    from spotree.experiments import pyepo_available

    out = tmp_path / "res"
    cases = [
        (("reproduce", "pyepo", "--problems", "tsp"), ["--problems", "'tsp'"], 2),
        (("reproduce", "pyepo", "--degrees", "0"), ["--degrees", "1,2,4,6"], 2),
        (("reproduce", "pyepo", "--methods", "Bogus"), ["--methods", "'Bogus'"], 2),
        (("reproduce", "pyepo", "--methods", "SPOT"), ["--methods", "'SPOT'", "pyepo"], 1),
        (("reproduce", "shortest-path", "--methods", "SPOBoost"),
         ["--methods", "'SPOBoost'", "shortest-path"], 1),
        (("reproduce", "shortest-path", "--problems", "knapsack"), ["--problems applies"], 1),
        (("reproduce", "news", "--degrees", "2"), ["--degrees applies"], 1),
        (("reproduce", "pyepo", "--depths", "2"), ["--depths", "pyepo"], 1),
        (("reproduce", "pyepo", "--n-train", "5"), ["--n-train", "at least 20"], 1),
        (("reproduce", "pyepo", "--noise", "2"), ["--noise", "[0, 1]"], 2),
        (("reproduce", "news", "--noise", "0.5"), ["--noise applies"], 1),
        (("reproduce", "energy"), ["energy experiment needs --data", "Data.npz"], 1),
        (("reproduce", "energy", "--data", str(tmp_path / "nope")), ["--data", "no such"], 1),
        (("reproduce", "energy", "--data", str(tmp_path)), ["--data", "no Data.npz"], 1),
        (("reproduce", "pyepo", "--capacities", "60"), ["--capacities applies"], 1),
        (("reproduce", "energy", "--capacities", "0"), ["--capacities", "positive"], 2),
        (("reproduce", "energy", "--scaling", "log"), ["--scaling", "'log'"], 2),
        (("reproduce", "shortest-path", "--standardize"), ["--standardize applies"], 1),
        (("reproduce", "energy", "--methods", "LS"), ["--methods", "'LS'", "energy"], 1),
    ]
    if not pyepo_available():
        cases.append((("reproduce", "pyepo", "--methods", "PyEPO SPO+"),
                      ["--methods", "pyepo and torch", "pip install"], 1))
    for args, needles, code in cases:
        assert_one_line_error(run_in_process(capsys, *args, "--out", out), *needles,
                              code=code)
    assert os.listdir(tmp_path) == []


def _write(path, text):
    path.write_text(text)
    return path


def test_bad_csv_files_give_one_line_naming_column_and_line(fitted, tmp_path, capsys):
    """Every bad table: one line naming the file, column and line; nothing written.

    In process (the same parsing, reading and error reporting as the command,
    without 13 interpreter start-ups); one case also runs as a subprocess.
    """
    _, model_path, _ = fitted
    data = tmp_path / "data"
    data.mkdir()
    header = ",".join(FEATURES + COSTS)
    good = TRAIN.read_text().splitlines()

    def with_cell(line, column, text):
        rows = [r.split(",") for r in good]
        rows[line - 1][(FEATURES + COSTS).index(column)] = text
        return "\n".join(",".join(r) for r in rows) + "\n"

    files = {
        "text.csv": (with_cell(5, "c3", "fast"), ["line 5", "'c3'", "'fast' is not a number"]),
        "nan.csv": (with_cell(4, "c0", "nan"), ["line 4", "'c0'", "not a finite number"]),
        "inf.csv": (with_cell(7, "c10", "-inf"), ["line 7", "'c10'", "not a finite"]),
        # An empty feature cell is a missing value; an empty cost cell is an error.
        "blank.csv": (with_cell(3, "c2", ""), ["line 3", "'c2'", "empty cell"]),
        "empty.csv": ("", ["empty.csv is empty"]),
        "spaces.csv": ("\n  \n", ["is empty"]),
        "header.csv": (header + "\n", ["header but no data rows"]),
        "dup.csv": (header.replace("c5", "c4") + "\n" + "\n".join(good[1:]) + "\n",
                    ["duplicate column names", "'c4'"]),
        "long.csv": ("\n".join(good[:6] + [good[6] + ",1.5"] + good[7:]) + "\n",
                     ["line 7", "30 fields but the header has 29"]),
        "short.csv": ("\n".join(good[:2] + [",".join(good[2].split(",")[:20])] + good[3:])
                      + "\n", ["line 3", "'c15'", "missing"]),
        "nocosts.csv": ("\n".join(",".join(r.split(",")[:5]) for r in good) + "\n",
                        ["--costs", "no column 'c*'"]),
        "binary.csv": (None, ["not a text CSV file"]),
    }
    for name, (text, _) in files.items():
        if text is None:
            (data / name).write_bytes(b"\xff\xfe\x00\x81" * 50)
        else:
            _write(data / name, text)
    out = tmp_path / "out"
    out.mkdir()
    cases = [(fit_args(out / f"{name}.json", data=data / name), needles)
             for name, (_, needles) in files.items()]
    # Predicting from a table without the model's features.
    _write(data / "costs.csv", "\n".join(",".join(r.split(",")[5:]) for r in good) + "\n")
    cases.append((("predict", "--model", model_path, "--data", data / "costs.csv", "--out",
                   out / "p.csv"), ["costs.csv", "lacks the model's feature", "x0"]))
    for args, needles in cases:
        assert_one_line_error(run_in_process(capsys, *args), *needles)
    assert_one_line_error(run(*cases[0][0]), *cases[0][1])
    assert os.listdir(out) == []


def test_option_errors_name_the_option(tmp_path, capsys):
    out = tmp_path / "m.json"
    cases = [
        (fit_args(out, "--min-samples-leaf", "0.0"), ["--min-samples-leaf", "0.0"], 1),
        # An int typed stays an int: the message said "Got 0.0" for 0, "Got -3.0" for -3.
        (fit_args(out, "--min-samples-leaf", "0"),
         ["--min-samples-leaf", "must be an int in the range [1, inf)", "Got 0 instead"], 1),
        (fit_args(out, "--min-samples-split", "-3"),
         ["--min-samples-split", "an int in the range [2, inf)", "Got -3 instead"], 1),
        (fit_args(out, "--max-features", "0"), ["--max-features", "Got 0 instead"], 1),
        # 1 is a count below [2, inf), not the fraction 1.0 (that is --min-samples-split 1.0).
        (fit_args(out, "--min-samples-split", "1"), ["--min-samples-split", "Got 1 instead"], 1),
        (fit_args(out, "--validation-fraction", "1.5"), ["--validation-fraction"], 2),
        (fit_args(out, "--thresholds", "many"), ["--thresholds"], 2),
        (fit_args(out, "--estimator", "optimal", "--criterion", "mse"), ["SPO loss only"], 1),
        (fit_args(out, "--criterion", "auto"), ["--criterion auto", "--estimator forest"], 1),
        (("fit", "--data", TRAIN, "--features", "x9", "--costs", "c*", "--problem", SPEC,
          "--model", out), ["--features", "'x9'"], 1),
        (("fit", "--data", TRAIN, "--features", "x*", "--costs", "c0,c1", "--problem", SPEC,
          "--model", out), ["2 columns", "24 costs"], 1),
        (fit_args(out, "--weights", "w"), ["--weights", "'w'"], 1),
        (("fit", "--data", TRAIN, "--features", "x*,c1", "--costs", "c*", "--problem", SPEC,
          "--model", out), ["both features and costs"], 1),
    ]
    for args, needles, code in cases:
        assert_one_line_error(run_in_process(capsys, *args), *needles, code=code)
    assert os.listdir(tmp_path) == []


def test_fit_forest_and_optimal_estimators(tmp_path):
    forest, optimal, plain = tmp_path / "f.json", tmp_path / "o.json", tmp_path / "p.json"
    auto = tmp_path / "a.json"
    f, o, p, a = run_many(fit_args(forest, "--estimator", "forest", "--n-estimators", "5",
                                   "--min-samples-leaf", "20", "--validation-fraction", "0.2",
                                   "--random-state", "0"),
                          fit_args(optimal, "--estimator", "optimal", "--max-depth", "2",
                                   "--min-samples-leaf", "20"),
                          fit_args(plain, "--estimator", "forest", "--n-estimators", "3",
                                   "--no-ridge-features", "--random-state", "0"),
                          fit_args(auto, "--estimator", "forest", "--n-estimators", "8",
                                   "--criterion", "auto", "--random-state", "0"))
    assert f.returncode == 0 and o.returncode == 0 and p.returncode == 0, (f.stderr, o.stderr,
                                                                           p.stderr)
    assert a.returncode == 0, a.stderr
    chosen = spotree.load(auto)
    assert chosen.criterion == "auto" and f"(auto: {chosen.criterion_} kept)" in a.stdout
    assert {t.criterion for t in chosen.estimators_} == {chosen.criterion_}
    assert "SPOForest" in f.stdout and "5 trees" in f.stdout and "max_features=" in f.stdout
    model = spotree.load(forest)
    assert len(model.estimators_) == 5 and model.max_features in (2, 3, 4, 5)
    # Without --criterion: each estimator's default ("auto" for a forest).
    assert model.criterion == "auto" and f"(auto: {model.criterion_} kept)" in f.stdout
    assert spotree.load(optimal).__class__.__name__ == "OptimalSPOTree"
    # Forests split on the ridge features unless told not to.
    assert model.ridge_features and model.ridge_features_.n_out == 24
    assert spotree.load(plain).ridge_features_ is None
    assert spotree.load(plain).estimators_[0].tree_.n_features == 5
    assert type(spotree.load(optimal)).__name__ == "OptimalSPOTree"
    assert spotree.load(optimal).get_depth() <= 2
    pred, show = run_many(("predict", "--model", forest, "--data", NEW), ("show", forest))
    assert pred.returncode == 0 and pred.stdout.count("\n") == 21
    # The help and the error say what show takes (they said "a model saved by 'fit'").
    assert_one_line_error(show, "holds a SPOForest", "a single tree (--estimator tree or "
                          "optimal) or a SPOBoost")
    for command, verb in (("show", "shown"), ("plot", "drawn")):
        helptext = " ".join(build_parser()._subparsers._group_actions[0].choices[command]
                            .format_help().split())
        assert (" M a tree (--estimator tree or optimal) or a SPOBoost saved by 'fit'; a "
                f"forest's trees are not {verb}") in helptext


def test_predict_with_a_model_saved_from_python(tmp_path):
    """A model fitted on plain arrays has features x0, x1, ...: the example columns."""
    X, C = train_arrays()
    model = spotree.SPOTree(spotree.ShortestPath((4, 4)), max_depth=2).fit(X, C)
    model.save(tmp_path / "py.json")
    text = spotree.export_text(model)
    assert any(f"x{j} <= " in text for j in range(5))
    res = run("predict", "--model", tmp_path / "py.json", "--data", NEW)
    assert res.returncode == 0, res.stderr
    got = pd.read_csv(pd.io.common.StringIO(res.stdout))
    Xn = pd.read_csv(NEW).to_numpy()
    np.testing.assert_allclose(got[[f"pred_c{k}" for k in range(24)]].to_numpy(),
                               model.predict(Xn), rtol=1e-10)


def test_missing_feature_values_and_text_categories_through_the_cli(tmp_path, capsys):
    # Empty cells are missing values and a text column is a categorical feature;
    # the CLI's model equals the library's on the same frame.
    rng = np.random.default_rng(0)
    n = 240
    city = rng.choice(["Lyon", "Nice", "Paris"], size=n)
    x = rng.uniform(size=n)
    c0 = np.where(city == "Nice", 1.0, 3.0) + rng.uniform(0, 0.1, n)
    c1 = np.where(x > 0.5, 1.5, 2.5) + rng.uniform(0, 0.1, n)
    df = pd.DataFrame({"city": city, "x": x, "c0": c0, "c1": c1})
    df.loc[::7, "x"] = np.nan
    data = tmp_path / "train.csv"
    df.to_csv(data, index=False)
    spec = tmp_path / "roads.json"
    spec.write_text(json.dumps({"type": "finite", "decisions": [[1, 0], [0, 1]]}))
    model = tmp_path / "m.json"
    res = run_in_process(capsys, "fit", "--data", data, "--features", "city,x",
                         "--costs", "c0,c1", "--problem", spec, "--max-depth", "2",
                         "--validation-fraction", "0", "--model", model)
    assert res.returncode == 0, res.stderr
    fitted = spotree.load(model)
    assert fitted.category_values_[0] == ["Lyon", "Nice", "Paris"]
    frame = df[["city", "x"]].astype({"city": object})
    ref = spotree.SPOTree(spotree.FiniteDecisions(np.eye(2)), max_depth=2).fit(
        frame, df[["c0", "c1"]].to_numpy())
    np.testing.assert_array_equal(fitted.tree_.feature, ref.tree_.feature)
    np.testing.assert_array_equal(fitted.predict(frame), ref.predict(frame))
    # Prediction: missing x is fine; an unseen city is a one-line error with its line.
    new = tmp_path / "new.csv"
    pd.DataFrame({"city": ["Nice", "Lyon"], "x": [np.nan, 0.2]}).to_csv(new, index=False)
    out = tmp_path / "pred.csv"
    res = run_in_process(capsys, "predict", "--model", model, "--data", new, "--out", out)
    assert res.returncode == 0, res.stderr
    assert len(read_rows(out)) == 2
    bad = tmp_path / "bad.csv"
    bad.write_text("city,x\nNice,0.1\nMarseille,0.3\n")
    res = run_in_process(capsys, "predict", "--model", model, "--data", bad,
                         "--out", tmp_path / "p2.csv")
    assert_one_line_error(res, "line 3", "'city'", "Marseille", "never seen")
    assert not (tmp_path / "p2.csv").exists()
    # A column mixing numbers and text is still a typo, not a category.
    typo = tmp_path / "typo.csv"
    df2 = df.copy()
    df2["x"] = df2["x"].astype(object)
    df2.loc[3, "x"] = "abc"
    df2.to_csv(typo, index=False)
    res = run_in_process(capsys, "fit", "--data", typo, "--features", "city,x",
                         "--costs", "c0,c1", "--problem", spec, "--model", tmp_path / "m2.json")
    assert_one_line_error(res, "line 5", "'x'", "'abc' is not a number")


# ------------------------------------------------- newcomer battery (issue 15)
def _roads_csv(path, n=60, sep=",", decimal="."):
    rng = np.random.default_rng(1)
    x = rng.uniform(size=n)
    df = pd.DataFrame({"x0": x, "x1": rng.uniform(size=n),
                       "c0": np.where(x > 0.5, 1.0, 3.0), "c1": np.full(n, 2.0)})
    df.to_csv(path, index=False, sep=sep, decimal=decimal)
    return df


def _roads_spec(tmp_path):
    spec = tmp_path / "roads.json"
    spec.write_text(json.dumps({"type": "finite", "decisions": [[1, 0], [0, 1]]}))
    return spec


@pytest.mark.parametrize("decimal", [".", ","])
def test_a_semicolon_separated_file_gets_a_hint(tmp_path, capsys, decimal):
    data = tmp_path / "semi.csv"
    _roads_csv(data, sep=";", decimal=decimal)
    res = run_in_process(capsys, "fit", "--data", data, "--features", "x*", "--costs", "c*",
                         "--problem", _roads_spec(tmp_path), "--model", tmp_path / "m.json")
    # Decimal points: one header column ('x*' matches it), no 'c*'; decimal commas: rows of
    # several fields under a one-field header. Either way the hint says why.
    first = "no column 'c*'" if decimal == "." else "fields but the header has 1"
    assert_one_line_error(res, "semi.csv", first, "seems separated by semicolons",
                          "sep=';'")


@pytest.mark.parametrize("sep, decimal", [("\t", "."), ("\t", ","), (";", "."), (";", ",")])
def test_the_separator_hint_gives_a_command_that_converts_the_file(tmp_path, capsys, sep,
                                                                   decimal):
    # The hint told to convert a tab-separated file with pd.read_csv(path, sep=';'), which
    # reads it as one column again, and a file of decimal commas (the reason for ';' in
    # much of Europe) with sep=';' alone, which made a file of text cells ('1,0').
    data = tmp_path / "other.csv"
    _roads_csv(data, sep=sep, decimal=decimal)
    args = ("--features", "x*", "--costs", "c*", "--problem", _roads_spec(tmp_path))
    res = run_in_process(capsys, "fit", "--data", data, *args, "--model", tmp_path / "m.json")
    name = {"\t": "tabs", ";": "semicolons"}[sep]
    assert_one_line_error(res, "other.csv", f"seems separated by {name}", f"sep={sep!r}")
    assert ("decimal=','" in res.stderr) == (decimal == ",")
    # The command the hint gives, run as written, makes a file that fits.
    command = re.search(r"convert it with pandas: (pd\.read_csv\(path, .*?\)\.to_csv\(.*\))\)",
                        res.stderr).group(1)
    fixed = tmp_path / "commas.csv"
    eval(command, {"pd": pd, "path": data, "new_path": fixed})
    res = run_in_process(capsys, "fit", "--data", fixed, *args, "--model", tmp_path / "m.json")
    assert res.returncode == 0, res.stderr
    assert pd.read_csv(fixed).equals(_roads_csv(tmp_path / "plain.csv"))


def test_outputs_never_overwrite_the_inputs(tmp_path, capsys):
    data = tmp_path / "train.csv"
    _roads_csv(data)
    spec = _roads_spec(tmp_path)
    before = data.read_bytes()
    res = run_in_process(capsys, "fit", "--data", data, "--features", "x0,x1", "--costs",
                         "c0,c1", "--problem", spec, "--model", data)
    assert_one_line_error(res, f"--model {data} is also the --data input")
    # The same file through another path.
    res = run_in_process(capsys, "fit", "--data", data, "--features", "x0,x1", "--costs",
                         "c0,c1", "--problem", spec, "--model",
                         tmp_path / "." / "train.csv")
    assert_one_line_error(res, "is also the --data input")
    res = run_in_process(capsys, "fit", "--data", data, "--features", "x0,x1", "--costs",
                         "c0,c1", "--problem", spec, "--model", spec)
    assert_one_line_error(res, "is also the --problem input")
    assert data.read_bytes() == before
    model = tmp_path / "m.json"
    res = run_in_process(capsys, "fit", "--data", data, "--features", "x0,x1", "--costs",
                         "c0,c1", "--problem", spec, "--model", model)
    assert res.returncode == 0, res.stderr
    saved = model.read_bytes()
    for out, what in ((data, "--data"), (model, "--model")):
        res = run_in_process(capsys, "predict", "--model", model, "--data", data, "--out", out)
        assert_one_line_error(res, f"--out {out} is also the {what} input")
    assert data.read_bytes() == before and model.read_bytes() == saved


def test_text_in_a_numeric_column_at_predict_names_file_line_and_column(tmp_path, capsys):
    data = tmp_path / "train.csv"
    _roads_csv(data)
    model = tmp_path / "m.json"
    res = run_in_process(capsys, "fit", "--data", data, "--features", "x0,x1", "--costs",
                         "c0,c1", "--problem", _roads_spec(tmp_path), "--model", model)
    assert res.returncode == 0, res.stderr
    new = tmp_path / "new.csv"
    for cells, bad in ((["0.2", "0.3", "0.4"], None), (["0.2", "high", "0.4"], "'high'"),
                       (["low", "high", "mid"], "'low'")):
        # Line 1 is the header: the rows are lines 2, 3, 4.
        new.write_text("x0,x1\n" + "".join(f"{c},0.5\n" for c in cells))
        res = run_in_process(capsys, "predict", "--model", model, "--data", new)
        if bad is None:
            assert res.returncode == 0, res.stderr
            continue
        line = 2 + [f"'{c}'" for c in cells].index(bad)
        assert_one_line_error(res, f"new.csv, line {line}, column 'x0'", f"{bad} is not a "
                              "number", "fitted with numbers in this column")


def test_the_text_nan_is_not_a_missing_value(tmp_path, capsys):
    # Only an empty cell is a missing value (examples/README.md): the text
    # "nan" in a numeric feature column is refused, naming the cell; in a text
    # column "NA" is a category like any other label.
    data = tmp_path / "train.csv"
    df = _roads_csv(data)
    spec = _roads_spec(tmp_path)
    lines = data.read_text().splitlines()
    cells = lines[5].split(",")
    cells[0] = "nan"
    lines[5] = ",".join(cells)
    data.write_text("\n".join(lines) + "\n")
    res = run_in_process(capsys, "fit", "--data", data, "--features", "x0,x1", "--costs",
                         "c0,c1", "--problem", spec, "--model", tmp_path / "m.json")
    assert_one_line_error(res, "train.csv, line 6, column 'x0'", "the text 'nan' is not a "
                          "number; leave the cell empty for a missing value")
    # An empty cell instead: a missing value, fitted.
    cells[0] = ""
    lines[5] = ",".join(cells)
    data.write_text("\n".join(lines) + "\n")
    res = run_in_process(capsys, "fit", "--data", data, "--features", "x0,x1", "--costs",
                         "c0,c1", "--problem", spec, "--model", tmp_path / "m.json")
    assert res.returncode == 0, res.stderr
    # A text column: "NA" is one of its categories.
    city = np.where(df["x0"] > 0.5, "Nice", "NA")
    df.assign(city=city).to_csv(data, index=False)
    res = run_in_process(capsys, "fit", "--data", data, "--features", "city", "--costs",
                         "c0,c1", "--problem", spec, "--model", tmp_path / "m2.json")
    assert res.returncode == 0, res.stderr
    assert spotree.load(tmp_path / "m2.json").category_values_[0] == ["NA", "Nice"]


def test_tree_options_reach_the_forest_and_others_are_refused(tmp_path, capsys):
    """--min-samples-split, --spo-weight and --ccp-alpha were dropped for a forest
    without a word, and options of other estimators were silently ignored."""
    out = tmp_path / "f.json"
    res = run_in_process(capsys, *fit_args(out, "--estimator", "forest", "--n-estimators", "3",
                                           "--min-samples-split", "10000", "--spo-weight", "0.5",
                                           "--ccp-alpha", "0.01", "--random-state", "0"))
    assert res.returncode == 0, res.stderr
    forest = spotree.load(out)
    assert (forest.min_samples_split, forest.spo_weight, forest.ccp_alpha) == (10000, 0.5, 0.01)
    # 400 rows < 10000: no tree may split.
    assert [t.get_n_leaves() for t in forest.estimators_] == [1, 1, 1]
    refused = [(("--estimator", "optimal", "--spo-weight", "0.5"), "--spo-weight"),
               (("--estimator", "optimal", "--ccp-alpha", "0.1"), "--ccp-alpha"),
               (("--estimator", "optimal", "--max-features", "2"), "--max-features"),
               (("--estimator", "optimal", "--min-samples-split", "5"), "--min-samples-split"),
               (("--n-estimators", "5",), "--n-estimators"),
               (("--estimator", "optimal", "--no-ridge-features"), "--no-ridge-features")]
    for extra, flag in refused:
        res = run_in_process(capsys, *fit_args(tmp_path / "x.json", *extra))
        assert_one_line_error(res, flag, "does not apply")
    assert sorted(os.listdir(tmp_path)) == ["f.json"]


def test_an_empty_out_path_is_an_error(fitted, tmp_path, capsys):
    """predict --out '' wrote to standard output; reproduce --out '' to ./EXPERIMENT."""
    _, model, _ = fitted
    res = run_in_process(capsys, "predict", "--model", model, "--data", NEW, "--out", "")
    assert_one_line_error(res, "--out ''", "file path")
    assert res.stdout == ""
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        res = run_in_process(capsys, "reproduce", "illustrative", "--out", "", "--quiet")
    finally:
        os.chdir(cwd)
    assert_one_line_error(res, "--out ''", "folder path")
    assert os.listdir(tmp_path) == []


def test_fit_when_every_optimal_value_is_zero(tmp_path, capsys):
    """min c.w over w >= 0, w1 + w2 <= 1 with costs >= 0: doing nothing is best, z* = 0
    on every row. The training-loss line raised (normalized loss undefined, 'use
    spo_loss') after the fit, and no model was saved."""
    spec = tmp_path / "lp.json"
    spec.write_text(json.dumps({"type": "linear_program", "A_ub": [[1, 1]], "b_ub": [1]}))
    rng = np.random.default_rng(0)
    data = tmp_path / "d.csv"
    pd.DataFrame({"x0": rng.random(40), "c0": rng.random(40), "c1": rng.random(40)}).to_csv(
        data, index=False)
    res = run_in_process(capsys, "fit", "--data", data, "--features", "x0", "--costs", "c*",
                         "--problem", spec, "--model", tmp_path / "m.json")
    assert res.returncode == 0, res.stderr
    # Costs >= 0: every prediction (a mean of costs) also picks w = 0, so no regret.
    assert "training mean SPO loss 0 (every optimal value is 0" in res.stdout
    model = spotree.load(tmp_path / "m.json")
    assert np.all(model.predict_decision(pd.read_csv(data)[["x0"]]) == 0)


def test_options_that_would_do_nothing_are_refused(tmp_path, capsys):
    """A forest with --max-features left the --validation-fraction rows out of the fit
    and used them for nothing; --spo-weight was ignored with --criterion mse."""
    cases = [(("--estimator", "forest", "--max-features", "2", "--validation-fraction", "0.2"),
              ["--validation-fraction", "--max-features"]),
             (("--criterion", "mse", "--spo-weight", "0.5"), ["--spo-weight", "--criterion mse"])]
    for extra, needles in cases:
        res = run_in_process(capsys, *fit_args(tmp_path / "m.json", *extra))
        assert_one_line_error(res, *needles)
    assert os.listdir(tmp_path) == []


def test_the_spec_error_quoted_in_examples_readme_is_the_real_one(tmp_path, capsys):
    """examples/README.md quotes the error of a spec with "grid": [4]; it had changed."""
    text = (EXAMPLES / "README.md").read_text()
    quoted = re.search(r"`(spotree fit: error: problem\.json: .*?)` for `\"grid\": \[4\]`",
                       text, flags=re.S).group(1)
    (tmp_path / "problem.json").write_text('{"type": "shortest_path", "grid": [4]}')
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        res = run_in_process(capsys, "fit", "--data", TRAIN, "--features", "x*", "--costs",
                             "c*", "--problem", "problem.json", "--model", "m.json")
    finally:
        os.chdir(cwd)
    assert res.stderr.strip() == " ".join(quoted.split())


def test_an_optimal_tree_refuses_max_depth_none(tmp_path, capsys):
    """--max-depth none (unrestricted) gave an optimal tree of depth 2 without a word."""
    res = run_in_process(capsys, *fit_args(tmp_path / "m.json", "--estimator", "optimal",
                                           "--max-depth", "none"))
    assert_one_line_error(res, "--estimator optimal", "--max-depth")
    assert os.listdir(tmp_path) == []


def test_weights_that_leave_a_part_of_the_split_empty_name_the_options(tmp_path, capsys):
    """It failed with the library's 'sample_weight sums to zero', naming no option."""
    rows = read_rows(TRAIN)
    for held_out_weight, needle in ((0, "first 80 rows"), (1, "other 320 rows")):
        data = tmp_path / f"w{held_out_weight}.csv"
        with open(data, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=[*rows[0], "w"])
            w.writeheader()
            for i, r in enumerate(rows):  # the first 80 of 400 rows are held out
                w.writerow({**r, "w": held_out_weight if i < 80 else 1 - held_out_weight})
        res = run_in_process(capsys, *fit_args(tmp_path / "m.json", "--weights", "w",
                                               "--validation-fraction", "0.2", data=data))
        assert_one_line_error(res, "--weights", needle, "--validation-fraction")
    assert not (tmp_path / "m.json").exists()


def test_a_categorical_column_left_empty_at_predict_is_missing_labels(tmp_path, capsys):
    """pandas reads a column of empty cells as numbers (NaN): predict refused it as
    'fitted with text (categories) in this column; here it holds numbers'."""
    rng = np.random.default_rng(1)
    n = 120
    city = rng.choice(["Lyon", "Nice"], size=n)
    x = rng.uniform(size=n)
    df = pd.DataFrame({"city": city, "x": x,
                       "c0": np.where(city == "Nice", 1.0, 3.0) + x, "c1": 2.0 + 0 * x})
    df.to_csv(tmp_path / "train.csv", index=False)
    spec = tmp_path / "roads.json"
    spec.write_text(json.dumps({"type": "finite", "decisions": [[1, 0], [0, 1]]}))
    res = run_in_process(capsys, "fit", "--data", tmp_path / "train.csv", "--features",
                         "city,x", "--costs", "c0,c1", "--problem", spec, "--max-depth", "2",
                         "--model", tmp_path / "m.json")
    assert res.returncode == 0, res.stderr
    (tmp_path / "new.csv").write_text("city,x\n,0.1\n,0.9\n")
    res = run_in_process(capsys, "predict", "--model", tmp_path / "m.json", "--data",
                         tmp_path / "new.csv")
    assert res.returncode == 0, res.stderr
    got = pd.read_csv(io.StringIO(res.stdout))
    frame = pd.DataFrame({"city": [None, None], "x": [0.1, 0.9]}, dtype=object)
    frame["x"] = frame["x"].astype(float)
    want = spotree.load(tmp_path / "m.json").predict(frame)
    np.testing.assert_allclose(got[["pred_c0", "pred_c1"]].to_numpy(), want, rtol=1e-11)


def test_a_number_in_a_categorical_column_at_predict_is_an_unseen_label(tmp_path, capsys):
    """It was reported as "'Lyon' is not a number" (a known label on another line)."""
    spec = tmp_path / "roads.json"
    spec.write_text(json.dumps({"type": "finite", "decisions": [[1, 0], [0, 1]]}))
    rows = "".join(f"{c},{i / 40},{1 + (c == 'Nice')},2\n"
                   for i, c in enumerate(["Lyon", "Nice"] * 20))
    (tmp_path / "train.csv").write_text("city,x,c0,c1\n" + rows)
    res = run_in_process(capsys, "fit", "--data", tmp_path / "train.csv", "--features",
                         "city,x", "--costs", "c0,c1", "--problem", spec,
                         "--model", tmp_path / "m.json")
    assert res.returncode == 0, res.stderr
    (tmp_path / "new.csv").write_text("city,x\nLyon,0.1\n3,0.5\n")
    res = run_in_process(capsys, "predict", "--model", tmp_path / "m.json", "--data",
                         tmp_path / "new.csv")
    assert_one_line_error(res, "new.csv, line 3, column 'city': category '3' was never seen")


def test_plot_refuses_dpi_for_a_vector_image(fitted, tmp_path, capsys):
    """--dpi was taken for .svg and .pdf, whose files are the same at any dpi."""
    _, model, _ = fitted
    for ext in ("svg", "pdf"):
        assert_one_line_error(run_in_process(capsys, "plot", model, "--out",
                                             tmp_path / f"t.{ext}", "--dpi", "300"),
                              "--dpi sets the resolution of a .png", f"a .{ext}",
                              "drop --dpi")
    assert os.listdir(tmp_path) == []


def test_plot_max_depth_sizes_the_figure_by_the_leaves_drawn(fitted, tmp_path, capsys):
    """The width counted every leaf of the tree, not those drawn: a cut tree was drawn
    on a wide, mostly empty strip (and the pixel check refused it for nothing)."""
    import matplotlib.image as mpimg

    _, model, _ = fitted
    assert spotree.load(model).get_n_leaves() >= 3
    out = tmp_path / "top.png"
    res = run_in_process(capsys, "plot", model, "--out", out, "--max-depth", "1",
                         "--dpi", "20")
    assert res.returncode == 0, res.stderr
    # Two leaves drawn: 2 inches each, at least 5 inches; 1.7 per level, 2 levels.
    height, width = mpimg.imread(out).shape[:2]
    assert (width, height) == (5 * 20, round(3.4 * 20))
    # Two levels: the leaves drawn are the nodes at depth 2 and the leaves above it,
    # counted here by walking the tree (a count of the true leaves only was unseen at
    # depth 1, where both give the 5-inch minimum).
    tree = spotree.load(model).tree_
    drawn, stack = 0, [(0, 0)]
    while stack:
        node, depth = stack.pop()
        if depth == 2 or tree.children_left[node] == -1:
            drawn += 1
        else:
            stack += [(tree.children_left[node], depth + 1),
                      (tree.children_right[node], depth + 1)]
    assert drawn >= 3
    res = run_in_process(capsys, "plot", model, "--out", out, "--max-depth", "2",
                         "--dpi", "20")
    assert res.returncode == 0, res.stderr
    height, width = mpimg.imread(out).shape[:2]
    assert (width, height) == (2 * drawn * 20, round(1.7 * 3 * 20))


def test_news_log_options_are_refused_for_the_energy_experiment(tmp_path, capsys):
    """--user-clusters and --min-records were dropped without a word for energy --data."""
    (tmp_path / "Data.npz").write_bytes(b"")  # never read: the options are checked first
    for flag in ("--user-clusters", "--min-records"):
        res = run_in_process(capsys, "reproduce", "energy", "--data", tmp_path, flag, "5",
                             "--out", tmp_path / "out")
        assert_one_line_error(res, flag, "news experiment only")
    assert sorted(os.listdir(tmp_path)) == ["Data.npz"]


def test_jobs_with_a_scheduler_is_refused(tmp_path, capsys):
    """--jobs was ignored without a word when --scheduler was given."""
    res = run_in_process(capsys, "reproduce", "illustrative", "--jobs", "4", "--scheduler",
                         "tcp://127.0.0.1:1", "--out", tmp_path / "out")
    assert_one_line_error(res, "--jobs", "--scheduler")
    assert os.listdir(tmp_path) == []


def test_an_output_behind_a_symbolic_link_writes_the_target(fitted, tmp_path, capsys):
    """The file was renamed onto the link: the link was replaced, its target unchanged."""
    _, model, _ = fitted
    (tmp_path / "runs").mkdir()
    target = tmp_path / "runs" / "p.csv"
    target.write_text("old\n")
    link = tmp_path / "latest.csv"
    link.symlink_to(target)
    res = run_in_process(capsys, "predict", "--model", model, "--data", NEW, "--out", link)
    assert res.returncode == 0, res.stderr
    assert link.is_symlink()
    assert len(read_rows(target)) == 20


def test_an_optimal_trees_threshold_error_names_thresholds(tmp_path, capsys):
    """It named '--global-thresholds', the parameter, which is no option of the command."""
    res = run_in_process(capsys, *fit_args(tmp_path / "m.json", "--estimator", "optimal",
                                           "--thresholds", "0"))
    assert_one_line_error(res, "spotree fit: error: --thresholds: ", absent=("--global",))


def test_fit_on_an_lp_model_file(tmp_path, capsys):
    """--problem takes an MPS/LP file too (it was read as JSON and refused)."""
    model_file = tmp_path / "choose.lp"
    # Choose one of three plans, with plan b allowed at most half: a + b + c = 1, b <= 0.5.
    model_file.write_text("\\ three plans\nminimize\n obj: a + b + c\nsubject to\n"
                          " one: a + b + c = 1\n half: b <= 0.5\nend\n")
    rng = np.random.default_rng(0)
    x = rng.random(60)
    frame = pd.DataFrame({"x0": x, "ca": 1 + x, "cb": 2 - 2 * x, "cc": 1.2 + 0 * x})
    frame.to_csv(tmp_path / "d.csv", index=False)
    res = run_in_process(capsys, "fit", "--data", tmp_path / "d.csv", "--features", "x0",
                         "--costs", "ca,cb,cc", "--problem", model_file, "--model",
                         tmp_path / "m.json", "--max-depth", "2")
    assert res.returncode == 0, res.stderr
    model = spotree.load(tmp_path / "m.json")
    assert model.problem.variable_names == ["a", "b", "c"]
    # The vertices of the feasible set, by hand: a, c, and the half-half mixes with b.
    V = np.array([[1, 0, 0], [0, 0, 1], [0.5, 0.5, 0], [0, 0.5, 0.5]])
    C_hat = model.predict(frame[["x0"]])
    W = model.predict_decision(frame[["x0"]])
    assert np.allclose(np.einsum("ij,ij->i", C_hat, W), (C_hat @ V.T).min(axis=1))
    bad = tmp_path / "bad.mps"
    bad.write_text("NAME t\nROWS\n N obj\n L r1\nCOLUMNS\n    x obj 1 r9 1\nRHS\n"
                   "    RHS r1 4\nBOUNDS\n UP BND x 1\nENDATA\n")
    res = run_in_process(capsys, "fit", "--data", tmp_path / "d.csv", "--features", "x0",
                         "--costs", "ca", "--problem", bad, "--model", tmp_path / "m2.json")
    assert_one_line_error(res, "bad.mps: malformed MPS file", 'Row name "r9"')


def test_cost_columns_named_like_the_model_files_variables_must_follow_its_order(tmp_path,
                                                                                  capsys):
    """--costs 'c,b,a' on a file whose columns are a, b, c paired each cost with the wrong
    variable without a word."""
    model_file = tmp_path / "choose.lp"
    model_file.write_text("minimize\n obj: a + b + c\nsubject to\n one: a + b + c = 1\nend\n")
    rng = np.random.default_rng(0)
    pd.DataFrame({"x0": rng.random(30), "a": rng.random(30), "b": rng.random(30),
                  "c": rng.random(30)}).to_csv(tmp_path / "d.csv", index=False)
    args = ["fit", "--data", tmp_path / "d.csv", "--features", "x0", "--problem", model_file,
            "--model", tmp_path / "m.json"]
    res = run_in_process(capsys, *args, "--costs", "c,b,a")
    assert_one_line_error(res, "--costs selects the columns c, b, a", "--costs 'a,b,c'")
    assert not (tmp_path / "m.json").exists()
    res = run_in_process(capsys, *args, "--costs", "a,b,c")
    assert res.returncode == 0, res.stderr


def test_a_problem_whose_checks_run_out_of_time_says_what_the_command_allows(tmp_path, capsys,
                                                                           monkeypatch):
    """The error told a command-line user to 'pass a larger check_time_limit', which the
    command has no option for."""
    import spotree.problems._io as problems_io

    monkeypatch.setattr(problems_io, "DEFAULT_CHECK_TIME_LIMIT", 0.3)  # the command's limit
    rng = np.random.default_rng(0)
    A = rng.integers(0, 100, size=(4, 30))  # a market-split 0/1 program: hard to decide
    rows = "\n".join(f" r{i}: " + " + ".join(f"{A[i, j]} x{j}" for j in range(30))
                     + f" = {A[i].sum() // 2}" for i in range(4))
    model_file = tmp_path / "split.lp"
    model_file.write_text("minimize\n obj: x0\nsubject to\n" + rows + "\nbinary\n"
                          + " ".join(f"x{j}" for j in range(30)) + "\nend\n")
    pd.DataFrame(np.c_[rng.random((10, 31))],
                 columns=["x0"] + [f"c{j}" for j in range(30)]).to_csv(tmp_path / "d.csv",
                                                                          index=False)
    res = run_in_process(capsys, "fit", "--data", tmp_path / "d.csv", "--features", "x0",
                         "--costs", "c*", "--problem", model_file, "--model", tmp_path / "m.json")
    assert_one_line_error(res, "split.lp: The feasibility check", "within the check time limit",
                          "The spotree command allows these checks of a problem 0.3 s",
                          "load_problem(path, check_time_limit=None)")
    assert "pass a larger 'check_time_limit'" not in res.stderr


def test_a_weighted_fit_weighs_fit_prune_and_the_printed_loss(tmp_path, capsys, grid_paths):
    """`fit --weights` with a validation split: no test ran a weighted fit that succeeds,
    so the weights could reach the wrong rows, or miss the printed loss, unseen."""
    rows = read_rows(TRAIN)[:100]
    wts = np.random.default_rng(1).integers(0, 4, size=100).astype(float)
    wts[:2] = 1.0
    data = tmp_path / "weighted.csv"
    with open(data, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=[*rows[0], "w"])
        w.writeheader()
        for r, v in zip(rows, wts):
            w.writerow({**r, "w": f"{v:g}"})
    res = run_in_process(capsys, *fit_args(tmp_path / "m.json", "--weights", "w",
                                           "--validation-fraction", "0.2", "--max-depth", "3",
                                           "--min-samples-leaf", "5", "--random-state", "0",
                                           data=data))
    assert res.returncode == 0, res.stderr
    X = np.array([[float(r[c]) for c in FEATURES] for r in rows])
    C = np.array([[float(r[c]) for c in COSTS] for r in rows])
    # The first 20 rows validate (pruning, weighted), the other 80 fit (weighted).
    ref = spotree.SPOTree(spotree.ShortestPath((4, 4)), max_depth=3, min_samples_leaf=5,
                          random_state=0).fit(X[20:], C[20:], sample_weight=wts[20:])
    ref = ref.prune(X[:20], C[:20], sample_weight=wts[:20])
    model = spotree.load(tmp_path / "m.json")
    assert f"{ref.get_n_leaves()} leaves" in res.stdout
    np.testing.assert_allclose(model.predict(pd.DataFrame(X, columns=FEATURES)),
                               ref.predict(X))
    # The printed training loss is weighted: paths enumerated, regret summed by hand.
    paths = grid_paths(4, 4)
    Xf, Cf, wf = X[20:], C[20:], wts[20:]
    chosen = paths[np.argmin(ref.predict(Xf) @ paths.T, axis=1)]
    best = np.min(Cf @ paths.T, axis=1)
    want = np.dot(wf, np.einsum("ij,ij->i", Cf, chosen) - best) / np.dot(wf, np.abs(best))
    unweighted = (np.einsum("ij,ij->i", Cf, chosen) - best).sum() / np.abs(best).sum()
    got = float(re.search(r"training normalized SPO loss ([0-9.]+)", res.stdout).group(1))
    assert abs(want - unweighted) > 1e-3 and got == pytest.approx(want, abs=5e-5)
    # evaluate weighs every row 1 unless --weights is given again, as its help says
    # (the help said only "column of sample weights").
    chosen = paths[np.argmin(ref.predict(X) @ paths.T, axis=1)]
    best = np.min(C @ paths.T, axis=1)
    regret, best = np.einsum("ij,ij->i", C, chosen) - best, np.abs(best)
    for extra, want in (((), regret.sum() / best.sum()),
                        (("--weights", "w"), np.dot(wts, regret) / np.dot(wts, best))):
        res = run_in_process(capsys, "evaluate", "--model", tmp_path / "m.json", "--data",
                             data, *extra)
        assert f"normalized SPO loss {want:.4f}" in res.stdout, (res.stdout, res.stderr)
    for command in ("evaluate", "compare"):
        helptext = " ".join(build_parser()._subparsers._group_actions[0].choices[command]
                            .format_help().split())
        assert "--weights COL column of sample weights (default: every row weighs 1, " \
               "whatever the model" in helptext


def test_weights_all_zero_or_a_cost_column_are_refused(tmp_path, capsys):
    """Two checks of --weights that no test reached: a column of zeros (no positive
    total) and a column that is also a cost."""
    rows = read_rows(TRAIN)[:30]
    data = tmp_path / "w.csv"
    with open(data, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=[*rows[0], "w"])
        w.writeheader()
        for r in rows:
            w.writerow({**r, "w": "0"})
    res = run_in_process(capsys, *fit_args(tmp_path / "m.json", "--weights", "w", data=data))
    assert_one_line_error(res, "--weights column 'w'", "positive total")
    res = run_in_process(capsys, *fit_args(tmp_path / "m.json", "--weights", "c3", data=data))
    assert_one_line_error(res, "--weights column 'c3' is also a feature or cost")
    assert not (tmp_path / "m.json").exists()


def test_a_validation_fraction_that_rounds_to_every_row_is_refused(tmp_path, capsys):
    """0.99 of 30 rows rounds to 30: nothing would be left to fit. Only the other end
    (no row to validate) was reached by a test."""
    rows = read_rows(TRAIN)[:30]
    data = tmp_path / "small.csv"
    with open(data, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    res = run_in_process(capsys, *fit_args(tmp_path / "m.json", "--validation-fraction",
                                           "0.99", data=data))
    assert_one_line_error(res, "--validation-fraction 0.99 leaves no rows", "(30 rows)")
    assert not (tmp_path / "m.json").exists()


def test_counts_of_one_are_singular(tmp_path, capsys):
    """`spotree fit` printed "1 leaves" for a one-leaf tree (and "1 trees", "1 rows")."""
    tree, forest = tmp_path / "t.json", tmp_path / "f.json"
    # 400 rows < 10000: the root is the only leaf.
    res = run_in_process(capsys, *fit_args(tree, "--min-samples-split", "10000"))
    assert res.returncode == 0, res.stderr
    assert spotree.load(tree).get_n_leaves() == 1
    assert ": 1 leaf, depth 0;" in res.stdout
    res = run_in_process(capsys, "show", tree)
    assert ": 1 leaf, depth 0" in res.stdout
    res = run_in_process(capsys, *fit_args(forest, "--estimator", "forest", "--n-estimators",
                                           "1", "--max-depth", "1", "--max-features", "1"))
    assert res.returncode == 0, res.stderr
    assert ": 1 tree;" in res.stdout
    one = tmp_path / "one.csv"
    pd.read_csv(TRAIN).head(1).to_csv(one, index=False)
    res = run_in_process(capsys, "evaluate", "--model", tree, "--data", one)
    assert res.returncode == 0, res.stderr
    assert f"SPOTree on 1 row of {one}:" in res.stdout
    res = run_in_process(capsys, *fit_args(tmp_path / "x.json", "--costs", "c0"))
    assert_one_line_error(res, "--costs selects 1 column but")


def test_a_negative_weight_is_refused_naming_its_line(tmp_path, capsys):
    """The negative --weights cell is named by file, line and column, as every other bad
    cell is (the error named the column only, so a user searched a long file by hand)."""
    rows = read_rows(TRAIN)[:30]
    data = tmp_path / "w.csv"
    with open(data, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=[*rows[0], "w"])
        w.writeheader()
        for i, r in enumerate(rows):
            w.writerow({**r, "w": "-0.5" if i in (11, 20) else "1"})
    # Row 11 of the data is the file's line 13: the header is line 1, row 0 line 2.
    for command in (fit_args(tmp_path / "m.json", "--weights", "w", data=data),
                    ("evaluate", "--model", tmp_path / "m.json", "--data", data,
                     "--weights", "w")):
        if command[0] == "evaluate":
            run_in_process(capsys, *fit_args(tmp_path / "m.json", data=TRAIN))
        res = run_in_process(capsys, *command)
        assert_one_line_error(res, f"{data}, line 13, column 'w': -0.5 is negative",
                              "--weights")


def test_predict_writes_the_predicted_costs_exactly(tmp_path, capsys):
    """The predicted costs were written with 12 significant digits ("%.12g"), so the
    file differed from model.predict by up to 5e-13 relative, and a decision re-solved
    from the written costs could differ from decision_<cost> where two decisions are
    that close; they are now written in full (Python's shortest exact repr)."""
    rng = np.random.default_rng(0)
    x = rng.uniform(size=30)
    # Leaf means of costs in thirds and sevenths: many digits.
    df = pd.DataFrame({"x": x, "c0": rng.integers(1, 9, size=30) / 3.0,
                       "c1": rng.integers(1, 9, size=30) / 7.0 + x})
    df.to_csv(tmp_path / "train.csv", index=False)
    spec = tmp_path / "roads.json"
    spec.write_text(json.dumps({"type": "finite", "decisions": [[1, 0], [0, 1]]}))
    res = run_in_process(capsys, "fit", "--data", tmp_path / "train.csv", "--features", "x",
                         "--costs", "c0,c1", "--problem", spec, "--max-depth", "2",
                         "--model", tmp_path / "m.json")
    assert res.returncode == 0, res.stderr
    res = run_in_process(capsys, "predict", "--model", tmp_path / "m.json", "--data",
                         tmp_path / "train.csv")
    assert res.returncode == 0, res.stderr
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    got = np.array([[float(r["pred_c0"]), float(r["pred_c1"])] for r in rows])
    model = spotree.load(tmp_path / "m.json")
    want = model.predict(pd.DataFrame({"x": x}))
    assert len(np.unique(want, axis=0)) > 1
    np.testing.assert_array_equal(got, want)
    # The decisions as before: 0 and 1, no trailing ".0".
    assert {r[f"decision_{c}"] for r in rows for c in ("c0", "c1")} == {"0", "1"}
