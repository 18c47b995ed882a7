"""spotree.cli._parser: option values are checked before any file is touched (exit code 2)."""

import re

import pytest

from spotree.cli import build_parser, main
from spotree.experiments import METHODS, PYEPO_METHODS


def parse(*argv):
    return build_parser().parse_args(list(argv))


def usage_error(capsys, *argv):
    with pytest.raises(SystemExit) as info:
        main(list(argv))
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_reproduce_values_are_parsed():
    a = parse("reproduce", "shortest-path", "--seeds", "2:5", "--methods", "SPOT, CART",
              "--depths", "1,none,3", "--n-train", "200,10000", "--jobs", "-1")
    assert a.seeds == [2, 3, 4] and a.methods == ["SPOT", "CART"]
    assert a.depths == [1, None, 3] and a.n_train == [200, 10000] and a.jobs == -1
    assert a.out == "spotree-results"
    assert parse("reproduce", "news").methods is None


@pytest.mark.parametrize("argv, needle", [
    (("reproduce", "shortest-path", "--methods", "SPOT,Bogus"), "'Bogus'"),
    (("reproduce", "shortest-path", "--jobs", "0"), "--jobs"),
    (("reproduce", "shortest-path", "--jobs", "-2"), "--jobs"),
    (("reproduce", "shortest-path", "--depths", "0"), "--depths"),
    (("reproduce", "shortest-path", "--depths", ","), "--depths"),
    (("reproduce", "shortest-path", "--n-train", "0"), "--n-train"),
    (("reproduce", "shortest-path", "--n-train", "many"), "--n-train"),
    (("reproduce", "shortest-path", "--seeds", "-1,2"), "--seeds"),
    (("reproduce", "news", "--user-clusters", "0"), "--user-clusters"),
    (("reproduce", "pyepo", "--problems", "knapsack,tsp"), "--problems"),
    (("reproduce", "pyepo", "--degrees", "1,x"), "--degrees"),
    # inf and nan passed the parser and failed in every run (Knapsack capacity).
    (("reproduce", "energy", "--capacities", "120,inf"), "--capacities"),
    (("reproduce", "energy", "--capacities", "nan"), "--capacities"),
    (("reproduce", "everything"), "invalid choice"),
    (("plot", "m.json", "--out", "t.png", "--dpi", "100000"), "[10, 1000]"),
    (("plot", "m.json", "--out", "t.png", "--dpi", "0"), "--dpi"),
    (("plot", "m.json", "--out", "t.png", "--max-depth", "-1"), "--max-depth"),
    (("fit", "--data", "x.csv"), "required"),
    (("fit", "--data", "d", "--features", "x", "--costs", "c", "--problem", "p",
      "--validation-fraction", "1"), "[0, 1)"),
    (("fit", "--data", "d", "--features", "x", "--costs", "c", "--problem", "p",
      "--n-estimators", "0"), "--n-estimators"),
    (("fit", "--data", "d", "--features", "x", "--costs", "c", "--problem", "p",
      "--random-state", "-3"), "--random-state"),
    (("fit", "--data", "d", "--features", "x", "--costs", "c", "--problem", "p",
      "--max-depth", "0"), "--max-depth"),
])
def test_bad_values_are_usage_errors(capsys, tmp_path, monkeypatch, argv, needle):
    monkeypatch.chdir(tmp_path)
    err = usage_error(capsys, *argv)
    assert needle in err and err.startswith("spotree")
    assert list(tmp_path.iterdir()) == []


def test_every_method_name_is_accepted():
    for name in METHODS:
        assert parse("reproduce", "shortest-path", "--methods", name).methods == [name]
    for name in PYEPO_METHODS:
        assert parse("reproduce", "pyepo", "--methods", name).methods == [name]


def test_pyepo_values_are_parsed():
    a = parse("reproduce", "pyepo", "--problems", "knapsack, shortest-path", "--degrees",
              "1,6", "--n-train", "100,5000", "--methods", "SPOBoost,PyEPO SPO+")
    assert a.problems == ["knapsack", "shortest-path"] and a.degrees == [1, 6]
    assert a.n_train == [100, 5000] and a.methods == ["SPOBoost", "PyEPO SPO+"]
    assert parse("reproduce", "pyepo").problems is None


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "reproduce" in capsys.readouterr().out


@pytest.mark.parametrize("text, expected", [("1.0", 1.0), ("1.", 1.0), ("1e0", 1.0),
                                            ("1", 1), ("3", 3), ("3.0", 3), ("0.5", 0.5)])
def test_one_point_zero_is_the_fraction_all_for_max_features_and_min_samples_split(text,
                                                                                   expected):
    """'--max-features 1.0' became the count 1 (one feature drawn per split) and
    '--min-samples-split 1.0' the count 1 (split anything), where the estimators, as
    scikit-learn's, read the float 1.0 as the fraction 1: all features, all rows."""
    import numpy as np

    from spotree import SPOTree
    from spotree.cli._commands import _make_estimator
    from spotree.problems import FiniteDecisions

    base = ("fit", "--data", "d.csv", "--features", "x*", "--costs", "c*", "--problem", "p")
    a = parse(*base, "--max-features", text, "--min-samples-split", text)
    assert a.max_features == expected and type(a.max_features) is type(expected)
    if not (type(expected) is float and expected == 1.0):
        return
    problem = FiniteDecisions(np.eye(3))
    est = _make_estimator(a, problem)
    assert type(est.max_features) is float and type(est.min_samples_split) is float
    # What the fraction 1 means, from the estimator's own two readings: one split at the
    # root only (a node needs all rows to split), over all features (max_features=None).
    rng = np.random.RandomState(0)
    X, C = rng.uniform(size=(60, 4)), rng.uniform(size=(60, 3))
    tree = est.set_params(max_depth=3).fit(X, C)
    ref = SPOTree(problem, max_depth=1, max_features=None).fit(X, C)
    assert tree.get_n_leaves() == 2
    np.testing.assert_array_equal(tree.predict_decision(X), ref.predict_decision(X))


def _option_help(command, option):
    """The help text of ``option`` of ``spotree command``, on one line."""
    sub = build_parser()._subparsers._group_actions[0].choices[command]
    text = " ".join(sub.format_help().split())
    # Up to the next option with a value (--noise LIST), not "--quick: ..." in the text.
    return re.split(r" --[a-z-]+ [A-Z]+ ", text.split(f" {option} ", 1)[1], maxsplit=1)[0]


def test_reproduce_help_defaults_are_the_grids():
    """The help gave the full grid's degrees, capacities and pyepo sizes as the defaults
    without the --quick ones, and no default for --depths; each is read here from the
    experiments' grids."""
    from spotree.experiments._configs import EXPERIMENTS

    def listed(values):
        return ",".join("none" if v is None else f"{v:g}" for v in values)

    pyepo, energy = EXPERIMENTS["pyepo"], EXPERIMENTS["energy"]
    for option, full, quick in (
            ("--degrees LIST", pyepo["full"]["degrees"], pyepo["quick"]["degrees"]),
            ("--noise LIST", pyepo["full"]["noises"], pyepo["quick"]["noises"]),
            ("--capacities LIST", energy["full"]["capacities"],
             energy["quick"]["capacities"]),
            ("--n-train LIST", pyepo["full"]["n_train"], pyepo["quick"]["n_train"])):
        assert f"(default: {listed(full)}; --quick: {listed(quick)})" in _option_help(
            "reproduce", option), option
    depths = _option_help("reproduce", "--depths LIST")
    sp = {s["n_train"]: s["depths"] for s in EXPERIMENTS["shortest-path"]["full"]["settings"]}
    for want in (f"illustrative {listed(EXPERIMENTS['illustrative']['full']['depths'])};",
                 f"shortest-path {listed(sp[200])} at n = 200 and {listed(sp[10000])} at "
                 "n = 10000;",
                 f"news {listed(EXPERIMENTS['news']['full']['depths'])}, --quick: "
                 f"{listed(EXPERIMENTS['news']['quick']['depths'])})"):
        assert want in depths, (want, depths)
    assert EXPERIMENTS["illustrative"]["quick"]["depths"] == \
        EXPERIMENTS["illustrative"]["full"]["depths"]
    # --quick changes nothing for illustrative (its grid is small already): the help must
    # say so, or a user reads --quick as a reduced run.
    assert EXPERIMENTS["illustrative"]["quick"] == EXPERIMENTS["illustrative"]["full"]
    sub = build_parser()._subparsers._group_actions[0].choices["reproduce"]
    epilog = " ".join(sub.format_help().split())
    assert "--quick runs the same grid" in epilog.split("experiments: illustrative ", 1)[1].split(
        " shortest-path ", 1)[0]
    assert "--quick: 200 only" in _option_help("reproduce", "--n-train LIST")
    assert [s["n_train"] for s in EXPERIMENTS["shortest-path"]["quick"]["settings"]] == [200]


@pytest.mark.parametrize("command, options", [("show", ("--dot", "--max-depth N")),
                                              ("plot", ("--max-depth N",))])
def test_tree_only_options_say_so_in_the_help(command, options):
    """show --dot / --max-depth and plot --max-depth are refused for a SPOBoost (a start and
    many trees, shown as a summary); the help did not say so."""
    for option in options:
        assert "a tree only, not a SPOBoost" in _option_help(command, option), option


@pytest.mark.parametrize("argv, command, needle", [
    # An option of no command: argparse reported it from the top-level parser,
    # "spotree: error: unrecognized arguments: --max_depth 3 (see 'spotree --help')",
    # whose help lists no option of fit.
    (("fit", "--data", "d", "--features", "x", "--costs", "c", "--problem", "p",
      "--max_depth", "3"), "fit", "--max_depth 3"),
    (("show", "m.json", "--bogus"), "show", "--bogus"),
    (("compare", "--data", "t.csv", "a.json", "b.json", "--plot-kinds", "ecdf"),
     "compare", "--plot-kinds ecdf"),
])
def test_an_unknown_option_points_to_its_command_help(capsys, argv, command, needle):
    err = usage_error(capsys, *argv)
    assert err.startswith(f"spotree {command}: error: unrecognized arguments: {needle}"), err
    assert err.endswith(f"(see 'spotree {command} --help')"), err


def test_an_unknown_option_with_underscores_names_the_option(capsys):
    # A Python-style name of an option (underscores) is the usual slip.
    err = usage_error(capsys, "fit", "--data", "d", "--features", "x", "--costs", "c",
                      "--problem", "p", "--max_depth", "3")
    assert "did you mean --max-depth?" in err, err
    assert "did you mean" not in usage_error(capsys, "show", "m.json", "--bogus")


def test_the_methods_help_lists_every_method(capsys):
    # The help's list is written out (the parser imports no experiment code), and
    # had fallen behind: SPOPlusLinear-conv, which --methods takes, was not in it.
    from spotree.experiments import ENERGY_METHODS

    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    out = capsys.readouterr().out
    assert not re.search(r"[\w]-\n", out)  # no name broken at a hyphen (LS-item)
    text = " ".join(out.split())
    listed = text.split("--methods LIST", 2)[2].split("--depths LIST")[0]
    for name in [*METHODS, *PYEPO_METHODS, *ENERGY_METHODS]:
        assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", listed), name
