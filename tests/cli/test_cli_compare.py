"""`spotree compare`: several saved models' decisions on the same rows, paired row by row.

The commands run in this process through :func:`spotree.cli.main` (no
start-up per command); the printed table is parsed and checked against
:func:`spotree.metrics.compare_decisions` called on the same models and rows.
"""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import spotree
from spotree.cli import main
from spotree.metrics import compare_decisions

from ._helpers import assert_one_line_error as assert_one_line
from ._helpers import run_in_process


def run(capsys, *args):
    """``spotree ARGS`` in this process: (exit code, stdout, stderr)."""
    res = run_in_process(capsys, *args)
    return res.returncode, res.stdout, res.stderr


def assert_one_line_error(result, *needles, code=1):
    got, out, err = result
    assert_one_line(subprocess.CompletedProcess([], got, out, err), *needles, code=code,
                    prefix="spotree compare: error: ")


def roads_frame(n, seed):
    """Two roads (two costs): the first is cheaper when x0 > 0.5, with noise."""
    rng = np.random.default_rng(seed)
    x0, x1 = rng.uniform(size=(2, n))
    return pd.DataFrame({"x0": x0, "x1": x1,
                         "c0": np.where(x0 > 0.5, 1.0, 3.0) + rng.normal(scale=0.8, size=n),
                         "c1": np.full(n, 2.0) + rng.normal(scale=0.3, size=n),
                         "w": rng.integers(0, 3, size=n) * 0.25})


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Three models of the two roads fitted by 'spotree fit', and test rows."""
    d = tmp_path_factory.mktemp("compare")
    roads_frame(120, 0).to_csv(d / "train.csv", index=False)
    test = roads_frame(50, 1)
    test.to_csv(d / "test.csv", index=False)
    spec = d / "roads.json"
    spec.write_text(json.dumps({"type": "finite", "decisions": [[1, 0], [0, 1]]}))
    paths = {}
    for name, extra in (("spo", ("--max-depth", "1")),
                        ("cart", ("--max-depth", "4", "--criterion", "mse",
                                  "--min-samples-leaf", "1")),
                        ("x1only", ("--max-depth", "2"))):
        paths[name] = d / f"{name}.json"
        features = "x1" if name == "x1only" else "x*"
        code = main(["fit", "--data", str(d / "train.csv"), "--features", features,
                     "--costs", "c*", "--problem", str(spec), "--model", str(paths[name]),
                     "--min-samples-leaf", "5", *extra])
        assert code == 0
    return d, paths, test


def parse_table(out):
    """The table's rows by model: the numbers as floats, '(reference)' and blanks as None."""
    lines = [x for x in out.splitlines() if x.startswith("|")]
    rows = {}
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = [float(c) if c and c != "(reference)" else None for c in cells[1:]]
    return rows


def assert_table_is(out, expected):
    rows = parse_table(out)
    assert list(rows) == expected.names
    for i, name in enumerate(expected.names):
        loss, diff, se, better, worse = rows[name]
        # Printed with 4 significant digits (the standard error with 2).
        assert loss == pytest.approx(expected.normalized_spo_loss[i], rel=6e-4, abs=1e-12)
        if name == expected.reference:
            assert diff is se is better is worse is None
            continue
        assert diff == pytest.approx(expected.difference[i], rel=6e-4, abs=1e-12)
        assert se == pytest.approx(expected.standard_error[i], rel=0.06)
        assert (better, worse) == (expected.n_better[i], expected.n_worse[i])


def test_compare_prints_the_numbers_of_compare_decisions(models, capsys):
    d, paths, test = models
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    loaded = {k: spotree.load(p) for k, p in paths.items()}
    # Each model on its own feature columns of the same table.
    loaded["x1only"] = make_pipeline(FunctionTransformer(lambda df: df[["x1"]]),
                                     loaded["x1only"])
    C = test[["c0", "c1"]].to_numpy()

    def expected(reference=None, sample_weight=None):
        return compare_decisions(loaded, test[["x0", "x1"]], C, reference=reference,
                                 sample_weight=sample_weight)

    code, out, err = run(capsys, "compare", "--data", d / "test.csv", *paths.values())
    assert code == 0, err
    assert out.splitlines()[0] == f"3 models on 50 rows of {d / 'test.csv'}, compared with spo:"
    ref = expected()
    assert (ref.n_better[1:] + ref.n_worse[1:] > 0).all()  # the models differ on some rows
    assert_table_is(out, ref)
    # --names, --reference and --weights.
    code, out, err = run(capsys, "compare", "--data", d / "test.csv", *paths.values(),
                         "--names", "a, b,c", "--reference", "b", "--weights", "w")
    assert code == 0, err
    assert ", weighted by 'w', compared with b:" in out.splitlines()[0]
    res = expected(reference="cart", sample_weight=test["w"].to_numpy())
    res.names, res.reference = ["a", "b", "c"], "b"
    assert_table_is(out, res)
    assert res.n_better[0] % 1 != 0  # totals of weight (0.25 a unit), parsed as printed


def test_compare_names_same_file_names_by_their_paths(models, capsys):
    """Two models saved under the same file name in different folders: the table names
    each by its path (the file names alone would not tell the rows apart)."""
    import shutil

    d, paths, _ = models
    (d / "again").mkdir(exist_ok=True)
    twin = d / "again" / "spo.json"
    shutil.copy(paths["cart"], twin)
    code, out, err = run(capsys, "compare", "--data", d / "test.csv", paths["spo"], twin)
    assert code == 0, err
    assert out.splitlines()[0].endswith(f"compared with {paths['spo']}:")
    assert list(parse_table(out)) == [str(paths["spo"]), str(twin)]


def test_compare_plot_draws_the_comparison(models, capsys):
    mpimg = pytest.importorskip("matplotlib.image")
    d, paths, _ = models
    for kind in ((), ("--plot-kind", "ecdf")):
        png = d / f"compare{len(kind)}.png"
        code, out, err = run(capsys, "compare", "--data", d / "test.csv", paths["spo"],
                             paths["cart"], "--plot", png, *kind)
        assert code == 0, err
        assert err == f"wrote {png}\n" and "| cart " in out
        img = mpimg.imread(png)
        assert img.ndim == 3 and img[..., :3].std() > 0.05


def test_compare_refuses_what_it_cannot_compare(models, tmp_path, capsys, monkeypatch):
    d, paths, test = models
    data = d / "test.csv"
    spo, cart = paths["spo"], paths["cart"]
    # Three roads: a model of another number of costs.
    three = tmp_path / "three.json"
    X, C = test[["x0", "x1"]].to_numpy(), np.column_stack([test.c0, test.c1, test.c1])
    spotree.SPOTree(spotree.FiniteDecisions(np.eye(3)), max_depth=1).fit(X, C).save(three)
    # Two costs, another problem: the roads maximized.
    other = tmp_path / "other.json"
    spotree.SPOTree(spotree.FiniteDecisions(np.eye(2), sense="max"), max_depth=1).fit(
        X, C[:, :2]).save(other)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    renamed = tmp_path / "renamed.csv"
    test.rename(columns={"c0": "d0", "c1": "d1"}).to_csv(renamed, index=False)
    png = tmp_path / "out.png"
    as_png = tmp_path / "model.png"  # a model file of any name
    as_png.write_text(cart.read_text())
    cases = [
        ((spo, three), (), [f"{three} was fitted on a problem of 3 costs, {spo} on one of "
                            "2 costs"]),
        ((spo, other), (), [f"{other} and {spo} were fitted on different problems"]),
        ((spo,), (), ["compare needs two or more models", "spotree evaluate"]),
        ((spo, spo), (), [f"model file {spo} is given twice", "--names"]),
        ((spo, cart), ("--names", "a"), ["--names gives 1 name for 2 models"]),
        ((spo, cart), ("--names", "a,a"), ["--names: 'a' is given twice"]),
        ((spo, cart), ("--reference", "tree"),
         ["--reference 'tree' is not one of the models' names: 'spo', 'cart'"]),
        ((spo, cart), ("--plot-kind", "ecdf"), ["--plot-kind", "give --plot FILE"]),
        ((spo, cart), ("--plot", tmp_path / "out.jpg"), ["--plot must end in .png"]),
        ((spo, as_png), ("--plot", as_png), [f"--plot {as_png} is also the model input"]),
        ((spo, cart), ("--costs", "c1,c0"), ["the cost columns of", "in another order",
                                             "--costs 'c0,c1'"]),
        ((spo, cart), ("--costs", "x*,c0"), ["--costs selects 3 columns but the models' "
                                             "problem has 2 costs"]),
        ((spo, three), ("--plot", png), ["fitted on a problem of 3 costs"]),
    ]
    for model_paths, extra, needles in cases:
        assert_one_line_error(run(capsys, "compare", "--data", data, *model_paths, *extra),
                              *needles)
    assert not png.exists()  # nothing written when the command fails
    # Unreadable model files: the messages of 'spotree evaluate'.
    for bad in (broken, tmp_path / "missing.json"):
        got = run(capsys, "compare", "--data", data, spo, bad)
        assert_one_line_error(got, str(bad))
        _, _, err = run(capsys, "evaluate", "--data", data, "--model", bad)
        assert got[2].split("error: ", 1)[1] == err.split("error: ", 1)[1]
    # Cost columns the data file lacks, or that the models name differently.
    assert_one_line_error(run(capsys, "compare", "--data", renamed, spo, cart),
                          "lacks the models' cost column(s): c0, c1", "--costs")
    code, out, err = run(capsys, "compare", "--data", renamed, spo, cart, "--costs", "d*")
    assert code == 0 and "| cart " in out, err
    x1only = tmp_path / "x1only.json"
    x1only.write_text(paths["x1only"].read_text().replace('"c0"', '"d0"'))
    assert_one_line_error(run(capsys, "compare", "--data", data, spo, x1only),
                          f"{spo} and {x1only} were fitted on different cost columns",
                          "(c0,c1 and d0,c1)")
    assert_one_line_error(run(capsys, "compare", "--data", d / "train.csv", spo, cart,
                              "--weights", "nope"), "--weights: no column 'nope'")
    # A model whose feature columns the data file lacks: named.
    test.drop(columns="x0").to_csv(tmp_path / "no_x0.csv", index=False)
    assert_one_line_error(run(capsys, "compare", "--data", tmp_path / "no_x0.csv",
                              paths["x1only"], spo),
                          f"{spo}: ", "lacks the model's feature column(s): x0")
    # Usage errors: exit code 2.
    assert run(capsys, "compare", spo, cart)[0] == 2
    assert run(capsys, "compare", "--data", data)[0] == 2
    # Without matplotlib: the extra to install, before any work.
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert_one_line_error(run(capsys, "compare", "--data", data, spo, cart, "--plot", png),
                          "spotree compare --plot requires matplotlib", "spotree[plot]")
    assert not png.exists()


def test_an_error_inside_a_models_predict_names_that_model(models, capsys, monkeypatch):
    """An exception raised by one model's own predict_decision did not say whose."""
    d, paths, _ = models
    own = spotree.SPOTree.predict_decision

    def fails_for_cart(self, X):
        if self.criterion == "mse":
            raise ValueError("boom")
        return own(self, X)

    monkeypatch.setattr(spotree.SPOTree, "predict_decision", fails_for_cart)
    assert_one_line_error(run(capsys, "compare", "--data", d / "test.csv", paths["spo"],
                              paths["cart"], "--names", "first,second"),
                          "models['second'].predict_decision raised ValueError: boom")


def test_compare_is_in_the_help(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "compare several models' decisions" in out and "spotree compare --data" in out
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    out = capsys.readouterr().out
    for option in ("--data CSV", "--costs COLS", "--weights COL", "--names LIST",
                   "--reference NAME", "--plot FILE", "--plot-kind", "MODEL [MODEL ...]"):
        assert option in out
