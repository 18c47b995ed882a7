"""The ``spotree`` command: reproduce the paper, and fit / predict / show / plot on CSV files.

This module only parses arguments and calls the library; see ``spotree --help``.
Every failure is reported as one line on stderr with a non-zero exit code, and
output files are written to a temporary file first and renamed into place, so
a failed command never leaves a partial file behind.
"""

from __future__ import annotations

import argparse
import csv
import fnmatch
import io
import json
import math
import os
import sys
import warnings

__all__ = ["main", "build_parser"]

_EXPERIMENTS = ("illustrative", "shortest-path", "news")

_DESCRIPTION = """\
spotree: decision trees trained on the SPO loss (Smart Predict-then-Optimize).

Reproduce the paper's experiments with one command, or fit a tree to your own
CSV data and use it without writing Python.
"""

_EPILOG = """\
examples:
  spotree reproduce shortest-path --quick          # the paper's main experiment, ~1-2 min
  spotree reproduce illustrative                   # two roads: SPOT vs CART (figure 2)
  spotree fit --data train.csv --features 'x*' --costs 'c*' \\
              --problem problem.json --model model.json --max-depth 3
  spotree predict --model model.json --data new.csv --out predictions.csv
  spotree show model.json
  spotree plot model.json --out tree.png

Problem specs (JSON or YAML) are documented in examples/README.md.
Run 'spotree COMMAND --help' for the options of each command.
"""


class CLIError(Exception):
    """A user-facing error: printed as one line, exit code 1."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit code 2)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _fmt_help(prog):
    return argparse.RawDescriptionHelpFormatter(prog, max_help_position=32, width=92)


# ------------------------------------------------------------------ parser
def build_parser():
    """The argument parser of the ``spotree`` command."""
    from . import __version__

    parser = _Parser(prog="spotree", description=_DESCRIPTION, epilog=_EPILOG,
                     formatter_class=_fmt_help)
    parser.add_argument("--version", action="version", version=f"spotree {__version__}")
    parser.add_argument("--traceback", action="store_true",
                        help="show the full Python traceback on errors (for bug reports)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    # reproduce ------------------------------------------------------------
    rp = sub.add_parser(
        "reproduce", formatter_class=_fmt_help,
        help="run one of the paper's experiments; write results.csv, summary.md, figures",
        description=(
            "Run one of the paper's experiments with the paper's settings and write\n"
            "results.csv (one row per run), summary.md (mean and std of the test\n"
            "normalized SPO loss per method and depth, % improvement of SPOT over CART,\n"
            "leaves, fit times) and PNG figures in the style of the paper's figures.\n\n"
            "Every run is cached in OUT/cache as soon as it finishes: rerunning the same\n"
            "command resumes an interrupted experiment and only redraws a finished one.\n"
            "Methods whose estimator is not available in this spotree are skipped."),
        epilog=(
            "experiments:\n"
            "  illustrative   two roads, one feature (section 3.1): SPOT finds the true\n"
            "                 decision boundary at depth 1, CART does not\n"
            "  shortest-path  4x4 grid shortest path (section 5.1): n = 200 at depths 1, 2, 3,\n"
            "                 unrestricted and n = 10000 at depths 2, 4, 6, unrestricted;\n"
            "                 degree 2 and 10; 10 seeds; SPOT, CART, forests, optimal trees.\n"
            "                 --quick: n = 200 only, 5 seeds, 50-tree forests (~1 min)\n"
            "  news           news recommendation over 9 constraint sets (section 5.2).\n"
            "                 With --data DIR, DIR holds the licensed Yahoo! R6A files\n"
            "                 (ydata-fp-td-clicks-v1_0.200905NN[.gz], Webscope dataset R6A);\n"
            "                 without it, synthetic make_news data stands in (and the\n"
            "                 summary says so)\n\n"
            "examples:\n"
            "  spotree reproduce shortest-path --quick --jobs 2\n"
            "  spotree reproduce shortest-path --n-train 200 --jobs 2      # full n = 200 grid\n"
            "  spotree reproduce shortest-path --seeds 1 --methods SPOT,CART --depths 1,2\n"
            "  spotree reproduce news --data ~/yahoo-r6a --jobs 8\n"
            "  spotree reproduce shortest-path --scheduler tcp://10.0.0.5:8786"))
    rp.add_argument("experiment", choices=_EXPERIMENTS, metavar="EXPERIMENT",
                    help="one of: " + ", ".join(_EXPERIMENTS))
    rp.add_argument("--quick", action="store_true",
                    help="run the reduced grid (minutes instead of hours)")
    rp.add_argument("--out", metavar="DIR",
                    help="output directory (default: ./spotree-results/EXPERIMENT)")
    rp.add_argument("--jobs", type=int, default=1, metavar="N",
                    help="parallel runs on this machine; -1 for all cores (default: 1)")
    rp.add_argument("--seeds", metavar="S",
                    help="seeds to run: a count (10), a list (0,3,7) or a range (2:5); "
                         "for news, the constraint sets (default: the paper's)")
    rp.add_argument("--methods", metavar="LIST",
                    help="comma-separated methods: SPOT, CART, 'SPOT Optimal', 'SPO Forest', "
                         "'CART Forest' (default: all available)")
    rp.add_argument("--depths", metavar="LIST",
                    help="comma-separated training depths, 'none' for unrestricted")
    rp.add_argument("--n-train", metavar="LIST",
                    help="shortest-path: training sizes to run (200 and/or 10000)")
    rp.add_argument("--data", metavar="DIR",
                    help="news: directory of the Yahoo! R6A log files (plain or .gz)")
    rp.add_argument("--user-clusters", type=int, default=None, metavar="K",
                    help="news --data: k-means clusters of users (default: 10000)")
    rp.add_argument("--min-records", type=int, default=None, metavar="N",
                    help="news --data: records needed per user cluster and article type "
                         "(default: 50)")
    rp.add_argument("--scheduler", metavar="ADDRESS",
                    help="send the runs to this dask.distributed scheduler "
                         "(needs spotree[dask])")
    rp.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    rp.add_argument("--quiet", action="store_true", help="no progress on stderr")
    rp.set_defaults(func=_cmd_reproduce)

    # fit ------------------------------------------------------------------
    fp = sub.add_parser(
        "fit", formatter_class=_fmt_help,
        help="fit an SPO tree to a CSV file and save it",
        description=(
            "Fit an SPO tree (or a CART tree with --criterion mse) to the rows of a CSV\n"
            "file: feature columns X, cost columns C (one per decision variable of the\n"
            "problem, in the problem's order) and optional sample weights.\n\n"
            "Column lists are comma-separated names or shell patterns, e.g. 'x1,x2' or\n"
            "'x*'; patterns keep the file's column order."),
        epilog=("example:\n  spotree fit --data examples/shortest_path_train.csv "
                "--features 'x*' --costs 'c*' \\\n"
                "              --problem examples/shortest_path.json --model model.json \\\n"
                "              --max-depth 3 --min-samples-leaf 20 --validation-fraction 0.2"))
    req = fp.add_argument_group("required")
    req.add_argument("--data", required=True, metavar="CSV", help="training data")
    req.add_argument("--features", required=True, metavar="COLS", help="feature columns")
    req.add_argument("--costs", required=True, metavar="COLS", help="cost columns")
    req.add_argument("--problem", required=True, metavar="SPEC",
                     help="problem spec file (.json, .yaml); see examples/README.md")
    fp.add_argument("--weights", metavar="COL", help="column of sample weights")
    fp.add_argument("--model", default="model.json", metavar="OUT",
                    help="where to save the model (default: model.json)")
    opt = fp.add_argument_group("model options")
    opt.add_argument("--estimator", choices=("tree", "optimal", "forest"), default="tree",
                     help="tree: greedy SPOTree (default); optimal: OptimalSPOTree of depth "
                          "--max-depth (default 2); forest: SPOForest")
    opt.add_argument("--criterion", choices=("spo", "mse"), default="spo",
                     help="spo: SPO tree (default); mse: CART tree (tree and forest)")
    opt.add_argument("--max-depth", type=_depth, default=None, metavar="N",
                     help="maximum depth (default: unrestricted)")
    opt.add_argument("--min-samples-leaf", type=_number, default=1, metavar="N",
                     help="minimum weight of a leaf: a count, or a fraction in (0, 1) "
                          "(default: 1)")
    opt.add_argument("--min-samples-split", type=_number, default=2, metavar="N",
                     help="minimum weight to split a node (default: 2)")
    opt.add_argument("--max-features", type=_number, default=None, metavar="N",
                     help="features searched per split (default: all; forest: sqrt)")
    opt.add_argument("--thresholds", default="all", metavar="all|K",
                     help="'all' boundaries between distinct values or K quantiles per "
                          "feature (default: all)")
    opt.add_argument("--spo-weight", type=float, default=1.0, metavar="A",
                     help="mix of SPO (1) and squared error (0) in the split criterion "
                          "(default: 1)")
    opt.add_argument("--ccp-alpha", type=float, default=0.0, metavar="ALPHA",
                     help="cost-complexity pruning strength (default: 0)")
    opt.add_argument("--n-estimators", type=int, default=100, metavar="N",
                     help="forest: number of trees (default: 100)")
    opt.add_argument("--validation-fraction", type=float, default=0.0, metavar="F",
                     help="hold out the first F of the rows and prune the tree on them, "
                          "as the paper does with 0.2; for a forest without "
                          "--max-features, tune max_features in {2, 3, 4, 5} on them "
                          "instead (default: 0)")
    opt.add_argument("--random-state", type=int, default=None, metavar="SEED")
    fp.set_defaults(func=_cmd_fit)

    # predict --------------------------------------------------------------
    pp = sub.add_parser(
        "predict", formatter_class=_fmt_help,
        help="predict costs and decisions for the rows of a CSV file",
        description=("Predict the costs and the decision of every row of a CSV file.\n"
                     "The output has one column pred_<cost> per predicted cost and one\n"
                     "column decision_<cost> per decision variable."))
    pp.add_argument("--model", required=True, metavar="M", help="a model saved by 'fit'")
    pp.add_argument("--data", required=True, metavar="CSV",
                    help="rows to predict; must hold the model's feature columns")
    pp.add_argument("--out", metavar="CSV", help="output file (default: standard output)")
    pp.set_defaults(func=_cmd_predict)

    # show / plot ----------------------------------------------------------
    sp = sub.add_parser("show", formatter_class=_fmt_help, help="print a model as text",
                        description="Print a saved tree: its splits and each leaf's "
                                    "decision, samples and SPO loss.")
    sp.add_argument("model", metavar="M", help="a model saved by 'fit'")
    sp.add_argument("--dot", action="store_true", help="print Graphviz DOT instead of text")
    sp.set_defaults(func=_cmd_show)

    lp = sub.add_parser("plot", formatter_class=_fmt_help, help="draw a model as a PNG",
                        description="Draw a saved tree (needs spotree[plot]).")
    lp.add_argument("model", metavar="M", help="a model saved by 'fit'")
    lp.add_argument("--out", required=True, metavar="PNG", help="image file to write")
    lp.add_argument("--max-depth", type=int, default=None, metavar="N",
                    help="draw only the top N levels")
    lp.add_argument("--dpi", type=int, default=110, help="resolution (default: 110)")
    lp.set_defaults(func=_cmd_plot)
    return parser


def _depth(text):
    if text.lower() in ("none", "unrestricted"):
        return None
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive int or 'none', got {text!r}") \
            from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive int or 'none', got {text!r}")
    return v


def _number(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    return int(v) if v.is_integer() and v >= 1 else v


# ------------------------------------------------------------ CSV helpers
def _read_csv(path):
    """Header and rows of a CSV file, with clear errors."""
    if not os.path.isfile(path):
        raise CLIError(f"data file not found: {path}")
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            rows = list(csv.reader(fh))
    except UnicodeDecodeError:
        raise CLIError(f"{path} is not a text CSV file") from None
    except csv.Error as exc:
        raise CLIError(f"{path} is not a valid CSV file: {exc}") from None
    rows = [r for r in rows if r and any(c.strip() for c in r)]
    if not rows:
        raise CLIError(f"{path} is empty: expected a header line and data rows")
    header = [h.strip() for h in rows[0]]
    dup = sorted({h for h in header if header.count(h) > 1})
    if dup:
        raise CLIError(f"{path} has duplicate column names: {', '.join(dup)}")
    body = rows[1:]
    if not body:
        raise CLIError(f"{path} has a header but no data rows")
    for i, r in enumerate(body):
        if len(r) != len(header):
            raise CLIError(f"{path}, line {i + 2}: {len(r)} fields but the header has "
                           f"{len(header)}")
    return header, body


def _select(spec, header, option, path):
    """Column names matching a comma-separated list of names / patterns."""
    out = []
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        if any(ch in item for ch in "*?["):
            hits = [h for h in header if fnmatch.fnmatchcase(h, item)]
        else:
            hits = [item] if item in header else []
        if not hits:
            shown = ", ".join(header[:12]) + (", ..." if len(header) > 12 else "")
            raise CLIError(f"{option}: no column {item!r} in {path} (columns: {shown})")
        out += [h for h in hits if h not in out]
    if not out:
        raise CLIError(f"{option} names no columns")
    return out


def _matrix(header, body, cols, path):
    import numpy as np

    idx = [header.index(c) for c in cols]
    X = np.empty((len(body), len(cols)))
    for i, r in enumerate(body):
        for j, k in enumerate(idx):
            text = r[k].strip()
            try:
                v = float(text)
            except ValueError:
                what = "is empty" if not text else f"{text!r} is not a number"
                raise CLIError(f"{path}, line {i + 2}, column {cols[j]!r}: {what}") from None
            if not math.isfinite(v):
                raise CLIError(f"{path}, line {i + 2}, column {cols[j]!r}: {text} is not "
                               "a finite number (NaN and infinity are not allowed)")
            X[i, j] = v
    return X


def _frame(X, names):
    """A DataFrame when pandas is installed, so the model keeps its feature names."""
    from ._compat import PANDAS_INSTALLED

    if PANDAS_INSTALLED:
        import pandas as pd

        return pd.DataFrame(X, columns=names)
    return X


# --------------------------------------------------------------- writing
def _atomic_text(path, text):
    from ._atomic import atomic_write

    atomic_write(path, lambda fh: fh.write(text))


def _load_model(path):
    from . import load

    if not os.path.isfile(path):
        raise CLIError(f"model file not found: {path}")
    try:
        model = load(path)
    except (ValueError, KeyError, TypeError) as exc:
        msg = " ".join(str(exc).split())
        raise CLIError(msg if str(path) in msg else f"{path}: {msg}") from None
    columns = {}
    try:
        with open(path) as fh:
            columns = json.load(fh).get("columns") or {}
    except (OSError, ValueError, AttributeError):
        columns = {}
    return model, columns


# --------------------------------------------------------------- commands
def _cmd_reproduce(args):
    from .experiments import parse_seeds, run_experiment

    def split(text):
        return [s.strip() for s in text.split(",") if s.strip()] if text else None

    seeds = parse_seeds(args.seeds) if args.seeds else None
    depths = None
    if args.depths:
        try:
            depths = [_depth(d) for d in split(args.depths)]
        except argparse.ArgumentTypeError as exc:
            raise CLIError(f"--depths: {exc}") from None
    n_train = None
    if args.n_train:
        if args.experiment != "shortest-path":
            raise CLIError("--n-train applies to the shortest-path experiment only")
        try:
            n_train = [int(n) for n in split(args.n_train)]
        except ValueError:
            raise CLIError(f"--n-train must list ints, e.g. 200,10000; got "
                           f"{args.n_train!r}") from None
    if args.data is not None and args.experiment != "news":
        raise CLIError("--data applies to the news experiment only")
    if args.data is not None and not os.path.exists(args.data):
        raise CLIError(f"--data: no such directory: {args.data}")
    if args.jobs == 0 or args.jobs < -1:
        raise CLIError(f"--jobs must be a positive int or -1; got {args.jobs}")
    data_options = {}
    if args.user_clusters is not None:
        data_options["n_user_clusters"] = args.user_clusters
    if args.min_records is not None:
        data_options["min_records"] = args.min_records
    if data_options and args.data is None:
        raise CLIError("--user-clusters and --min-records need --data (the Yahoo! log)")
    out = args.out or os.path.join("spotree-results", args.experiment)
    result = run_experiment(args.experiment, quick=args.quick, out=out, jobs=args.jobs,
                            seeds=seeds, methods=split(args.methods), n_train=n_train,
                            depths=depths, data=args.data, data_options=data_options or None,
                            scheduler=args.scheduler,
                            progress=not args.quiet, figures=not args.no_figures)
    print(result["summary"])
    written = ", ".join(os.path.basename(p) for p in result["files"].values())
    print(f"wrote {written} to {out}")
    if result["errors"]:
        raise CLIError(f"{len(result['errors'])} runs failed (first: "
                       f"{result['errors'][0]['error']}); the other results are written, "
                       "rerun to retry the failed ones")
    return 0


def _cmd_fit(args):
    from .metrics import normalized_spo_loss
    from .problems._spec import load_problem

    header, body = _read_csv(args.data)
    try:
        problem = load_problem(args.problem)
    except FileNotFoundError as exc:
        raise CLIError(str(exc)) from None
    features = _select(args.features, header, "--features", args.data)
    costs = _select(args.costs, header, "--costs", args.data)
    both = [c for c in features if c in costs]
    if both:
        raise CLIError(f"column(s) {', '.join(both)} are both features and costs")
    if len(costs) != problem.n_costs:
        raise CLIError(f"--costs selects {len(costs)} columns but the problem in "
                       f"{args.problem} has {problem.n_costs} costs (one per decision "
                       "variable)")
    X = _matrix(header, body, features, args.data)
    C = _matrix(header, body, costs, args.data)
    sw = None
    if args.weights:
        if args.weights not in header:
            raise CLIError(f"--weights: no column {args.weights!r} in {args.data}")
        if args.weights in features or args.weights in costs:
            raise CLIError(f"--weights column {args.weights!r} is also a feature or cost")
        sw = _matrix(header, body, [args.weights], args.data)[:, 0]
        if (sw < 0).any() or not (sw > 0).any():
            raise CLIError(f"--weights column {args.weights!r} must be non-negative with a "
                           "positive total")
    thresholds = args.thresholds
    if thresholds != "all":
        try:
            thresholds = int(thresholds)
        except ValueError:
            raise CLIError(f"--thresholds must be 'all' or an int; got {thresholds!r}") \
                from None
    vf = args.validation_fraction
    if not 0.0 <= vf < 1.0:
        raise CLIError(f"--validation-fraction must be in [0, 1); got {vf}")
    n_val = int(round(vf * X.shape[0]))
    if vf > 0 and (n_val < 1 or n_val >= X.shape[0]):
        raise CLIError(f"--validation-fraction {vf} leaves no rows to validate or to fit "
                       f"({X.shape[0]} rows)")
    model = _make_estimator(args, problem, thresholds)
    fit_sw = None if sw is None else sw[n_val:]
    val_sw = None if sw is None else sw[:n_val]
    X_fit, X_val = _frame(X[n_val:], features), _frame(X[:n_val], features)
    note = ""
    if args.estimator == "forest" and n_val and args.max_features is None:
        from .forest import tune_max_features

        grid = sorted({min(f, X.shape[1]) for f in (2, 3, 4, 5)})
        model, res = tune_max_features(model, X_fit, C[n_val:], X_val, C[:n_val],
                                       candidates=grid, sample_weight=fit_sw,
                                       sample_weight_val=val_sw)
        note = f", max_features={res.best_max_features} chosen on the first {n_val} rows"
    else:
        model.fit(X_fit, C[n_val:], sample_weight=fit_sw)
    if n_val and hasattr(model, "prune"):
        before = model.get_n_leaves()
        model = model.prune(X_val, C[:n_val], sample_weight=val_sw)
        note = f", pruned from {before} leaves on the first {n_val} rows"
    train_loss = normalized_spo_loss(C[n_val:], model.predict(X_fit), problem=problem,
                                     sample_weight=fit_sw)
    _save_model(model, args.model, {"features": features, "costs": costs,
                                    "weights": args.weights})
    shape = (f"{len(model.estimators_)} trees" if hasattr(model, "estimators_")
             else f"{model.get_n_leaves()} leaves, depth {model.get_depth()}")
    print(f"fitted {type(model).__name__} ({args.criterion}): {shape}{note}; training "
          f"normalized SPO loss {train_loss:.4f}; saved to {args.model}")
    return 0


def _make_estimator(args, problem, thresholds):
    from . import SPOTree

    if args.estimator == "tree":
        return SPOTree(problem, criterion=args.criterion, max_depth=args.max_depth,
                       min_samples_leaf=args.min_samples_leaf,
                       min_samples_split=args.min_samples_split,
                       max_features=args.max_features, thresholds=thresholds,
                       spo_weight=args.spo_weight, ccp_alpha=args.ccp_alpha,
                       random_state=args.random_state)
    if args.estimator == "optimal":
        from . import OptimalSPOTree

        if args.criterion != "spo":
            raise CLIError("--estimator optimal trains on the SPO loss only; drop "
                           "--criterion mse")
        return OptimalSPOTree(problem, max_depth=args.max_depth or 2,
                              min_samples_leaf=args.min_samples_leaf, thresholds=thresholds,
                              random_state=args.random_state)
    from . import SPOForest

    if args.n_estimators < 1:
        raise CLIError(f"--n-estimators must be a positive int; got {args.n_estimators}")
    return SPOForest(problem, n_estimators=args.n_estimators, criterion=args.criterion,
                     max_features=args.max_features if args.max_features is not None
                     else "sqrt", max_depth=args.max_depth,
                     min_samples_leaf=args.min_samples_leaf, thresholds=thresholds,
                     random_state=args.random_state)


def _save_model(model, path, columns):
    """model.save, plus the CSV column names the CLI needs to predict later."""
    from .tree._persist import save_model

    save_model(model, path, extra={"columns": columns})


def _require_tree(model, path, command):
    if getattr(model, "tree_", None) is None:
        raise CLIError(f"'spotree {command}' works on a single tree, but {path} holds a "
                       f"{type(model).__name__}")


def _model_features(model, columns):
    names = columns.get("features")
    if names is None and getattr(model, "feature_names_in_", None) is not None:
        names = [str(n) for n in model.feature_names_in_]
    return names


def _cmd_predict(args):
    import numpy as np

    model, columns = _load_model(args.model)
    header, body = _read_csv(args.data)
    names = _model_features(model, columns)
    if names is None:
        if len(header) != model.n_features_in_:
            raise CLIError(f"the model has {model.n_features_in_} unnamed features; "
                           f"{args.data} must then have exactly that many columns")
        names = header
    missing = [n for n in names if n not in header]
    if missing:
        raise CLIError(f"{args.data} lacks the model's feature column(s): "
                       f"{', '.join(missing)}")
    X = _matrix(header, body, names, args.data)
    Xf = _frame(X, names) if getattr(model, "feature_names_in_", None) is not None else X
    C_hat = model.predict(Xf)
    W = model.predict_decision(Xf)
    cost_names = columns.get("costs") or [f"c{k}" for k in range(C_hat.shape[1])]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([f"pred_{c}" for c in cost_names] + [f"decision_{c}" for c in cost_names])
    for c_row, w_row in zip(C_hat, W):
        w.writerow([f"{v:.12g}" for v in c_row] + [f"{v:.12g}" for v in np.round(w_row, 12)])
    if args.out:
        _atomic_text(args.out, buf.getvalue())
        print(f"wrote {len(body)} predictions to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(buf.getvalue())
    return 0


def _cmd_show(args):
    model, columns = _load_model(args.model)
    _require_tree(model, args.model, "show")
    names = _model_features(model, columns)
    if args.dot:
        from .tree._export_graphviz import export_graphviz

        sys.stdout.write(export_graphviz(model, feature_names=names))
    else:
        from .tree import export_text

        print(f"{type(model).__name__} for {model.problem_!r}: {model.get_n_leaves()} leaves, "
              f"depth {model.get_depth()}")
        sys.stdout.write(export_text(model, feature_names=names))
    return 0


def _cmd_plot(args):
    from ._compat import import_optional
    from ._atomic import atomic_write

    model, columns = _load_model(args.model)
    _require_tree(model, args.model, "plot")
    ext = os.path.splitext(args.out)[1].lower().lstrip(".") or "png"
    if ext not in ("png", "pdf", "svg"):
        raise CLIError(f"--out must end in .png, .pdf or .svg; got {args.out!r}")
    import_optional("matplotlib", purpose="spotree plot")
    from matplotlib.figure import Figure

    from .plotting import plot_tree

    n = model.get_n_leaves()
    depth = model.get_depth() if args.max_depth is None else min(args.max_depth,
                                                                 model.get_depth())
    fig = Figure(figsize=(min(max(2.0 * n, 5.0), 40.0), min(max(1.7 * (depth + 1), 2.5), 24.0)))
    ax = fig.add_subplot(1, 1, 1)
    plot_tree(model, ax=ax, feature_names=_model_features(model, columns),
              max_depth=args.max_depth)
    fig.tight_layout()
    atomic_write(args.out, lambda fh: fig.savefig(fh, format=ext, dpi=args.dpi), mode="wb")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


# ------------------------------------------------------------------- main
def _one_line_warnings(message, category, filename, lineno, file=None, line=None):
    text = " ".join(str(message).split())
    (file or sys.stderr).write(f"spotree: warning: {text}\n")


def main(argv=None):
    """Entry point of the ``spotree`` command; returns the exit code."""
    os.environ.setdefault("MPLBACKEND", "Agg")  # never open a window
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    warnings.showwarning = _one_line_warnings
    prog = f"spotree {args.command}"
    try:
        return args.func(args) or 0
    except KeyboardInterrupt:
        print(f"{prog}: interrupted (finished runs are cached; rerun to resume)",
              file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. 'spotree show m.json | head'
        return 0
    except Exception as exc:
        if args.traceback:
            raise
        msg = " ".join(str(exc).split()) or type(exc).__name__
        if not isinstance(exc, (CLIError, ValueError, OSError, ImportError)):
            msg = f"{type(exc).__name__}: {msg} (rerun with --traceback for details)"
        print(f"{prog}: error: {msg}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
