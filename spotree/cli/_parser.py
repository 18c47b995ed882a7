"""The argument parser of the ``spotree`` command.

Option values are checked here as far as they can be on their own (types,
ranges, known names), so a typo fails at once with a usage error (exit code
2) before any file is read or written. Checks that need several options or
the files themselves live in :mod:`spotree.cli._commands`.
"""

from __future__ import annotations

import argparse

__all__ = ["build_parser", "EXPERIMENT_NAMES", "DPI_RANGE", "DEFAULT_RESULTS",
           "FIT_ESTIMATOR_OPTIONS", "NOT_GIVEN", "BOOST_INITS"]

EXPERIMENT_NAMES = ("illustrative", "shortest-path", "news", "pyepo", "energy")

#: Accepted ``spotree plot --dpi`` values.
DPI_RANGE = (10, 1000)

#: Default ``spotree reproduce --out``; each experiment writes to a subfolder.
DEFAULT_RESULTS = "spotree-results"

class _NotGiven:
    """Default of an option whose default depends on ``--estimator`` (its value
    'none', if any, means something else than leaving it out)."""

    def __repr__(self):
        return "<not given>"


#: The default of the ``spotree fit`` options in :data:`FIT_ESTIMATOR_OPTIONS`:
#: each estimator then takes its own default.
NOT_GIVEN = _NotGiven()

#: ``spotree fit`` options whose default, or whether they apply at all, depends
#: on ``--estimator``: the option's dest -> {estimator: its default}. An option
#: left out takes the estimator's default (SPOBoost's own for boost: 300 rounds
#: of depth-3 trees, not the forest's 100 unrestricted trees); one given to an
#: estimator not listed is an error, not silently dropped.
FIT_ESTIMATOR_OPTIONS = {
    "max_depth": {"tree": None, "optimal": 2, "forest": None, "boost": 3},
    "min_samples_leaf": {"tree": 1, "optimal": 1, "forest": 1, "boost": 20},
    "min_samples_split": {"tree": 2, "forest": 2},
    "max_features": {"tree": None, "forest": None, "boost": None},
    "thresholds": {"tree": "all", "optimal": "all", "forest": "all"},
    "spo_weight": {"tree": 1.0, "forest": 1.0},
    "ccp_alpha": {"tree": 0.0, "forest": 0.0},
    "n_estimators": {"forest": 100, "boost": 300},
    "ridge_features": {"forest": True},
    "learning_rate": {"boost": 0.1},
    "subsample": {"boost": 1.0},
    "init": {"boost": "auto"},
    "n_iter_no_change": {"boost": 10},
    "validation_fraction": {"tree": 0.0, "optimal": 0.0, "forest": 0.0, "boost": 0.2},
    # --categorical: OptimalSPOTree has no categorical splits.
    "categorical_features": {"tree": None, "forest": None, "boost": None},
    # SPOBoost gives each code an indicator column: no category splits to choose.
    "categorical_splits": {"tree": "equal", "forest": "equal"},
}

#: ``spotree fit --init``: SPOBoost's starting models that a name selects.
BOOST_INITS = ("auto", "ridge", "index", "spo+", "linear", "mean")


def _defaults(dest, show=None):
    """The help's "(default: ...)" of option ``dest``, from :data:`FIT_ESTIMATOR_OPTIONS`:
    the first estimator's default, then every other default with its estimators."""
    groups = {}
    for est, value in FIT_ESTIMATOR_OPTIONS[dest].items():
        groups.setdefault(repr(value), (value, []))[1].append(est)
    (first, _), *others = groups.values()
    text = (show or str)(first)
    for value, ests in others:
        text += f"; {', '.join(ests)}: {(show or str)(value)}"
    return f"(default: {text})"


_DESCRIPTION = """\
spotree: decision trees trained on the SPO loss (Smart Predict-then-Optimize).

Reproduce the paper's experiments with one command, or fit a tree to your own
CSV data and use it without writing Python.
"""

_EPILOG = """\
examples:
  spotree reproduce shortest-path --quick          # the paper's main experiment, ~10-25 s
  spotree reproduce illustrative                   # two roads: SPOT vs CART (figure 2)
  spotree reproduce pyepo --quick                  # SPOBoost & co. on PyEPO's benchmarks
  spotree reproduce energy --data DIR --quick      # real data: ICON energy knapsack
  spotree fit --data train.csv --features 'x*' --costs 'c*' \\
              --problem problem.json --model model.json --max-depth 3
  spotree predict --model model.json --data new.csv --out predictions.csv
  spotree evaluate --model model.json --data test.csv
  spotree compare --data test.csv tree.json forest.json --plot compare.png
  spotree show model.json
  spotree plot model.json --out tree.png
  spotree fit --data train.csv --features 'x*' --costs 'c*' \\
              --problem problem.json --model boost.json --estimator boost

Problem specs (JSON or YAML) are documented in examples/README.md; --problem
also takes an MPS or LP model file.
Run 'spotree COMMAND --help' for the options of each command.
"""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit code 2)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")

    def parse_args(self, args=None, namespace=None):
        # argparse reports the options no parser took from the top-level parser:
        # "spotree: error: ... (see 'spotree --help')" for a typo in 'spotree fit',
        # whose options that help does not list. The command's parser reports them.
        args, extras = self.parse_known_args(args, namespace)
        if extras:
            sub = getattr(self, "commands", {}).get(getattr(args, "command", None), self)
            message = f"unrecognized arguments: {' '.join(extras)}"
            known = [o for a in sub._actions for o in a.option_strings if o.startswith("--")]
            for word in extras:
                # The usual slip: an option's Python name (--max_depth for --max-depth).
                option = word.split("=", 1)[0].replace("_", "-")
                if word.startswith("--") and option != word.split("=", 1)[0] and option in known:
                    message += f"; did you mean {option}?"
                    break
            sub.error(message)
        return args


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    def _split_lines(self, text, width):
        # Not at hyphens: argparse wrapped the method names LS-item and
        # SPOPlusLinear-conv as "LS-" and "item" on two lines.
        import textwrap

        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


def _fmt_help(prog):
    return _HelpFormatter(prog, max_help_position=32, width=92)


# ------------------------------------------------------------ value types
# Each raises ArgumentTypeError, which argparse reports as
# "argument --option: <message>".
def _positive_int_or_none(*nones):
    """A parser of a positive int, or None for any of the words ``nones``."""
    def parse(text):
        if text.strip().lower() in nones:
            return None
        try:
            v = int(text)
        except ValueError:
            v = 0
        if v < 1:
            raise argparse.ArgumentTypeError(f"expected a positive int or 'none'; got {text!r}")
        return v
    return parse


_depth = _positive_int_or_none("none", "unrestricted")


def _depth_list(text):
    items = [s.strip() for s in text.split(",") if s.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"expected comma-separated depths; got {text!r}")
    return [_depth(s) for s in items]


def _int_in(low, high=None, what="an int"):
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            v = None
        if v is None or v < low or (high is not None and v > high):
            rng = f"[{low}, {high}]" if high is not None else f"[{low}, inf)"
            raise argparse.ArgumentTypeError(f"expected {what} in {rng}; got {text!r}")
        return v
    return parse


_rounds_or_none = _positive_int_or_none("none")


def _jobs(text):
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v == 0 or v < -1:
        raise argparse.ArgumentTypeError(f"expected a positive int or -1 (all cores); "
                                         f"got {text!r}")
    return v


def _int_list(text, example="200,10000"):
    try:
        values = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected comma-separated positive ints, e.g. "
                                         f"{example}; got {text!r}")
    return values


def _degrees(text):
    return _int_list(text, example="1,2,4,6")


def _noises(text):
    try:
        values = [float(s) for s in text.split(",") if s.strip()]
    except ValueError:
        values = []
    if not values or any(not 0.0 <= v <= 1.0 for v in values):
        raise argparse.ArgumentTypeError(f"expected comma-separated half-widths in [0, 1], "
                                         f"e.g. 0,0.5; got {text!r}")
    return values


def _capacities(text):
    try:
        values = [float(s) for s in text.split(",") if s.strip()]
    except ValueError:
        values = []
    if not values or not all(0 < v < float("inf") for v in values):  # nan fails too
        raise argparse.ArgumentTypeError(f"expected comma-separated positive numbers, e.g. "
                                         f"60,120,180; got {text!r}")
    return values


def _scalings(text):
    return _names(text, ["raw", "standardized"], "scaling")


def _names(text, known, what):
    """The comma-separated names in ``text``, each one of ``known``."""
    names = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [n for n in names if n not in known]
    if not names or unknown:
        raise argparse.ArgumentTypeError(
            f"unknown {what}(s) {', '.join(map(repr, unknown or [text]))}; known: "
            + ", ".join(map(repr, known)))
    return names


def _methods(text):
    from ..experiments import ENERGY_METHODS, METHODS, PYEPO_METHODS

    known = list(METHODS) + [m for m in PYEPO_METHODS if m not in METHODS]
    return _names(text, known + [m for m in ENERGY_METHODS if m not in known], "method")


def _problems(text):
    from ..experiments import PYEPO_PROBLEMS

    return _names(text, list(PYEPO_PROBLEMS), "problem")


def _seeds(text):
    from ..experiments import parse_seeds

    try:
        return parse_seeds(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--seeds ")) from None


def _number(text):
    """A count (int >= 1) or a fraction (float); the estimator checks the range.

    An int stays an int ("0", "-3"): as 0.0 the estimator's message showed a float
    the user never typed ("Got 0.0").
    """
    try:
        return int(text)
    except ValueError:
        pass
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number; got {text!r}") from None
    return int(v) if v.is_integer() and v >= 1 else v


def _number_to_all(text):
    """:func:`_number` for an option whose fraction may be 1 (all features, all rows).

    There ``1.0`` is the fraction 1, as for the estimator, not the count 1:
    ``--max-features 1.0`` searched one feature per split instead of all.
    """
    v = _number(text)
    if v == 1 and not text.strip().lstrip("+").isdigit():  # "1.0", "1e0": not "1"
        return 1.0
    return v


def _float(text):
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number; got {text!r}") from None


def _fraction(text):
    v = _float(text)
    if not 0.0 <= v < 1.0:
        raise argparse.ArgumentTypeError(f"expected a fraction in [0, 1); got {text!r}")
    return v


def _thresholds(text):
    if text == "all":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected 'all' or an int; got {text!r}") from None


# ------------------------------------------------------------------ parser
def build_parser():
    """The argument parser of the ``spotree`` command."""
    from .. import __version__

    parser = _Parser(prog="spotree", description=_DESCRIPTION, epilog=_EPILOG,
                     formatter_class=_fmt_help)
    parser.add_argument("--version", action="version", version=f"spotree {__version__}")
    parser.add_argument("--traceback", action="store_true",
                        help="show the full Python traceback on errors (for bug reports)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    # --traceback after the command too, where the error message's "rerun with
    # --traceback" puts it; SUPPRESS keeps the value given before the command.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS,
                        help="show the full Python traceback on errors (for bug reports)")

    # reproduce ------------------------------------------------------------
    rp = sub.add_parser(
        "reproduce", formatter_class=_fmt_help, parents=[common],
        help="run one of the paper's experiments or the PyEPO comparison; write "
             "results.csv, summary.md, figures",
        description=(
            "Run one of the paper's experiments with the paper's settings and write\n"
            "results.csv (one row per run), summary.md (mean and std of the test\n"
            "normalized SPO loss per method and depth, % improvement of SPOT over CART,\n"
            "leaves, fit times) and PNG figures in the style of the paper's figures\n"
            "to OUT/EXPERIMENT. The pyepo experiment compares SPOBoost and other\n"
            "decision-focused methods with two-stage ones on PyEPO's benchmarks\n"
            "(normalized regret and fit time per method and degree).\n\n"
            "Every run is cached in OUT/EXPERIMENT/cache as soon as it finishes:\n"
            "rerunning the same command resumes an interrupted experiment (Ctrl-C\n"
            "stops it) and only redraws a finished one. The compiled kernels are\n"
            "built once before the timed fits, so fit times exclude compilation."),
        epilog=(
            "experiments:\n"
            "  illustrative   two roads, one feature (section 3.1): SPOT finds the true\n"
            "                 decision boundary at depth 1, CART does not (~10 s; --quick\n"
            "                 runs the same grid: it is small already)\n"
            "  shortest-path  4x4 grid shortest path (section 5.1): n = 200 at depths 1, 2, 3,\n"
            "                 unrestricted and n = 10000 at depths 2, 4, 6, unrestricted;\n"
            "                 degree 2 and 10; 10 seeds; SPOT, CART, forests, optimal trees.\n"
            "                 --quick: n = 200 only, 5 seeds, 50-tree forests, no optimal\n"
            "                 trees (~10-25 s)\n"
            "  news           news recommendation over 9 constraint sets (section 5.2).\n"
            "                 With --data DIR, DIR holds the licensed Yahoo! R6A files\n"
            "                 (ydata-fp-td-clicks-v1_0.200905NN[.gz], Webscope dataset R6A);\n"
            "                 without it, synthetic make_news data stands in (and the\n"
            "                 summary says so)\n"
            "  pyepo          SPOBoost, SPOForest, SPOTree and SPO+ linear against two-stage\n"
            "                 least squares, polynomial ridge, neural network, random forest\n"
            "                 and gradient boosting (and PyEPO's own SPO+ and PFYL, linear and\n"
            "                 network, where pyepo and torch are installed) on PyEPO's 5x5\n"
            "                 shortest path and 32-item, 2-resource knapsack: degrees 1, 2,\n"
            "                 4, 6; n_train 100, 1000, 5000; noise 0 and 0.5; 5 seeds.\n"
            "                 Normalized regret, its excess over the Bayes floor (deciding\n"
            "                 with the true E[c|x]) and fit time per method and degree.\n"
            "                 --quick: n_train 200, noise 0.5, degrees 1 and 6, 3 seeds,\n"
            "                 20-tree forests, no HGB, PyEPO's SPO+ linear only (a few\n"
            "                 minutes)\n"
            "  energy         real data: ICON energy prices as a 48-item knapsack (the JAIR\n"
            "                 2024 decision-focused learning benchmark). --data is its file\n"
            "                 Data.npz (PredOpt/predopt-benchmarks, Knapsack/Trainer/) or its\n"
            "                 folder. SPOTree, SPOForest, SPOBoost, SPOPlusLinear, two-stage\n"
            "                 least squares (item and day level) and random forest; 5 day\n"
            "                 shuffles, capacities 60, 120, 180, raw and standardized\n"
            "                 features; relative regret (%) and normalized regret. --quick:\n"
            "                 seed 0, capacity 120, raw features, 20-tree forests\n\n"
            "examples:\n"
            "  spotree reproduce shortest-path --quick --jobs 2\n"
            "  spotree reproduce shortest-path --n-train 200 --jobs 2      # full n = 200 grid\n"
            "  spotree reproduce shortest-path --seeds 1 --methods SPOT,CART --depths 1,2\n"
            "  spotree reproduce news --data ~/yahoo-r6a --jobs 8\n"
            "  spotree reproduce pyepo --quick\n"
            "  spotree reproduce pyepo --problems knapsack --n-train 1000 --degrees 1,6 \\\n"
            "                          --methods SPOBoost,LS --seeds 3 --jobs 2\n"
            "  spotree reproduce energy --data ../shared/realdata/icon_energy_knapsack \\\n"
            "                           --capacities 120 --standardize --jobs 2\n"
            "  spotree reproduce shortest-path --scheduler tcp://10.0.0.5:8786"))
    rp.add_argument("experiment", choices=EXPERIMENT_NAMES, metavar="EXPERIMENT",
                    help="one of: " + ", ".join(EXPERIMENT_NAMES))
    rp.add_argument("--quick", action="store_true",
                    help="run the reduced grid (minutes instead of hours)")
    rp.add_argument("--out", metavar="DIR", default=DEFAULT_RESULTS,
                    help=f"results folder; the experiment writes to DIR/EXPERIMENT "
                         f"(default: {DEFAULT_RESULTS})")
    rp.add_argument("--jobs", type=_jobs, default=1, metavar="N",
                    help="parallel runs on this machine; -1 for all cores (default: 1)")
    rp.add_argument("--seeds", type=_seeds, metavar="S",
                    help="seeds to run: a count (10), a list (0,3,7) or a range (2:5); "
                         "for news, the constraint sets (default: the paper's; fewer with "
                         "--quick, see below)")
    rp.add_argument("--methods", type=_methods, metavar="LIST",
                    help="comma-separated methods: SPOT, CART, 'SPOT Optimal', 'SPO Forest', "
                         "'CART Forest'; for pyepo: SPOBoost, SPOForest, SPOTree, "
                         "SPOPlusLinear, LS, PolyRidge, MLP, RF, HGB, SPOBoost-mse, 'PyEPO SPO+', "
                         "'PyEPO SPO+ NN', 'PyEPO PFYL', 'PyEPO PFYL NN', SPOPlusLinear-conv "
                         "(SPOPlusLinear trained to convergence; not in the default grids); "
                         "for energy: "
                         "SPOTree, SPOForest, SPOBoost, SPOPlusLinear, LS-item, LS-day, RF "
                         "(default: the experiment's)")
    rp.add_argument("--depths", type=_depth_list, metavar="LIST",
                    help="illustrative, shortest-path, news: comma-separated training "
                         "depths, 'none' for unrestricted (default: illustrative 1,2,3,4; "
                         "shortest-path 1,2,3,none at n = 200 and 2,4,6,none at n = 10000; "
                         "news 2,4,6,none, --quick: 2,none)")
    rp.add_argument("--n-train", type=_int_list, metavar="LIST",
                    help="shortest-path: training sizes to run, 200 and/or 10000 (default: "
                         "both; --quick: 200 only); pyepo: any training sizes (default: "
                         "100,1000,5000; --quick: 200)")
    rp.add_argument("--problems", type=_problems, metavar="LIST",
                    help="pyepo: comma-separated problems, shortest-path and/or knapsack "
                         "(default: both)")
    rp.add_argument("--degrees", type=_degrees, metavar="LIST",
                    help="pyepo: comma-separated degrees of the cost model (default: "
                         "1,2,4,6; --quick: 1,6)")
    rp.add_argument("--noise", type=_noises, metavar="LIST",
                    help="pyepo: comma-separated half-widths of the multiplicative noise "
                         "(default: 0,0.5; --quick: 0.5)")
    rp.add_argument("--data", metavar="DIR",
                    help="news: directory of the Yahoo! R6A log files (plain or .gz); "
                         "energy: the ICON energy file Data.npz or its folder (required)")
    rp.add_argument("--capacities", type=_capacities, metavar="LIST",
                    help="energy: comma-separated knapsack capacities (default: 60,120,180; "
                         "--quick: 120)")
    rp.add_argument("--scaling", type=_scalings, metavar="LIST",
                    help="energy: feature scalings, raw and/or standardized (default: both; "
                         "--quick: raw)")
    rp.add_argument("--standardize", action="store_true",
                    help="energy: standardized features only (same as --scaling "
                         "standardized)")
    rp.add_argument("--user-clusters", type=_int_in(1), default=None, metavar="K",
                    help="news --data: k-means clusters of users (default: 10000)")
    rp.add_argument("--min-records", type=_int_in(1), default=None, metavar="N",
                    help="news --data: records needed per user cluster and article type "
                         "(default: 50)")
    rp.add_argument("--scheduler", metavar="ADDRESS",
                    help="send the runs to this dask.distributed scheduler, whose "
                         "workers run them (not with --jobs; needs spotree[dask])")
    rp.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    rp.add_argument("--quiet", action="store_true", help="no progress on stderr")

    # fit ------------------------------------------------------------------
    fp = sub.add_parser(
        "fit", formatter_class=_fmt_help, parents=[common],
        help="fit an SPO tree, forest or boosted model to a CSV file and save it",
        description=(
            "Fit an SPO tree (or a CART tree with --criterion mse), an optimal SPO tree,\n"
            "an SPO forest or SPOBoost (--estimator) to the rows of a CSV file: feature\n"
            "columns X, cost columns C (one per decision variable of the problem, in the\n"
            "problem's order) and optional sample weights.\n\n"
            "Column lists are comma-separated names or shell patterns, e.g. 'x0,x1' or\n"
            "'x*'; patterns keep the file's column order. A feature column of text is\n"
            "categorical; one of integer codes (weekday, region id) is numeric unless\n"
            "--categorical names it."),
        epilog=("examples:\n  spotree fit --data examples/shortest_path_train.csv "
                "--features 'x*' --costs 'c*' \\\n"
                "              --problem examples/shortest_path.json --model model.json \\\n"
                "              --max-depth 3 --min-samples-leaf 20 --validation-fraction 0.2\n"
                "  spotree fit --data examples/shortest_path_train.csv "
                "--features 'x*' --costs 'c*' \\\n"
                "              --problem examples/shortest_path.json --model boost.json \\\n"
                "              --estimator boost --random-state 0"))
    req = fp.add_argument_group("required")
    req.add_argument("--data", required=True, metavar="CSV", help="training data")
    req.add_argument("--features", required=True, metavar="COLS", help="feature columns")
    req.add_argument("--costs", required=True, metavar="COLS", help="cost columns")
    req.add_argument("--problem", required=True, metavar="SPEC",
                     help="problem spec file (.json, .yaml; see examples/README.md) or "
                          "MPS/LP model file (.mps, .lp; the cost columns in its column "
                          "order)")
    fp.add_argument("--weights", metavar="COL", help="column of sample weights")
    fp.add_argument("--categorical", dest="categorical_features", default=NOT_GIVEN,
                    metavar="COLS",
                    help="tree, forest, boost: feature columns (among --features) of "
                         "category codes, e.g. a weekday 0..6 or a region id: the trees "
                         "split them by category (x == s), not by threshold; boost gives "
                         "each code seen at fit its own indicator column. A code not seen "
                         "at fit is a missing value (tree, forest) or all-zero indicators "
                         "(boost). Text columns are categorical anyway (default: none)")
    fp.add_argument("--categorical-splits", choices=("equal", "subset"), default=NOT_GIVEN,
                    help="tree, forest: how a split divides a categorical feature's "
                         "categories: 'equal' sends one category one way (x == s, the "
                         "paper's rule); 'subset' searches every subset of them (up to 10 "
                         "categories per node, one-vs-rest beyond) "
                         + _defaults("categorical_splits"))
    fp.add_argument("--model", default="model.json", metavar="OUT",
                    help="where to save the model (default: model.json)")
    opt = fp.add_argument_group(
        "model options", "Each option names the estimators it applies to (when not all); one\n"
        "left out takes the estimator's own default.")
    opt.add_argument("--estimator", choices=("tree", "optimal", "forest", "boost"),
                     default="tree",
                     help="tree: greedy SPOTree (default); optimal: OptimalSPOTree of depth "
                          "--max-depth; forest: SPOForest; boost: SPOBoost, gradient "
                          "boosting of small trees on the SPO+ loss from a fitted start "
                          "(--init), the number of rounds chosen by early stopping")
    opt.add_argument("--criterion", choices=("spo", "mse", "auto"), default=None,
                     help="spo: SPO trees (default for tree and optimal); mse: CART trees "
                          "(tree and forest); auto: SPO or CART trees, whichever makes the "
                          "better out-of-bag decisions (forest only; its default). boost: "
                          "spo (default) boosts on the SPO+ loss, mse on squared error "
                          "(two-stage)")
    opt.add_argument("--max-depth", type=_depth, default=NOT_GIVEN, metavar="N",
                     help="maximum depth of the tree(s), or 'none' (unrestricted; not for "
                          "optimal) " + _defaults("max_depth", lambda v: v or "none"))
    opt.add_argument("--min-samples-leaf", type=_number, default=NOT_GIVEN, metavar="N",
                     help="minimum number of rows in a leaf, whatever their weights "
                          "(rows of weight 0 do not count; forest: of drawn rows): a count, "
                          "or a fraction in (0, 1) of the rows of positive weight "
                          + _defaults("min_samples_leaf"))
    opt.add_argument("--min-samples-split", type=_number_to_all, default=NOT_GIVEN,
                     metavar="N",
                     help="tree, forest: minimum number of rows to split a node: a count, "
                          "or a fraction in (0, 1] " + _defaults("min_samples_split"))
    opt.add_argument("--max-features", type=_number_to_all, default=NOT_GIVEN, metavar="N",
                     help="tree, forest, boost: features searched per split: a count, or a "
                          "fraction in (0, 1] (1.0: all) (default: all; forest: sqrt)")
    opt.add_argument("--thresholds", type=_thresholds, default=NOT_GIVEN, metavar="all|K",
                     help="tree, optimal, forest: 'all' boundaries between distinct values "
                          "or K quantiles per feature, drawn per node (tree, forest) or once "
                          "on the whole training set (optimal: its global_thresholds) "
                          + _defaults("thresholds"))
    opt.add_argument("--spo-weight", type=_float, default=NOT_GIVEN,
                     metavar="A", help="tree, forest: mix of SPO (1) and squared error (0) "
                                       "in the split criterion " + _defaults("spo_weight",
                                                                              "{:g}".format))
    opt.add_argument("--ccp-alpha", type=_float, default=NOT_GIVEN,
                     metavar="ALPHA", help="tree, forest (each tree): cost-complexity "
                                           "pruning strength " + _defaults("ccp_alpha",
                                                                           "{:g}".format))
    opt.add_argument("--n-estimators", type=_int_in(1), default=NOT_GIVEN,
                     metavar="N", help="forest: number of trees; boost: most boosting rounds "
                                       + _defaults("n_estimators"))
    opt.add_argument("--no-ridge-features", dest="ridge_features", action="store_false",
                     default=NOT_GIVEN,
                     help="forest: split on the features alone, not also on the costs "
                          "predicted by a ridge regression (the paper's forest)")
    opt.add_argument("--learning-rate", type=_float, default=NOT_GIVEN, metavar="R",
                     help="boost: shrinkage of every tree, > 0 "
                          + _defaults("learning_rate"))
    opt.add_argument("--subsample", type=_float, default=NOT_GIVEN, metavar="F",
                     help="boost: fraction of the rows drawn for each round's tree, in "
                          "(0, 1] " + _defaults("subsample", "{:g}".format))
    opt.add_argument("--init", choices=BOOST_INITS, default=NOT_GIVEN,
                     help="boost: the starting model: ridge regression, 'index' (a "
                          "smooth function of a linear index per cost), a linear model "
                          "trained on SPO+ ('spo+'), least squares ('linear'), the mean "
                          "cost, or 'auto': index or ridge by 5-fold cross-validated "
                          "regret " + _defaults("init"))
    opt.add_argument("--n-iter-no-change", type=_rounds_or_none, default=NOT_GIVEN,
                     metavar="N", help="boost: stop after N rounds without a lower regret "
                                       "on the validation rows; 'none': no early stopping, "
                                       "all --n-estimators rounds on all the rows "
                                       + _defaults("n_iter_no_change"))
    opt.add_argument("--validation-fraction", type=_fraction, default=NOT_GIVEN, metavar="F",
                     help="tree, optimal: hold out the first F of the rows and prune the "
                          "tree on them, as the paper does with 0.2; forest without "
                          "--max-features: tune max_features in {2, 3, 4, 5} on them "
                          "instead; boost: hold out a random F of the rows (in (0, 1)) to "
                          "choose the number of rounds, then refit on all the rows "
                          + _defaults("validation_fraction", "{:g}".format))
    opt.add_argument("--random-state", type=_int_in(0, 2**32 - 1), default=None,
                     metavar="SEED",
                     help="seed of the estimator's random draws: boost: its validation "
                          "rows, subsamples, feature draws and --init auto's folds; "
                          "forest: bootstrap samples and feature draws; tree: the feature "
                          "draws of --max-features; optimal: nothing (its exact search "
                          "draws nothing). Left "
                          "out, each run draws anew, so a boosted model (and a forest) "
                          "differs from run to run")

    # predict --------------------------------------------------------------
    pp = sub.add_parser(
        "predict", formatter_class=_fmt_help, parents=[common],
        help="predict costs and decisions for the rows of a CSV file",
        description=("Predict the costs and the decision of every row of a CSV file.\n"
                     "The output has one column pred_<cost> per predicted cost and one\n"
                     "column decision_<cost> per decision variable."))
    pp.add_argument("--model", required=True, metavar="M", help="a model saved by 'fit'")
    pp.add_argument("--data", required=True, metavar="CSV",
                    help="rows to predict; must hold the model's feature columns")
    pp.add_argument("--out", metavar="CSV",
                    help="output file; '-' or left out: standard output")

    # evaluate -------------------------------------------------------------
    ep = sub.add_parser(
        "evaluate", formatter_class=_fmt_help, parents=[common],
        help="score a model's decisions on a CSV file of realized costs",
        description=("Score a saved model on the rows of a CSV file that hold its feature\n"
                     "columns and the realized costs: the normalized SPO loss of its\n"
                     "decisions (the extra cost over the best decisions in hindsight, as a\n"
                     "fraction of their cost; the model's score() is minus it)."))
    ep.add_argument("--model", required=True, metavar="M", help="a model saved by 'fit'")
    ep.add_argument("--data", required=True, metavar="CSV",
                    help="rows to score; must hold the model's feature and cost columns")
    ep.add_argument("--costs", metavar="COLS",
                    help="cost columns, in the problem's order (default: the columns the "
                         "model was fitted on)")
    ep.add_argument("--weights", metavar="COL",
                    help="column of sample weights (default: every row weighs 1, whatever "
                         "the model's fit was weighted by)")

    # compare --------------------------------------------------------------
    cp = sub.add_parser(
        "compare", formatter_class=_fmt_help, parents=[common],
        help="compare several models' decisions on the same rows, paired row by row",
        description=(
            "Score several saved models on the same rows of a CSV file of realized\n"
            "costs and compare each with a reference, row by row: each model's\n"
            "normalized SPO loss, its difference from the reference's with a standard\n"
            "error (the rows taken as independent draws), and the rows where it\n"
            "decides better or worse (spotree.metrics.compare_decisions). A difference\n"
            "within about two standard errors of 0 is no evidence either way. The\n"
            "models must be fitted on the same problem; each reads its own feature\n"
            "columns."),
        epilog=("example:\n  spotree compare --data examples/shortest_path_test.csv "
                "tree.json forest.json \\\n"
                "                  --names tree,forest --reference tree --plot compare.png"))
    cp.add_argument("models", nargs="+", metavar="MODEL",
                    help="two or more models saved by 'fit'")
    cp.add_argument("--data", required=True, metavar="CSV",
                    help="rows to score; must hold the models' feature and cost columns")
    cp.add_argument("--costs", metavar="COLS",
                    help="cost columns, in the problem's order (default: the columns the "
                         "models were fitted on)")
    cp.add_argument("--weights", metavar="COL",
                    help="column of sample weights (default: every row weighs 1, whatever "
                         "the models' fits were weighted by)")
    cp.add_argument("--names", metavar="LIST",
                    help="comma-separated names of the models, in the order given "
                         "(default: their file names without the extension)")
    cp.add_argument("--reference", metavar="NAME",
                    help="the model the others are compared with (default: the first)")
    cp.add_argument("--plot", metavar="FILE",
                    help="also draw the distribution over the rows of each model's paired "
                         "regret difference from the reference to FILE (.png, .pdf or "
                         ".svg; needs spotree[plot])")
    cp.add_argument("--plot-kind", choices=("difference", "ecdf"), default=None,
                    help="with --plot: difference (default), or each model's regrets "
                         "(ecdf)")

    # show / plot ----------------------------------------------------------
    sp = sub.add_parser("show", formatter_class=_fmt_help, parents=[common],
                        help="print a model as text",
                        description="Print a saved tree: its splits and each leaf's "
                                    "decision, samples and SPO loss.\nFor SPOBoost: its "
                                    "start, the trees kept, the regret by round and the\n"
                                    "feature importances.")
    sp.add_argument("model", metavar="M",
                    help="a tree (--estimator tree or optimal) or a SPOBoost saved by 'fit'; "
                         "a forest's trees are not shown")
    sp.add_argument("--dot", action="store_true",
                    help="print Graphviz DOT instead of text (a tree only, not a SPOBoost)")
    sp.add_argument("--max-depth", type=_int_in(0, what="a non-negative int"), default=None,
                    metavar="N", help="print only the top N levels (a tree only, not a "
                                      "SPOBoost)")

    lp = sub.add_parser("plot", formatter_class=_fmt_help, parents=[common],
                        help="draw a model as an image",
                        description="Draw a saved tree (needs spotree[plot]). The figure "
                                    "grows with the tree, up to 40 x 24 inches.\nFor "
                                    "SPOBoost: its regret round by round on the training and "
                                    "validation rows, and\nthe round kept.")
    lp.add_argument("model", metavar="M",
                    help="a tree (--estimator tree or optimal) or a SPOBoost saved by 'fit'; "
                         "a forest's trees are not drawn")
    lp.add_argument("--out", required=True, metavar="FILE",
                    help="image file to write: .png, .pdf or .svg")
    lp.add_argument("--max-depth", type=_int_in(0, what="a non-negative int"), default=None,
                    metavar="N", help="draw only the top N levels (a tree only, not a "
                                      "SPOBoost)")
    lp.add_argument("--dpi", type=_int_in(*DPI_RANGE), default=None,
                    help=f"resolution of a .png in dots per inch, {DPI_RANGE[0]} to "
                         f"{DPI_RANGE[1]} (default: 110); .pdf and .svg are vector images, "
                         "without a resolution")
    parser.commands = sub.choices  # the parser of each command, for parse_args' errors
    return parser
