"""One function per ``spotree`` subcommand: check the options, call the library.

Every check that can fail runs before anything is written: a command either
does its whole job or leaves the file system as it found it.
"""

from __future__ import annotations

import math
import os
import re
import sys

from ._io import (CLIError, _bad_cell, check_input_file, check_not_an_input, check_output_dir,
                  check_output_file,
                  check_summable, feature_frame, load_model, load_problem, numeric_matrix,
                  read_table,
                  save_model, select_columns, write_output)
from ._parser import DPI_RANGE, FIT_ESTIMATOR_OPTIONS, NOT_GIVEN
from .._text import count_noun as _count

__all__ = ["reproduce", "fit", "predict", "evaluate", "compare", "show", "plot"]

#: Largest raster image ``spotree plot`` draws (pixels), so a large --dpi fails
#: with a message instead of exhausting memory (4 bytes per pixel).
MAX_PIXELS = 64_000_000

# -------------------------------------------------------------- reproduce
def reproduce(args):
    from ..experiments import ENERGY_METHODS, METHODS, PYEPO_METHODS, run_experiment

    pyepo = args.experiment == "pyepo"
    energy = args.experiment == "energy"
    if args.n_train is not None and args.experiment not in ("shortest-path", "pyepo"):
        raise CLIError("--n-train applies to the shortest-path and pyepo experiments only")
    for flag, value in (("--problems", args.problems), ("--degrees", args.degrees),
                        ("--noise", args.noise)):
        if value is not None and not pyepo:
            raise CLIError(f"{flag} applies to the pyepo experiment only")
    for flag, value in (("--capacities", args.capacities), ("--scaling", args.scaling),
                        ("--standardize", args.standardize or None)):
        if value is not None and not energy:
            raise CLIError(f"{flag} applies to the energy experiment only")
    if args.standardize and args.scaling not in (None, ["standardized"]):
        raise CLIError("--standardize means --scaling standardized; give one of them")
    scalings = ["standardized"] if args.standardize else args.scaling
    if args.depths is not None and (pyepo or energy):
        raise CLIError(f"--depths does not apply to the {args.experiment} experiment (its "
                       "trees are pruned, its forests and boosted trees unrestricted)")
    if args.methods is not None:
        known = PYEPO_METHODS if pyepo else ENERGY_METHODS if energy else METHODS
        wrong = [m for m in args.methods if m not in known]
        if wrong:
            raise CLIError(f"--methods: {', '.join(map(repr, wrong))} not a method of the "
                           f"{args.experiment} experiment; its methods: "
                           + ", ".join(map(repr, known)))
    if energy and args.data is None:
        raise CLIError("the energy experiment needs --data: the ICON energy file Data.npz "
                       "(PredOpt/predopt-benchmarks, Knapsack/Trainer/Data.npz) or its folder")
    if args.data is not None:
        if args.experiment not in ("news", "energy"):
            raise CLIError("--data applies to the news and energy experiments only")
        if energy:
            found = os.path.isfile(args.data) or os.path.isfile(
                os.path.join(args.data, "Data.npz"))
            if not found:
                raise CLIError(f"--data {args.data}: " + (
                    "no Data.npz in this directory" if os.path.isdir(args.data) else
                    "no such file or directory"))
        elif not os.path.isdir(args.data):
            raise CLIError(f"--data {args.data}: " + ("not a directory" if
                           os.path.exists(args.data) else "no such directory"))
    data_options = {}
    if args.user_clusters is not None:
        data_options["n_user_clusters"] = args.user_clusters
    if args.min_records is not None:
        data_options["min_records"] = args.min_records
    if args.scheduler is not None and args.jobs != 1:
        raise CLIError("--jobs sets the parallel runs on this machine; with --scheduler the "
                       "cluster's workers run them: give one of the two")
    if data_options and args.experiment != "news":
        raise CLIError("--user-clusters and --min-records apply to the news experiment only "
                       "(preprocessing of the Yahoo! log)")
    if data_options and args.data is None:
        raise CLIError("--user-clusters and --min-records need --data (the Yahoo! log)")
    if not args.out.strip():  # '' would write to ./EXPERIMENT
        raise CLIError(f"--out {args.out!r} must be a folder path")
    out = os.path.join(args.out, args.experiment)
    check_output_dir(out, "--out")
    # run_experiment checks the whole grid before it creates any folder.
    result = run_experiment(args.experiment, quick=args.quick, out=out, jobs=args.jobs,
                            seeds=args.seeds, methods=args.methods, n_train=args.n_train,
                            depths=args.depths, data=args.data,
                            data_options=data_options or None, scheduler=args.scheduler,
                            progress=not args.quiet, figures=not args.no_figures,
                            problems=args.problems, degrees=args.degrees, noises=args.noise,
                            capacities=args.capacities, scalings=scalings)
    print(result["summary"])
    written = ", ".join(os.path.basename(p) for p in result["files"].values())
    print(f"wrote {written} to {out}")
    if result["errors"]:
        raise CLIError(f"{_count(len(result['errors']), 'run')} failed (first: "
                       f"{result['errors'][0]['error']}); the other results are written, "
                       "rerun to retry the failed ones")
    return 0


# -------------------------------------------------------------------- fit
def _flag(dest):
    special = {"ridge_features": "--no-ridge-features", "categorical_features": "--categorical"}
    return special.get(dest, "--" + dest.replace("_", "-"))


def _and(names):
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _make_estimator(args, problem):
    from .. import OptimalSPOTree, SPOBoost, SPOForest, SPOTree

    if args.criterion is None:
        # Each estimator's own default: the forest chooses by out-of-bag regret.
        args.criterion = "auto" if args.estimator == "forest" else "spo"
    if args.criterion == "auto" and args.estimator != "forest":
        raise CLIError("--criterion auto chooses the forest's trees by out-of-bag regret: "
                       "use it with --estimator forest")
    # The options given, then every other one set to the estimator's default.
    given = set()
    for dest, defaults in FIT_ESTIMATOR_OPTIONS.items():
        if getattr(args, dest) is NOT_GIVEN:
            setattr(args, dest, defaults.get(args.estimator))
        elif args.estimator not in defaults:
            raise CLIError(f"{_flag(dest)} does not apply to --estimator {args.estimator}; "
                           f"it applies to --estimator {_and(list(defaults))}")
        else:
            given.add(dest)
    if args.criterion == "mse" and "spo_weight" in given and args.spo_weight != 1.0:
        raise CLIError("--spo-weight mixes squared error into the SPO criterion; with "
                       "--criterion mse it would have no effect")
    if (args.estimator == "forest" and args.max_features is not None
            and args.validation_fraction > 0):
        raise CLIError("--validation-fraction holds out rows to tune a forest's "
                       "max_features (forests are not pruned); with --max-features given "
                       "the rows would only be left out: drop one of the two")
    if args.estimator == "optimal" and args.max_depth is None:
        raise CLIError("--estimator optimal grows a tree of a fixed depth: give --max-depth "
                       "N, not none (or leave it out for depth 2)")
    if args.estimator == "tree":
        return SPOTree(problem, criterion=args.criterion, max_depth=args.max_depth,
                       min_samples_leaf=args.min_samples_leaf,
                       min_samples_split=args.min_samples_split,
                       max_features=args.max_features, thresholds=args.thresholds,
                       spo_weight=args.spo_weight, ccp_alpha=args.ccp_alpha,
                       categorical_splits=args.categorical_splits,
                       random_state=args.random_state)
    if args.estimator == "optimal":
        if args.criterion != "spo":
            raise CLIError("--estimator optimal trains on the SPO loss only; drop "
                           "--criterion mse")
        return OptimalSPOTree(problem, max_depth=args.max_depth,
                              min_samples_leaf=args.min_samples_leaf,
                              global_thresholds=args.thresholds,
                              random_state=args.random_state)
    if args.estimator == "boost":
        if args.n_iter_no_change is None and "validation_fraction" in given:
            raise CLIError("--validation-fraction holds out rows for early stopping, which "
                           "--n-iter-no-change none turns off: drop one of the two")
        if args.validation_fraction == 0:
            # The CLI's own hold-out is for pruning; SPOBoost holds out its rows itself.
            raise CLIError("--validation-fraction 0: --estimator boost holds out a fraction "
                           "in (0, 1) of the rows for early stopping; to boost without it, "
                           "give --n-iter-no-change none")
        return SPOBoost(problem, loss="spo+" if args.criterion == "spo" else "mse",
                        n_estimators=args.n_estimators, learning_rate=args.learning_rate,
                        max_depth=args.max_depth, min_samples_leaf=args.min_samples_leaf,
                        subsample=args.subsample, max_features=args.max_features,
                        init=args.init, validation_fraction=args.validation_fraction,
                        n_iter_no_change=args.n_iter_no_change,
                        random_state=args.random_state)
    return SPOForest(problem, n_estimators=args.n_estimators, criterion=args.criterion,
                     max_features=args.max_features if args.max_features is not None
                     else "sqrt", max_depth=args.max_depth,
                     min_samples_leaf=args.min_samples_leaf,
                     min_samples_split=args.min_samples_split, thresholds=args.thresholds,
                     spo_weight=args.spo_weight, ccp_alpha=args.ccp_alpha,
                     ridge_features=args.ridge_features,
                     categorical_splits=args.categorical_splits, random_state=args.random_state)


def _check_params(model):
    """The estimator's own parameter checks, reported under the option's name."""
    from .._params import validate_params

    try:
        validate_params(model)
    except ValueError as exc:
        m = re.match(r"The '(\w+)' parameter", str(exc))
        if not m:
            raise CLIError(str(exc)) from None
        # The option that sets the parameter (an optimal tree's global_thresholds
        # comes from --thresholds).
        flag = {"global_thresholds": "--thresholds", "loss": "--criterion"}.get(
            m.group(1), _flag(m.group(1)))
        raise CLIError(f"{flag}: {exc}") from None


def _boost_options(message):
    """An error of SPOBoost.fit with its parameters named as the command's options."""
    for param, flag in (("validation_fraction=", "--validation-fraction "),
                        ("validation_fraction", "--validation-fraction"),
                        ("n_iter_no_change=None", "--n-iter-no-change none"),
                        ("sample_weight", "weight (--weights)")):
        message = message.replace(param, flag)
    return message


def _loss_number(value):
    """A normalized SPO loss as text: 4 decimals, or 4 significant digits for a
    non-zero loss that 4 decimals print as 0.0000 (a perfect score, which it is not)."""
    text = f"{value:.4f}"
    return f"{value:.4g}" if value != 0 and float(text) == 0 else text


def _loss_column(values):
    """Losses printed one above the other, all alike: 4 decimals, or where one of
    them needs 4 significant digits (see _loss_number), all of them in scientific
    notation with 4 significant digits (a column mixed '0.1234' and '3e-05')."""
    texts = [_loss_number(v) for v in values]
    if any("e" in t for t in texts):
        return [f"{v:.3e}" for v in values]
    return texts


def _loss_text(model, X, C, sw):
    """The normalized SPO loss of the model's decisions on ``(X, C)``, as text."""
    import numpy as np

    from ..metrics import _optima_in_units, decision_loss

    from .._ridge import cost_unit

    problem = model.problem_
    # The model's own decisions: a tree reads them from its leaves (no solve), and
    # the optimal values are the only solves left (in units of a power of two
    # where they overflowed, as normalized_decision_loss takes them).
    C, z, c_unit = _optima_in_units(problem, C)
    loss = decision_loss(C, model.predict_decision(X), problem=problem, z_true=z)
    # The sums in units of powers of two (exact, the same ratio): weights of 1e308
    # summed to inf, and the loss printed as 0.0000.
    w = np.ones(len(z)) if sw is None else sw / cost_unit(sw)
    unit = cost_unit(np.concatenate([np.abs(z), loss]))
    regret = np.dot(w, loss / unit)
    scale = np.dot(w, np.abs(z) / unit)
    # Every optimal value 0 (e.g. doing nothing is best) leaves nothing to normalize
    # by: the mean SPO loss then, not an error after the fit.
    if scale > 0:
        return f"normalized SPO loss {_loss_number(regret / scale)}"
    with np.errstate(over="ignore"):
        mean = regret / w.sum() * unit * c_unit
    return f"mean SPO loss {mean:.4g} (every optimal value is 0, so it is not normalized)"


def _weight_column(df, column, features, costs, path):
    """The --weights column: non-negative numbers with a positive total."""
    import numpy as np

    if column not in df.columns:
        raise CLIError(f"--weights: no column {column!r} in {path}")
    if column in features or column in costs:
        raise CLIError(f"--weights column {column!r} is also a feature or cost")
    sw = numeric_matrix(df, [column], path)[:, 0]
    if (sw < 0).any():
        # Name the first negative cell, as every other bad cell is named.
        raise _bad_cell(path, df, column, int(np.argmax(sw < 0)),
                        what="{} is negative; --weights takes non-negative sample weights")
    if not (sw > 0).any():
        raise CLIError(f"--weights column {column!r} must be non-negative with a "
                       "positive total")
    return sw


def _categorical_columns(args, df, features):
    """The --categorical columns (names or patterns, as --features), all among
    ``features``; [] without the option."""
    if args.categorical_features is None:
        return []
    cols = select_columns(args.categorical_features, df.columns, "--categorical", args.data)
    outside = [c for c in cols if c not in features]
    if outside:
        raise CLIError(f"--categorical: column(s) {', '.join(outside)} of {args.data} are not "
                       f"features; --categorical marks some of the --features columns "
                       f"({', '.join(features[:12])}{', ...' if len(features) > 12 else ''})")
    return cols


def fit(args):
    check_input_file(args.data, "data file")
    check_output_file(args.model, "--model")
    check_not_an_input(args.model, "--model", {"--data": args.data, "--problem": args.problem})
    problem = load_problem(args.problem)
    model = _make_estimator(args, problem)
    _check_params(model)

    df = read_table(args.data)
    features = select_columns(args.features, df.columns, "--features", args.data)
    costs = select_columns(args.costs, df.columns, "--costs", args.data)
    both = [c for c in features if c in costs]
    if both:
        raise CLIError(f"column(s) {', '.join(both)} are both features and costs")
    if len(costs) != problem.n_costs:
        raise CLIError(f"--costs selects {_count(len(costs), 'column')} but the problem in "
                       f"{args.problem} has {_count(problem.n_costs, 'cost')} (one per decision "
                       "variable)")
    names = getattr(problem, "variable_names", None)
    if names is not None and set(costs) == set(names) and list(costs) != list(names):
        # The columns carry the model's own variable names, in another order:
        # each cost would be paired with the wrong variable.
        raise CLIError(f"--costs selects the columns {', '.join(costs)}, the variables of "
                       f"{args.problem} in another order; list them in the problem's order: "
                       f"--costs '{','.join(names)}'")
    sw = None
    if args.weights:
        sw = _weight_column(df, args.weights, features, costs, args.data)
    categorical = _categorical_columns(args, df, features)
    if categorical:
        # The columns by name: X below is a DataFrame of the --features columns.
        model.set_params(categorical_features=categorical)
    X = feature_frame(df, features, args.data)
    if args.categorical_splits == "subset" and not categorical and all(
            X[c].dtype.kind == "f" for c in X.columns):
        # Every feature numeric: 'subset' would have no categories to split, and
        # the model would be the 'equal' one.
        raise CLIError("--categorical-splits subset divides the categories of categorical "
                       f"features, but the --features of {args.data} are all numeric: mark "
                       "the columns of category codes with --categorical")
    if args.estimator == "boost":
        _no_missing_values(X, df, args.data, "--estimator boost", categorical=categorical)
    C = numeric_matrix(df, costs, args.data)
    del df
    check_summable(C, costs, args.data, sw)

    n = X.shape[0]
    boost = args.estimator == "boost"
    if boost and args.n_iter_no_change is not None:
        # SPOBoost holds out its own (random) rows, ceil(F n) of them, and refits on all:
        # the command splits nothing off. Its own error would name its parameters.
        # It draws them from the rows of positive weight.
        n_pos = n if sw is None else int((sw > 0).sum())
        n_held = math.ceil(args.validation_fraction * n_pos)
        if n_pos < 2 or n_held >= n_pos:
            of = ("" if n_pos == n else
                  f" of positive weight (--weights {args.weights!r}; {n} in all)")
            raise CLIError(f"--validation-fraction {args.validation_fraction} holds out "
                           f"{n_held} of {_count(n_pos, 'row')}{of} for early stopping, which "
                           "leaves none to fit; lower it, or give --n-iter-no-change none")
    n_val = 0 if boost else int(round(args.validation_fraction * n))
    if args.validation_fraction > 0 and not boost and (n_val < 1 or n_val >= n):
        raise CLIError(f"--validation-fraction {args.validation_fraction} leaves no rows to "
                       f"validate or to fit ({_count(n, 'row')})")
    fit_sw = None if sw is None else sw[n_val:]
    val_sw = None if sw is None else sw[:n_val]
    if sw is not None and n_val:
        for part, w, what in ((f"first {n_val}", val_sw, "validate on"),
                              (f"other {n - n_val}", fit_sw, "fit")):
            if not (w > 0).any():
                raise CLIError(f"--weights: the {part} rows (split by --validation-fraction) "
                               f"all weigh 0, which leaves nothing to {what}")
    X_fit, X_val = X.iloc[n_val:], X.iloc[:n_val]
    note = ""
    if args.estimator == "forest" and n_val and args.max_features is None:
        from .. import tune_max_features

        grid = sorted({min(f, X.shape[1]) for f in (2, 3, 4, 5)})
        model, res = tune_max_features(model, X_fit, C[n_val:], X_val, C[:n_val],
                                       candidates=grid, sample_weight=fit_sw,
                                       sample_weight_val=val_sw)
        note = f", max_features={res.best_max_features} chosen on the first {_count(n_val, 'row')}"
    elif boost:
        try:
            model.fit(X_fit, C, sample_weight=fit_sw)
        except ValueError as exc:
            raise CLIError(_boost_options(str(exc))) from None
        if model.n_iter_no_change is not None:
            note = (f" ({model.n_estimators_} of {_count(model.n_iter_, 'round')} kept by early "
                    f"stopping on a random {args.validation_fraction:g} of the rows, then "
                    "refitted on all)")
    else:
        model.fit(X_fit, C[n_val:], sample_weight=fit_sw)
    if n_val and hasattr(model, "prune"):
        before = model.get_n_leaves()
        model = model.prune(X_val, C[:n_val], sample_weight=val_sw)
        note = f", pruned from {_count(before, 'leaf')} on the first {_count(n_val, 'row')}"
    loss_text = "training " + _loss_text(model, X_fit, C[n_val:], fit_sw)
    save_model(model, args.model, {"features": features, "costs": costs,
                                   "weights": args.weights})
    if boost:
        shape = f"start {model.init_choice_!r} + {_count(model.n_estimators_, 'tree')}"
    elif hasattr(model, "estimators_"):
        shape = _count(len(model.estimators_), "tree")
    else:
        shape = f"{_count(model.get_n_leaves(), 'leaf')}, depth {model.get_depth()}"
    chosen = getattr(model, "criterion_", None)
    label = (f"{model.loss} loss" if boost else args.criterion if chosen is None
             else f"{args.criterion}: {chosen} kept")
    print(f"fitted {type(model).__name__} ({label}): {shape}{note}; {loss_text}; saved to "
          f"{args.model}")
    return 0


# ---------------------------------------------------------------- predict
def _model_features(model, columns):
    names = columns.get("features")
    if names is None and getattr(model, "feature_names_in_", None) is not None:
        names = [str(n) for n in model.feature_names_in_]
    return names


def _features_to_predict(model, columns, df, path, n_other=0):
    """The names of the model's feature columns, checked against ``df``.

    None for a model whose features have no names: ``df`` must then hold
    exactly its features, besides ``n_other`` columns of costs and weights.
    """
    names = _model_features(model, columns)
    if names is None:
        if df.shape[1] - n_other != model.n_features_in_:
            raise CLIError(f"the model has {model.n_features_in_} unnamed features; "
                           f"{path} must then have exactly that many columns"
                           + (" besides the costs and weights" if n_other else ""))
    else:
        missing = [n for n in names if n not in df.columns]
        if missing:
            raise CLIError(f"{path} lacks the model's feature column(s): "
                           f"{', '.join(missing)}")
    return names


def _no_missing_values(X, df, path, who, categorical=()):
    """Fail at the first empty cell of a numeric feature column: SPOBoost takes none
    (its starts are linear in the features), and its own error names no file or line.
    The ``categorical`` columns (codes marked by categorical_features) may have empty
    cells: SPOBoost gives a missing code all-zero indicators."""
    import numpy as np

    for col in X.columns:
        missing = X[col].isna().to_numpy()
        if X[col].dtype.kind == "f" and col not in categorical and missing.any():
            raise _bad_cell(path, df, col, int(np.argmax(missing)), feature=True,
                            note=f": a missing value, which {who} does not take in a "
                                 "numeric column (impute it, or fit --estimator tree or "
                                 "forest, whose splits route missing values)")


def _coded_by_value(model):
    """Per feature, whether it is a numeric column of codes that the model maps to its
    categories itself (categorical_features of SPOBoost, SPOPlusLinear); None if none."""
    marked = getattr(model, "_numeric_categories", None)
    return marked if marked is not None and any(marked) else None


def _feature_matrix(model, df, names, path):
    cats = getattr(model, "category_values_", None)
    by_value = _coded_by_value(model)
    if by_value is not None:
        # These columns hold numbers (weekday 3, not the label "3"): read as numbers,
        # as at fit, and mapped to their categories by the model (an unseen code
        # gets all-zero indicators), not compared as text with the labels.
        cats = [None if v else c for c, v in zip(cats, by_value)]
        cats = cats if any(c is not None for c in cats) else None
    X = feature_frame(df, names, path, cats, fitted=True)
    if _is_boost(model):
        _no_missing_values(X, df, path, "a SPOBoost", categorical=[
            col for col, v in zip(X.columns, by_value or [False] * X.shape[1]) if v])
    return X if getattr(model, "feature_names_in_", None) is not None else X.to_numpy()


def predict(args):
    import numpy as np
    import pandas as pd

    if args.out == "-":  # the usual name of standard output, not a file called "-"
        args.out = None
    if args.out is not None:  # --out '' is an error, not standard output
        check_output_file(args.out, "--out")
        check_not_an_input(args.out, "--out", {"--data": args.data, "--model": args.model})
    model, columns = load_model(args.model)
    df = read_table(args.data)
    names = _features_to_predict(model, columns, df, args.data)
    if names is None:
        names = [str(c) for c in df.columns]
    Xf = _feature_matrix(model, df, names, args.data)
    C_hat = model.predict(Xf)
    W = np.round(model.predict_decision(Xf), 12) + 0.0  # + 0.0: no "-0"
    cost_names = columns.get("costs") or [f"c{k}" for k in range(C_hat.shape[1])]
    # The predicted costs in full (pandas writes a float's shortest exact repr): with
    # 12 significant digits they differed from model.predict. The decisions as text
    # of 12 digits: "1" and "0", not "1.0".
    out = pd.DataFrame({**{f"pred_{c}": C_hat[:, k] for k, c in enumerate(cost_names)},
                        **{f"decision_{c}": [f"{v:.12g}" for v in W[:, k]]
                           for k, c in enumerate(cost_names)}})

    def write(fh):
        out.to_csv(fh, index=False, lineterminator="\n")

    if args.out is not None:
        write_output(args.out, write, "--out")
        print(f"wrote {_count(len(out), 'prediction')} to {args.out}", file=sys.stderr)
    else:
        write(sys.stdout)
    return 0


# --------------------------------------------------------------- evaluate
def evaluate(args):
    model, columns = load_model(args.model)
    problem = model.problem_
    df = read_table(args.data)
    stored = columns.get("costs")
    if args.costs is None and stored is None:
        raise CLIError(f"{args.model} does not name its cost columns (it was not saved by "
                       "'spotree fit'): give them with --costs")
    costs = (select_columns(args.costs, df.columns, "--costs", args.data)
             if args.costs is not None else stored)
    missing = [c for c in costs if c not in df.columns]
    if missing:
        raise CLIError(f"{args.data} lacks the model's cost column(s): {', '.join(missing)} "
                       "(name the columns with --costs)")
    if len(costs) != problem.n_costs:
        raise CLIError(f"--costs selects {_count(len(costs), 'column')} but the model's problem "
                       f"has {_count(problem.n_costs, 'cost')} (one per decision variable)")
    if stored is not None and set(costs) == set(stored) and list(costs) != list(stored):
        # The columns the model was fitted on, in another order: each cost would
        # be paired with the wrong decision variable.
        raise CLIError(f"--costs selects the columns {', '.join(costs)}, the model's cost "
                       "columns in another order; list them in the order of the fit: "
                       f"--costs '{','.join(stored)}'")
    n_other = len(costs) + (args.weights is not None)
    names = _features_to_predict(model, columns, df, args.data, n_other)
    if names is None:
        names = [str(c) for c in df.columns if c not in costs and c != args.weights]
    both = [c for c in names if c in costs]
    if both:
        raise CLIError(f"column(s) {', '.join(both)} are both features and costs")
    sw = None
    if args.weights is not None:
        sw = _weight_column(df, args.weights, names, costs, args.data)
    C = numeric_matrix(df, costs, args.data)
    check_summable(C, costs, args.data, sw)
    X = _feature_matrix(model, df, names, args.data)
    weighted = "" if sw is None else f", weighted by {args.weights!r}"
    print(f"{type(model).__name__} on {_count(len(C), 'row')} of {args.data}{weighted}: "
          f"{_loss_text(model, X, C, sw)}")
    return 0


# ---------------------------------------------------------------- compare
class _OwnColumns:
    """A loaded model with its own feature matrix of the compared rows.

    ``compare_decisions`` takes one ``X`` for all the models, but each saved
    model reads its own columns: this one ignores the ``X`` it is given (the
    CSV table) and decides on its own features, with ``predict_decision``
    as the model's score does.
    """

    def __init__(self, model, X):
        self.model, self.X = model, X

    def predict(self, _):
        return self.model.predict(self.X)

    def predict_decision(self, _):
        return self.model.predict_decision(self.X)


def _model_names(args):
    """The models' names: --names, or the file names without the extension."""
    paths = list(args.models)
    if args.names is not None:
        names = [s.strip() for s in args.names.split(",") if s.strip()]
        if len(names) != len(paths):
            raise CLIError(f"--names gives {_count(len(names), 'name')} for "
                           f"{_count(len(paths), 'model')}")
        twice = [n for i, n in enumerate(names) if n in names[:i]]
        if twice:
            raise CLIError(f"--names: {twice[0]!r} is given twice; each model needs its "
                           "own name")
        return names
    stems = [os.path.splitext(os.path.basename(p))[0] for p in paths]
    if len(set(stems)) == len(stems):
        return stems
    twice = [p for i, p in enumerate(paths) if p in paths[:i]]
    if twice:
        raise CLIError(f"model file {twice[0]} is given twice; give --names to compare a "
                       "model with itself")
    return paths  # same file names in different folders: the paths tell them apart


def _compare_costs(args, df, loaded):
    """The cost columns to score on: --costs, or the columns the models were fitted on."""
    stored = {p: cols.get("costs") for p, (_, cols) in loaded.items()}
    named = {p: c for p, c in stored.items() if c is not None}
    if args.costs is None:
        if not named:
            raise CLIError("none of the models names its cost columns (they were not saved "
                           "by 'spotree fit'): give them with --costs")
        (first, costs), *others = named.items()
        for p, c in others:
            if list(c) != list(costs):
                raise CLIError(f"{first} and {p} were fitted on different cost columns "
                               f"({','.join(costs)} and {','.join(c)}): name the columns "
                               "to score on with --costs")
        missing = [c for c in costs if c not in df.columns]
        if missing:
            raise CLIError(f"{args.data} lacks the models' cost column(s): "
                           f"{', '.join(missing)} (name the columns with --costs)")
        return list(costs)
    costs = select_columns(args.costs, df.columns, "--costs", args.data)
    n_costs = next(iter(loaded.values()))[0].problem_.n_costs
    if len(costs) != n_costs:
        raise CLIError(f"--costs selects {_count(len(costs), 'column')} but the models' "
                       f"problem has {_count(n_costs, 'cost')} (one per decision variable)")
    for p, c in named.items():
        if set(costs) == set(c) and list(costs) != list(c):
            # As in evaluate: each cost would be paired with the wrong variable.
            raise CLIError(f"--costs selects the columns {', '.join(costs)}, the cost "
                           f"columns of {p} in another order; list them in the order of "
                           f"the fit: --costs '{','.join(c)}'")
    return costs


def _same_problem(loaded):
    """Fail unless every model was fitted on the first one's problem."""
    (first, (model0, _)), *others = loaded.items()
    p0 = model0.problem_
    for path, (model, _) in others:
        p = model.problem_
        if p.n_costs != p0.n_costs:
            raise CLIError(f"{path} was fitted on a problem of {_count(p.n_costs, 'cost')}, "
                           f"{first} on one of {_count(p0.n_costs, 'cost')}: compare models "
                           "of the same problem")
        try:
            same = p.to_dict() == p0.to_dict()
        except NotImplementedError:  # no description to compare: its type, then
            same = type(p) is type(p0)
        if not same:
            raise CLIError(f"{path} and {first} were fitted on different problems ({p!r} and "
                           f"{p0!r}): a model's decisions are scored on its own problem, so "
                           "compare models of the same problem")


def compare(args):
    from ..metrics import compare_decisions

    if len(args.models) < 2:
        raise CLIError("compare needs two or more models (MODEL MODEL ...); 'spotree "
                       "evaluate' scores one")
    if args.plot_kind is not None and args.plot is None:
        raise CLIError("--plot-kind chooses what --plot draws: give --plot FILE")
    names = _model_names(args)
    if args.reference is not None and args.reference not in names:
        raise CLIError(f"--reference {args.reference!r} is not one of the models' names: "
                       + ", ".join(map(repr, names)))
    ext = None
    if args.plot is not None:
        from .._compat import import_optional

        ext = os.path.splitext(args.plot)[1].lower().lstrip(".")
        if ext not in ("png", "pdf", "svg"):
            raise CLIError(f"--plot must end in .png, .pdf or .svg; got {args.plot!r}")
        check_output_file(args.plot, "--plot")
        for other, path in [("--data", args.data)] + [("model", p) for p in args.models]:
            check_not_an_input(args.plot, "--plot", {other: path})
        import_optional("matplotlib", purpose="spotree compare --plot")
    loaded = {}
    for path in args.models:
        loaded[path] = load_model(path)
    _same_problem(loaded)
    df = read_table(args.data)
    costs = _compare_costs(args, df, loaded)
    n_other = len(costs) + (args.weights is not None)
    features = {}
    for path, (model, columns) in loaded.items():
        try:
            cols = _features_to_predict(model, columns, df, args.data, n_other)
        except CLIError as exc:
            raise CLIError(f"{path}: {exc}") from None
        if cols is None:
            cols = [str(c) for c in df.columns if c not in costs and c != args.weights]
        both = [c for c in cols if c in costs]
        if both:
            raise CLIError(f"{path}: column(s) {', '.join(both)} are both its features and "
                           "costs")
        features[path] = cols
    sw = None
    if args.weights is not None:
        every = [c for cols in features.values() for c in cols]
        sw = _weight_column(df, args.weights, every, costs, args.data)
    C = numeric_matrix(df, costs, args.data)
    check_summable(C, costs, args.data, sw)
    models = {}
    for name, (path, (model, _)) in zip(names, loaded.items()):
        models[name] = _OwnColumns(model, _feature_matrix(model, df, features[path], args.data))
    first = next(iter(loaded.values()))[0]
    result = compare_decisions(models, df, C, problem=first.problem_, sample_weight=sw,
                               reference=args.reference)
    weighted = "" if sw is None else f", weighted by {args.weights!r}"
    print(f"{_count(len(names), 'model')} on {_count(len(C), 'row')} of {args.data}"
          f"{weighted}, compared with {result.reference}:")
    print(result)
    if args.plot is not None:
        from matplotlib.figure import Figure

        from ..plotting import plot_decision_comparison

        fig = Figure(figsize=(6.5, 4.2))
        plot_decision_comparison(result, ax=fig.add_subplot(1, 1, 1),
                                 kind=args.plot_kind or "difference")
        fig.tight_layout()
        write_output(args.plot, lambda fh: fig.savefig(fh, format=ext, dpi=110), "--plot",
                     mode="wb")
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


# ------------------------------------------------------------ show / plot
def _require_tree(model, path, command):
    if getattr(model, "tree_", None) is None:
        raise CLIError(f"'spotree {command}' works on a single tree (--estimator tree or "
                       f"optimal) or a SPOBoost, but {path} holds a {type(model).__name__}")


def _is_boost(model):
    return type(model).__name__ == "SPOBoost"


def _refuse_for_boost(model, path, option, what):
    if option:
        raise CLIError(f"{option} {what}; {path} holds a SPOBoost, a start and "
                       f"{_count(model.n_estimators_, 'tree')}: 'spotree show' prints its "
                       "summary, 'spotree plot' its regret round by round")


def _show_boost(model, names, from_fit):
    """The summary of a SPOBoost: its start, trees, regret by round, feature importances.

    ``from_fit``: the file was written by ``spotree fit``, whose early stopping always
    holds out ``validation_fraction`` of the rows and refits; a model fitted in Python
    may have been given ``X_val`` instead (no refit), which its file does not record.
    """
    early = model.n_iter_no_change is not None
    kept = (f"{model.n_estimators_} of {_count(model.n_iter_, 'round')} kept by early "
            "stopping" if early else f"{_count(model.n_iter_, 'round')}, no early stopping")
    print(f"SPOBoost for {model.problem_!r}: start {model.init_choice_!r} + "
          f"{_count(model.n_estimators_, 'tree')} ({kept}); {model.loss} loss, learning rate "
          f"{model.learning_rate:g}, max depth "
          f"{'unlimited' if model.max_depth is None else model.max_depth}")
    train, val = -model.train_score_, -model.validation_score_
    if early and from_fit:
        print("normalized SPO loss on the training part / the validation part (of the "
              "rounds that chose the count; the model was then refitted on all the rows):")
    elif early:
        print("normalized SPO loss on the training rows / the validation rows (of the "
              "rounds that chose the count; refitted on all the rows afterwards if the "
              "validation rows were held out by validation_fraction, not if given as X_val):")
    elif val.size:
        # No early stopping, but validation rows given (X_val): scored only.
        print("normalized SPO loss on the training rows / the validation rows (X_val):")
    else:
        print("normalized SPO loss on the training rows:")
    marks = ((0, "the start"), (model.best_iteration_, "kept"), (model.n_iter_, "last"))
    rounds = sorted({k for k, _ in marks})
    train_text = _loss_column(train[rounds])
    val_text = _loss_column(val[rounds]) if val.size else None
    for i, r in enumerate(rounds):
        label = ", ".join(v for k, v in marks if k == r)
        loss = train_text[i] + (f" / {val_text[i]}" if val_text is not None else "")
        print(f"  round {r} ({label}): {loss}")
    imp = model.feature_importances_
    if imp.sum() > 0:
        names = names or [f"x{j}" for j in range(len(imp))]
        from ..tree._export import number_text

        order = [j for j in sorted(range(len(imp)), key=lambda j: -imp[j]) if imp[j] > 0]
        # number_text: a positive importance below 5e-4 read "0.000".
        print("feature importances (the trees' squared-error decrease): "
              + ", ".join(f"{names[j]} {number_text(imp[j], '{:.3f}')}" for j in order))


def show(args):
    model, columns = load_model(args.model)
    if _is_boost(model):
        _refuse_for_boost(model, args.model, "--dot" if args.dot else None,
                          "prints a single tree as Graphviz DOT")
        _refuse_for_boost(model, args.model,
                          None if args.max_depth is None else "--max-depth",
                          "limits the levels of a single tree")
        _show_boost(model, _model_features(model, columns), from_fit=bool(columns))
        return 0
    _require_tree(model, args.model, "show")
    names = _model_features(model, columns)
    if args.dot:
        from ..tree._export_graphviz import export_graphviz

        sys.stdout.write(export_graphviz(model, feature_names=names, max_depth=args.max_depth))
    else:
        from ..tree import export_text

        print(f"{type(model).__name__} for {model.problem_!r}: "
              f"{_count(model.get_n_leaves(), 'leaf')}, "
              f"depth {model.get_depth()}")
        sys.stdout.write(export_text(model, feature_names=names, max_depth=args.max_depth))
    return 0


def _figure_size(model, max_depth):
    """Inches: 2 per leaf drawn and 1.7 per level, within 5 x 2.5 and 40 x 24.

    With ``max_depth``, the leaves drawn are the nodes at that depth and the
    leaves above it (not all the tree's leaves, which made a wide, empty strip).
    """
    n = model.get_n_leaves()
    depth = model.get_depth() if max_depth is None else min(max_depth, model.get_depth())
    if max_depth is not None:
        import numpy as np

        tree = model.tree_
        node_depth = tree.node_depth()
        leaf = tree.children_left == -1
        n = int(np.count_nonzero((node_depth == max_depth) | (leaf & (node_depth < max_depth))))
    return min(max(2.0 * n, 5.0), 40.0), min(max(1.7 * (depth + 1), 2.5), 24.0)


def plot(args):
    from .._compat import import_optional

    ext = os.path.splitext(args.out)[1].lower().lstrip(".")
    if ext not in ("png", "pdf", "svg"):
        raise CLIError(f"--out must end in .png, .pdf or .svg; got {args.out!r}")
    if args.dpi is not None and ext != "png":
        # matplotlib draws a tree in vectors there: the file is the same at any dpi.
        raise CLIError(f"--dpi sets the resolution of a .png; {args.out} is a .{ext}, a vector "
                       "image without one: drop --dpi")
    dpi = 110 if args.dpi is None else args.dpi
    check_output_file(args.out, "--out")
    check_not_an_input(args.out, "--out", {"model": args.model})
    model, columns = load_model(args.model)
    boost = _is_boost(model)
    if boost:
        _refuse_for_boost(model, args.model, None if args.max_depth is None else "--max-depth",
                          "limits the levels of a single tree")
        width, height = 5.5, 3.8
    else:
        _require_tree(model, args.model, "plot")
        width, height = _figure_size(model, args.max_depth)
    if ext == "png":
        px_w, px_h = round(width * dpi), round(height * dpi)
        if px_w * px_h > MAX_PIXELS:
            best = int((MAX_PIXELS / (width * height)) ** 0.5)
            raise CLIError(f"--dpi {dpi}: the {width:g} x {height:g} inch figure of this "
                           f"tree would be {px_w} x {px_h} pixels, more than "
                           f"{MAX_PIXELS // 10**6} megapixels; use --dpi "
                           f"{DPI_RANGE[0]}..{max(best, DPI_RANGE[0])}, --max-depth, or "
                           ".svg / .pdf")
    import_optional("matplotlib", purpose="spotree plot")
    from matplotlib.figure import Figure

    from ..plotting import plot_boosting, plot_tree

    fig = Figure(figsize=(width, height))
    ax = fig.add_subplot(1, 1, 1)
    if boost:
        plot_boosting(model, ax=ax)
    else:
        plot_tree(model, ax=ax, feature_names=_model_features(model, columns),
                  max_depth=args.max_depth)
    fig.tight_layout()
    write_output(args.out, lambda fh: fig.savefig(fh, format=ext, dpi=dpi), "--out",
                 mode="wb")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0
