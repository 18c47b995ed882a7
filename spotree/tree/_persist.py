"""Saving fitted models as plain JSON, and loading them back safely.

Format (version 1), one JSON object::

    {"format": "spotree-model", "version": 1,
     "estimator": "SPOTree",               # a class from the registry below
     "params": {...},                      # constructor parameters (JSON values)
     "problem": {"type": ..., ...},        # see spotree.problems.problem_from_dict,
                                           # or null: not writable to JSON
     "problem_info": {"class": "ShortestPath", "n_costs": 24, "sense": "min"},
     "fitted": {"n_features_in_": 5, "feature_names_in_": [...] or null,
                "feature_importances_": [...], ...},
     "trees": [ {tree arrays}, ... ],      # see Tree.to_dict; one per tree
                                           # (none for SPOPlusLinear)
     "columns": {...}}                     # optional: CSV column names (spotree fit)

``problem_info`` records the problem's class name, size and sense; files
written before it existed load without it. Other top-level keys are ignored.
The file is strict JSON: a non-finite number (a NaN standard error or score,
a threshold of ``+inf``) is the object ``{"__float__": "NaN"}`` (``"Infinity"``,
``"-Infinity"``); files of older versions, with ``NaN`` and ``Infinity``
literals instead, load as well.

Loading never imports or executes anything named in the file and trusts
nothing in it: the estimator must be a registered class; the parameters pass
the estimator's own validation; the problem is rebuilt from its declarative
spec; every tree must be one well-formed binary tree of finite arrays of the
declared shapes (see :meth:`Tree.from_dict`); and the stored decisions must be
feasible and optimal for the problem (see :mod:`spotree.tree._validate_file`),
unless the estimator's trees leave them unused (``_tree_decisions_used =
False``: SPOBoost's gradient trees). How many trees a file holds is the
estimator's rule (``_set_trees_from_load``).
Every failure is a ``ValueError`` naming the key, e.g. ``"model.json is a
malformed spotree model: trees[0].children_left[3] must be ..."``.
"""

from __future__ import annotations

import importlib
import inspect
import json
import math

import numpy as np
from sklearn.utils import Bunch

from .. import _schema
from .._atomic import atomic_write
from .._categories import one_hot_width
from .._params import validate_params
from .._ridge import RidgeFeatures
from ..problems import DecisionProblem, problem_from_dict
from ..problems._linear import CheckTimeLimitError
from ._tree import Tree
from ._validate_file import check_decisions

__all__ = ["save_model", "load", "register_model", "MAX_BYTES"]

FORMAT = "spotree-model"
VERSION = 1
#: Largest model file :func:`load` reads unless told otherwise (1 GiB).
MAX_BYTES = 2 ** 30
_REGISTRY = {}
#: Modules above the tree layer whose models register themselves when they load.
#: `import spotree` loads them only on first use (PEP 562), so :func:`load`
#: imports all of them (a fixed list, never a name read from the file) when a
#: file names a class not registered yet.
_MODEL_MODULES = ("spotree.forest", "spotree.boost", "spotree.linear_model")
#: Constructor parameters never written (the problem is stored on its own;
#: the others do not describe the fitted model).
_NOT_SAVED = ("problem", "random_state", "n_jobs", "verbose")


def register_model(cls):
    """Allow ``cls`` to be saved and loaded (class decorator)."""
    _REGISTRY[cls.__name__] = cls
    return cls


def _json_param(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, RidgeFeatures):
        return value.to_dict()
    # np.bool_ too: the estimators accept it for their bool parameters
    # (warm_start, bootstrap, fit_intercept...), and it is no np.integer.
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if isinstance(value, dict):  # a Bunch (a pruned tree's pruning_path_)
        return {str(k): _json_param(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, range, np.ndarray)) or (
            hasattr(value, "to_numpy") and hasattr(value, "dtype")):  # a pandas Index or Series
        return [_json_param(v) for v in np.asarray(value, dtype=object).tolist()]
    raise ValueError(f"parameter value {value!r} cannot be written to JSON.")


def _problem_spec(problem):
    """The problem's JSON spec, or None when it has none (a user oracle, an adapter)."""
    try:
        return problem.to_dict()
    except NotImplementedError:
        return None


def _check_labels_writable(model):
    """Category labels must be what a model file holds and :func:`load` reads back.

    Strings, ints, bools and finite floats. Any other label (a date kept as a
    category, a tuple, a Decimal, inf) either failed with a message about a
    "parameter value" or was written and then refused by ``load``.
    """
    cats = getattr(model, "category_values_", None)
    if not cats:
        return
    names = getattr(model, "feature_names_in_", None)
    for j, labels in enumerate(cats):
        for v in labels or ():
            x = v.item() if isinstance(v, np.generic) else v
            if isinstance(x, (str, int)) or (isinstance(x, float) and math.isfinite(x)):
                continue
            col = names[j] if names is not None and j < len(names) else j
            raise ValueError(
                f"{type(model).__name__} cannot be saved: column {col!r} of X was categorical "
                f"with the label {v!r}, and a model file holds labels that are strings, ints, "
                f"bools or finite floats only. Fit on the column as text "
                f"(X[{col!r}].astype(str)), or pickle the model (joblib.dump).")


def save_model(model, path, extra=None):
    """Write a fitted model to ``path`` (atomically: temp file, then rename).

    A problem that cannot be written to JSON (``to_dict`` raises
    ``NotImplementedError``: a :class:`~spotree.problems.CallableProblem`, an
    adapter around another package) is left out; the file records its class
    name, ``n_costs`` and ``sense``, and ``spotree.load(path, problem=p)``
    re-attaches it.

    ``extra`` adds top-level keys (the CLI stores the CSV column names under
    ``"columns"``); ``load`` ignores keys it does not know.
    """
    from sklearn.utils.validation import check_is_fitted

    name = type(model).__name__
    if name not in _REGISTRY:
        raise TypeError(f"{name} cannot be saved: it is not a registered spotree model.")
    # As load takes it: a str or path-like (an int was os.fspath's 'expected str,
    # bytes or os.PathLike object, not int', naming no argument).
    path = _schema._check_path(path, "path", f"{name}.save")
    trees = getattr(model, "estimators_", None)
    check_is_fitted(model)
    _check_labels_writable(model)
    # A deprecated parameter left unset ("deprecated") is not part of the model.
    params = {k: _json_param(v) for k, v in model.get_params(deep=False).items()
              if k not in _NOT_SAVED and not (isinstance(v, str) and v == "deprecated")}
    # The parameters the fitted model still reads (a tree's criterion for
    # prune, SPOBoost's learning_rate for predict) as they were at fit: ones
    # set since were written, and the loaded model acted on them.
    params.update({k: _json_param(v) for k, v in model.__dict__.get("_fit_params", {}).items()})
    fitted = {"n_features_in_": int(model.n_features_in_)}
    names = getattr(model, "feature_names_in_", None)
    fitted["feature_names_in_"] = None if names is None else [str(n) for n in names]
    if getattr(model, "_persist_importances", True):
        fitted["feature_importances_"] = np.asarray(model.feature_importances_).tolist()
    for attr in getattr(model, "_persist_extra", ()):
        if hasattr(model, attr):
            fitted[attr] = _json_param(getattr(model, attr))
    problem = model.problem_
    doc = {
        "format": FORMAT, "version": VERSION, "estimator": name, "params": params,
        "problem": _problem_spec(problem),
        "problem_info": {"class": type(problem).__name__, "n_costs": int(problem.n_costs),
                         "sense": problem.sense},
        "fitted": fitted,
        "trees": ([] if not hasattr(model, "tree_") and trees is None
                  else [model.tree_.to_dict()] if trees is None
                  else [est.tree_.to_dict() for est in trees]),
    }
    if extra:
        doc.update({k: v for k, v in extra.items() if k not in doc})
    # Strict JSON: NaN and inf as tagged objects (see _schema.FLOAT_TAG), not
    # the NaN and Infinity literals that JavaScript's JSON.parse or jq refuse.
    doc = _schema.strict_json(doc)
    atomic_write(path, lambda fh: json.dump(doc, fh, allow_nan=False))


# -------------------------------------------------------------- reading
def _read_oob_score(v, where, p, d):
    # -normalized SPO loss: <= 0, NaN when no row was out of bag.
    return _schema.real(v, where, high=0.0, allow_nan=True)


def _read_oob_pair(v, where, p, d):
    """The out-of-bag scores of the SPO and the squared-error forest ("auto")."""
    if not isinstance(v, list) or len(v) != 2:
        raise _schema.SchemaError(where, "must be a list of 2 out-of-bag scores (the SPO "
                                         "forest's, then the squared-error forest's); got "
                                         f"{_schema._show(v)}.")
    return np.array([_read_oob_score(x, _schema.join(where, i), p, d) for i, x in enumerate(v)])


def _read_loss_unit(v, where, p, d):
    """A mixed criterion's unit of its scales: a positive power of two."""
    u = _schema.real(v, where)
    if not (u > 0 and math.frexp(u)[0] == 0.5):
        raise _schema.SchemaError(where, f"must be a positive power of two (the unit of "
                                         f"loss_scales_); got {v!r}.")
    return u


def _read_loss_scales(v, where, p, d):
    if not isinstance(v, list) or len(v) != 2:
        raise _schema.SchemaError(where, "must be a list of 2 positive numbers (the SPO and "
                                         f"squared-error scales); got {_schema._show(v)}.")
    scales = tuple(_schema.real(x, _schema.join(where, i)) for i, x in enumerate(v))
    for i, s in enumerate(scales):
        if not s > 0:
            raise _schema.SchemaError(_schema.join(where, i),
                                      f"must be a positive number; got {s!r}.")
    return scales


def _read_json_value(v, where, p=None, d=None):
    """Extras of user-registered classes: plain JSON values, finite numbers."""
    if isinstance(v, list):
        return [_read_json_value(x, _schema.join(where, i)) for i, x in enumerate(v)]
    if isinstance(v, float) and not math.isfinite(v):
        raise _schema.SchemaError(where, f"must be finite; got {v!r}.")
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise _schema.SchemaError(where, f"must be a JSON number, string, bool, null or list; "
                                     f"got {_schema._show(v)}.")


def _read_result(v, where, p, d):
    """OptimalSPOTree's ``result_``: an object of scalars (diagnostics of the
    solve; a solver's objective or gap may be inf or NaN when it found nothing)."""
    for key, x in _schema.mapping(v, where).items():
        if not (x is None or isinstance(x, (bool, int, float, str))):
            raise _schema.SchemaError(_schema.join(where, key),
                                      f"must be a JSON number, string, bool or null; "
                                      f"got {_schema._show(x)}.")
    return dict(v)


def _read_category_values(v, where, p, d):
    """Per feature, the labels of a categorical column (a list) or None."""
    if v is None:
        return None
    if not isinstance(v, list) or len(v) != p:
        raise _schema.SchemaError(where, f"must be null or a list of n_features_in_={p} "
                                         f"entries; got {_schema._show(v)}.")
    out = []
    for j, labels in enumerate(v):
        at = _schema.join(where, j)
        if labels is None:
            out.append(None)
            continue
        if not isinstance(labels, list):
            raise _schema.SchemaError(at, f"must be null or a list of labels; got "
                                          f"{_schema._show(labels)}.")
        values = [_read_json_value(x, _schema.join(at, i)) for i, x in enumerate(labels)]
        if any(isinstance(x, list) for x in values) or len(set(map(repr, values))) != len(values):
            raise _schema.SchemaError(at, "must list distinct labels (strings or numbers).")
        out.append(values)
    return out


def _read_numeric_categories(v, where, p, d):
    """Per feature, whether it is a numeric column that categorical_features made
    categorical (coded by value; see check_features), or null for none."""
    if v is None:
        return None
    if not isinstance(v, list) or len(v) != p or not all(type(x) is bool for x in v):
        raise _schema.SchemaError(where, f"must be null or a list of n_features_in_={p} "
                                         f"bools; got {_schema._show(v)}.")
    return v


def _check_numeric_categories(fitted):
    """A column coded by value has labels that are increasing numbers (codes are
    found by binary search in them)."""
    marked = fitted.get("_numeric_categories")
    if not marked:
        return
    labels = fitted.get("category_values_") or [None] * len(marked)
    for j, m in enumerate(marked):
        if not m:
            continue
        at = f"fitted.category_values_[{j}]"
        values = labels[j]
        if values is None or not all(isinstance(x, (int, float)) and type(x) is not bool
                                     for x in values):
            raise _schema.SchemaError(at, "must list numbers: fitted._numeric_categories "
                                          f"marks feature {j} as a numeric column coded by "
                                          "value.")
        if len(values) > 1 and not (np.diff(np.asarray(values, dtype=np.float64)) > 0).all():
            raise _schema.SchemaError(at, "must list increasing numbers (the values of a "
                                          "column coded by value).")


def _read_categories_seen(v, where, p, d):
    """Per feature, the category codes seen at fit (finite numbers) or None."""
    if v is None:
        return None
    if not isinstance(v, list) or len(v) != p:
        raise _schema.SchemaError(where, f"must be null or a list of n_features_in_={p} "
                                         f"entries; got {_schema._show(v)}.")
    return [None if x is None else _schema.real_array(x, _schema.join(where, j))
            for j, x in enumerate(v)]


def _read_ridge_features(v, where, p, d):
    """SPOForest's ridge features: a linear map from numeric features to extra columns."""
    if v is None:
        return None
    v = _schema.mapping(v, where)
    _schema.check_keys(v, where, required=("kind", "columns", "fill", "coef", "intercept",
                                           "fold"))
    kind = _schema.string(v["kind"], _schema.join(where, "kind"),
                          choices=("cost", "component"))
    columns = _schema.int_array(v["columns"], _schema.join(where, "columns"), low=0,
                                high=p - 1)
    k = len(columns)
    if k == 0 or len(set(columns.tolist())) != k:
        raise _schema.SchemaError(_schema.join(where, "columns"),
                                  "must list distinct feature indices, at least one.")
    fill = _schema.real_array(v["fill"], _schema.join(where, "fill"), length=k)
    coef = v["coef"]
    rows = len(coef) if isinstance(coef, list) else 0
    if rows == 0 or (kind == "cost" and rows != d):
        expected = f"one row per cost ({d})" if kind == "cost" else "at least one row"
        raise _schema.SchemaError(_schema.join(where, "coef"),
                                  f"must hold {expected}; got {_schema._show(coef)}.")
    coef = _schema.real_matrix(coef, _schema.join(where, "coef"), rows=rows, cols=k, per="row")
    intercept = _schema.real_array(v["intercept"], _schema.join(where, "intercept"),
                                   length=rows)
    fold = _schema.real_matrix(v["fold"], _schema.join(where, "fold"), rows=rows, cols=k,
                               per="row")
    if (fold < 0).any() or not np.allclose(fold.sum(axis=1), 1.0, atol=1e-9):
        raise _schema.SchemaError(_schema.join(where, "fold"),
                                  "must hold non-negative rows that sum to 1.")
    return RidgeFeatures(columns, fill, coef, intercept, fold, kind)


def _read_pruning_path(v, where, p, d):
    """A pruned tree's candidate subtrees: alphas, leaves, validation losses, standard error."""
    v = _schema.mapping(v, where)
    keys = ("ccp_alphas", "n_leaves", "val_losses", "standard_error")
    _schema.check_keys(v, where, required=keys)
    alphas = _schema.real_array(v["ccp_alphas"], _schema.join(where, "ccp_alphas"), low=0.0)
    k = len(alphas)
    leaves = _schema.int_array(v["n_leaves"], _schema.join(where, "n_leaves"), length=k,
                               low=1)
    losses = _schema.real_array(v["val_losses"], _schema.join(where, "val_losses"), length=k)
    if k == 0 or (np.diff(leaves) >= 0).any():
        raise _schema.SchemaError(_schema.join(where, "n_leaves"),
                                  "must list at least one subtree, with fewer leaves at each "
                                  "step of the pruning sequence.")
    se = _schema.real(v["standard_error"], _schema.join(where, "standard_error"), low=0.0,
                      allow_nan=True)
    return Bunch(ccp_alphas=alphas, n_leaves=leaves, val_losses=losses, standard_error=se)


def _read_cost_rows(v, where, d):
    # One row per cost, all of the length of the first (SPOBoost's spline links).
    cols = len(v[0]) if isinstance(v, list) and v and isinstance(v[0], list) else 0
    return _schema.real_matrix(v, where, rows=d, cols=cols, per="cost")


def _read_scores(v, where):
    """A list of finite numbers or NaN, as a float64 array."""
    if not isinstance(v, list):
        raise _schema.SchemaError(where, f"must be a list of numbers; got {_schema._show(v)}.")
    return np.array([_schema.real(x, _schema.join(where, i), allow_nan=True)
                     for i, x in enumerate(v)], dtype=np.float64)


#: Readers of the fitted attributes that estimators list in ``_persist_extra``,
#: called as ``reader(value, key, n_features, n_costs)``.
_EXTRA_READERS = {
    "loss_scales_": _read_loss_scales,
    "loss_unit_": _read_loss_unit,
    "pruning_alpha_": lambda v, where, p, d: _schema.real(v, where, low=0.0),
    "pruning_path_": _read_pruning_path,
    "oob_score_": _read_oob_score,
    "category_values_": _read_category_values,
    "categories_seen_": _read_categories_seen,
    "_numeric_categories": _read_numeric_categories,
    "ridge_features_": _read_ridge_features,
    # OptimalSPOTree: the solve's status, objective, bound and gap.
    "result_": _read_result,
    # SPOForest(criterion="auto"): the kept criterion and both out-of-bag scores.
    "criterion_": lambda v, where, p, d: _schema.string(v, where, choices=("spo", "mse")),
    "criterion_oob_scores_": _read_oob_pair,
    # SPOBoost: the initial linear model, the number of rounds and the scores.
    # One column per feature, or per category of a categorical feature: SPOBoost
    # checks the count against category_values_ once both are read.
    "init_coef_": lambda v, where, p, d: _read_cost_rows(v, where, d),
    "init_intercept_": lambda v, where, p, d: _schema.real_array(v, where, length=d,
                                                                 per="cost"),
    "init_choice_": lambda v, where, p, d: _schema.string(v, where),
    "init_link_knots_": lambda v, where, p, d: _read_cost_rows(v, where, d),
    "init_link_coef_": lambda v, where, p, d: _read_cost_rows(v, where, d),
    "init_link_intercept_": lambda v, where, p, d: _schema.real_array(v, where, length=d,
                                                                      per="cost"),
    "n_iter_": lambda v, where, p, d: _schema.integer(v, where, low=0),
    "best_iteration_": lambda v, where, p, d: _schema.integer(v, where, low=0),
    # NaN where the training rows' optimal values are all 0 (nothing to normalize by).
    "train_score_": lambda v, where, p, d: _read_scores(v, where),
    "validation_score_": lambda v, where, p, d: _schema.real_array(v, where),
    # SPOPlusLinear: one column of coef_ per feature, or per category of a
    # categorical feature (the estimator checks the count against
    # category_values_ once both are read).
    "coef_": lambda v, where, p, d: _schema.real_matrix(
        v, where, rows=d, cols=len(v[0]) if isinstance(v, list) and v
        and isinstance(v[0], list) else p, per="cost"),
    "intercept_": lambda v, where, p, d: _schema.real_array(v, where, length=d, per="cost"),
    "loss_curve_": lambda v, where, p, d: _schema.real_array(v, where),
}


def _read_params(cls, doc):
    params = _schema.mapping(_schema.member(doc, "params", ""), "params")
    accepted = [p for p in inspect.signature(cls.__init__).parameters
                if p not in ("self",) + _NOT_SAVED]
    _schema.check_keys(params, "params", optional=accepted)
    model = cls(**params)
    # The estimator's own declarative validation, one parameter at a time so
    # that the error names the key.
    for key, alternatives in getattr(cls, "_parameter_constraints", {}).items():
        if key not in params:
            continue
        probe = type(cls.__name__, (), {"_parameter_constraints": {key: alternatives}})()
        setattr(probe, key, params[key])
        try:
            validate_params(probe)
        except ValueError as exc:
            raise _schema.SchemaError(f"params.{key}", f"is invalid: {exc}") from None
    return model


def _read_fitted(cls, doc):
    fitted = _schema.mapping(_schema.member(doc, "fitted", ""), "fitted")
    extras = tuple(getattr(cls, "_persist_extra", ()))
    importances = getattr(cls, "_persist_importances", True)
    _schema.check_keys(fitted, "fitted",
                       required=("n_features_in_",) + (("feature_importances_",)
                                                       if importances else ()),
                       optional=("feature_names_in_",) + extras)
    p = _schema.integer(fitted["n_features_in_"], "fitted.n_features_in_", low=1)
    out = {"n_features_in_": p}
    names = fitted.get("feature_names_in_")
    if names is not None:
        names = _schema.string_list(names, "fitted.feature_names_in_", length=p)
        # fit refuses a DataFrame with a column name twice; a loaded model with
        # one failed at every predict, in scikit-learn, naming no file.
        if len(set(names)) != len(names):
            seen = set()
            for i, name in enumerate(names):
                if name in seen:
                    raise _schema.SchemaError(f"fitted.feature_names_in_[{i}]",
                                              f"repeats the name {name!r}; each feature has "
                                              "its own.")
                seen.add(name)
        out["feature_names_in_"] = np.asarray(names, dtype=object)
    if not importances:
        return out
    imp = _schema.real_array(fitted["feature_importances_"], "fitted.feature_importances_",
                             length=p, low=0.0, per="feature")
    # Normalized: they sum to 1, or are all zero (a single leaf).
    total = math.fsum(imp)
    if total != 0 and abs(total - 1.0) > 1e-9:
        raise _schema.SchemaError("fitted.feature_importances_",
                                  f"must sum to 1 (or all be 0); they sum to {total!r}.")
    out["feature_importances_"] = imp
    return out


def _read_extras(cls, doc, p, d):
    fitted = doc["fitted"]
    out = {}
    for name in getattr(cls, "_persist_extra", ()):
        if name in fitted:
            reader = _EXTRA_READERS.get(name, _read_json_value)
            out[name] = reader(fitted[name], f"fitted.{name}", p, d)
    return out


def _check_categorical_features(value, fitted):
    """Saved categorical_features: feature indices, names of the columns, or a mask."""
    where = "params.categorical_features"
    if value is None:
        return
    p = fitted["n_features_in_"]
    names = fitted.get("feature_names_in_")
    if value and all(type(x) is bool for x in value):
        if len(value) != p:
            raise _schema.SchemaError(where, f"as a boolean mask must have n_features_in_={p} "
                                             f"entries; got {len(value)}.")
        return
    for i, x in enumerate(value):
        if isinstance(x, str):
            if names is None or x not in set(names):
                raise _schema.SchemaError(_schema.join(where, i),
                                          f"names {x!r}, which is not in "
                                          "fitted.feature_names_in_.")
        else:
            _schema.integer(x, _schema.join(where, i), low=0, high=p - 1)


def _read_problem_info(doc):
    if "problem_info" not in doc:
        return None
    info = _schema.mapping(doc["problem_info"], "problem_info")
    _schema.check_keys(info, "problem_info", required=("n_costs", "sense"),
                       optional=("class",))
    return {"class": _schema.string(info.get("class", "problem"), "problem_info.class"),
            "n_costs": _schema.integer(info["n_costs"], "problem_info.n_costs", low=1),
            "sense": _schema.string(info["sense"], "problem_info.sense",
                                    choices=("min", "max"))}


def _check_given_problem(problem, info, spec, n_costs, path):
    """The rule for ``load(path, problem=p)``: same n_costs and sense as recorded."""
    if info is not None:
        n_costs, sense = info["n_costs"], info["sense"]
    else:  # a file written before problem_info: the sense is in the spec
        sense = spec.get("sense", "min") if isinstance(spec, dict) else None
    if n_costs is not None and problem.n_costs != n_costs:
        raise ValueError(f"The 'problem' argument of spotree.load has n_costs="
                         f"{problem.n_costs}, but the model in {path} was fitted on a problem "
                         f"with n_costs={n_costs}.")
    if sense is not None and problem.sense != sense:
        raise ValueError(f"The 'problem' argument of spotree.load is a {problem.sense!r} "
                         f"problem, but the model in {path} was fitted on a {sense!r} problem.")


def _build_problem(spec, info):
    if spec is None:
        what = ("" if info is None else
                f" (a {info['class']} with n_costs={info['n_costs']}, sense={info['sense']!r})")
        raise _NoProblem(what)
    try:
        problem = problem_from_dict(spec)
    except CheckTimeLimitError as exc:
        raise _SlowProblem(" ".join(str(exc).split()).split(" Building a LinearProgram")[0])
    except (ValueError, TypeError, OverflowError, KeyError, IndexError) as exc:
        msg = " ".join(str(exc).split())
        raise _schema.SchemaError("problem", f"does not describe a decision problem: {msg}")
    if info is not None:
        for key in ("n_costs", "sense"):
            if getattr(problem, key) != info[key]:
                raise _schema.SchemaError(
                    f"problem_info.{key}", f"is {info[key]!r} but the problem spec has "
                                           f"{key}={getattr(problem, key)!r}.")
    return problem


class _NoProblem(Exception):
    pass


class _SlowProblem(Exception):
    """The stored problem's checks ran out of problem_from_dict's default time limit."""


def _check_category_codes(trees, fitted, cls):
    """The codes of labelled categorical features index their labels, and a
    labelled feature is not split or recorded as a numeric one.

    A feature whose labels ``fitted.category_values_`` lists is coded 0, 1,
    ... at predict; a tree's categorical split on it, and its
    ``categories_seen_``, must hold such codes. Otherwise the file loads but
    routes rows by codes no label has, and the exporters fail on them.
    SPOBoost's trees split indicator columns, not codes (not checked here).
    """
    labels = fitted.get("category_values_")
    if not labels:
        return

    def check(codes, j, where):
        n = len(labels[j])
        bad = np.flatnonzero((codes != np.round(codes)) | (codes < 0) | (codes >= n))
        if bad.size:
            raise _schema.SchemaError(
                _schema.join(where, int(bad[0])),
                f"must be the code of a label of fitted.category_values_[{j}] (an int in "
                f"[0, {n - 1}]); got {float(codes[bad[0]])!r}.")

    seen = fitted.get("categories_seen_")
    for j, labelled in enumerate(labels):
        if labelled is None:
            continue
        # A numeric feature given labels by hand loaded, and every predict then
        # failed ("column 'a' holds numbers but held categories"), naming no
        # file. A fitted categorical column has the codes it saw.
        if "categories_seen_" in fitted and (seen is None or seen[j] is None):
            raise _schema.SchemaError(
                f"fitted.category_values_[{j}]",
                f"lists labels, so feature {j} is a categorical column, but "
                f"fitted.categories_seen_{'' if seen is None else f'[{j}]'} is null, as for a "
                "numeric feature; a numeric feature's category_values_ entry is null.")
        if seen is not None and seen[j] is not None:
            check(np.asarray(seen[j], dtype=np.float64), j, f"fitted.categories_seen_[{j}]")
    if getattr(cls, "_trees_split_one_hot", False):
        return
    for i, t in enumerate(trees):
        for node in np.flatnonzero(~t.is_leaf):
            j = int(t.feature[node])
            if j >= len(labels) or labels[j] is None:
                continue
            if t.categories[node].size:
                check(t.categories[node], j, f"trees[{i}].categories[{node}]")
            elif np.isfinite(t.threshold[node]):
                # (+inf is the present-vs-missing split, which a categorical
                # column has too.)
                raise _schema.SchemaError(
                    f"fitted.category_values_[{j}]",
                    f"lists labels, so feature {j} is a categorical column, but "
                    f"trees[{i}] splits it at the threshold {float(t.threshold[node])!r} "
                    f"(node {node}), as a numeric feature; a numeric feature's "
                    "category_values_ entry is null.")


def _read_trees(doc):
    # How many trees an estimator holds is its own business (_set_trees_from_load):
    # one for a tree, n_estimators for a forest, possibly none for boosting.
    trees = _schema.member(doc, "trees", "")
    if not isinstance(trees, list):
        raise _schema.SchemaError("trees", f"must be a list of trees; got "
                                           f"{_schema._show(trees)}.")
    return [Tree.from_dict(t, f"trees[{i}]") for i, t in enumerate(trees)]


def load(path, *, problem=None, max_bytes=MAX_BYTES):
    """Load a model written by ``model.save(path)``.

    The file is treated as untrusted: nothing in it is imported or executed,
    and everything is checked (see the module documentation), including
    that the stored decisions are feasible and optimal for the problem,
    which costs at most 1,056 calls of the problem's oracle.

    Parameters
    ----------
    path : str or os.PathLike
        The model file.
    problem : DecisionProblem or None, default=None
        The decision problem to attach. Required for a model saved without
        its problem (one that cannot be written to JSON, such as a
        :class:`~spotree.problems.CallableProblem`). When given for a file that
        holds its problem, it replaces the stored one, which is then not
        built. Either way it must have the ``n_costs`` and ``sense`` of the
        problem the model was fitted on, and the stored decisions must be
        feasible and optimal for it.
    max_bytes : int, default=MAX_BYTES (1 GiB)
        Larger files are refused before they are read.

    Returns
    -------
    SPOTree, OptimalSPOTree, SPOForest, SPOBoost or SPOPlusLinear

    Raises
    ------
    TypeError
        If ``path`` is not a str or path-like (a file descriptor number is
        refused), or ``problem`` not a DecisionProblem.
    ValueError
        If the file is not a spotree model, is malformed (the message names
        the key), was saved without its problem and none is given, or the
        given problem does not match the model.
    OSError
        If the file cannot be read.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> import spotree
    >>> from spotree import SPOTree, CallableProblem
    >>> def cheapest(c):
    ...     return np.eye(2)[np.argmin(c)]
    >>> problem = CallableProblem(cheapest, n_costs=2)
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> C = np.array([[1.0, 2.0], [1.0, 3.0], [3.0, 1.0], [4.0, 1.0]])
    >>> tree = SPOTree(problem, max_depth=1).fit(X, C)
    >>> path = os.path.join(tempfile.mkdtemp(), "tree.json")
    >>> tree.save(path)               # the oracle is left out of the file
    >>> back = spotree.load(path, problem=problem)
    >>> back.predict_decision([[0.5], [2.5]])
    array([[1., 0.],
           [0., 1.]])
    """
    if problem is not None and not isinstance(problem, DecisionProblem):
        raise TypeError(f"The 'problem' argument of spotree.load must be a DecisionProblem "
                        f"or None. Got {type(problem).__name__} instead.")
    doc = _schema.read_json_file(path, max_bytes=max_bytes, what="spotree model file")
    path = str(path)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"{path} is not a spotree model file (missing "
                         f"'format': '{FORMAT}').")
    if type(doc.get("version")) is not int or doc["version"] != VERSION:
        raise ValueError(f"{path} has model format version {doc.get('version')!r}; this "
                         f"spotree reads version {VERSION}.")
    name = doc.get("estimator")
    if isinstance(name, str) and name not in _REGISTRY:
        for module in _MODEL_MODULES:
            importlib.import_module(module)
    cls = _REGISTRY.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ValueError(f"{path} names an unknown estimator {name!r}; "
                         f"known: {sorted(_REGISTRY)}.")
    given = problem is not None
    try:
        model = _read_params(cls, doc)
        fitted = _read_fitted(cls, doc)
        if "categorical_features" in model.get_params(deep=False):
            _check_categorical_features(model.categorical_features, fitted)
        trees = _read_trees(doc)
        info = _read_problem_info(doc)
        spec = _schema.member(doc, "problem", "")
        p = fitted["n_features_in_"]
        # The number of costs, as recorded (or, in older files, from the trees).
        d = info["n_costs"] if info is not None else (trees[0].n_outputs if trees else None)
        if given:
            _check_given_problem(problem, info, spec, d, path)
        else:
            problem = _build_problem(spec, info)
            if d is not None and problem.n_costs != d:
                raise _schema.SchemaError("problem", f"has n_costs={problem.n_costs} but the "
                                                     f"trees have n_outputs={d}.")
        d = problem.n_costs
        fitted.update(_read_extras(cls, doc, p, d))
        _check_numeric_categories(fitted)
        # SPOBoost's trees split the indicator columns of categorical features.
        width, why = p, f"fitted.n_features_in_ is {p}"
        if fitted.get("ridge_features_") is not None:
            k = fitted["ridge_features_"].n_out
            width, why = p + k, (f"fitted.n_features_in_ is {p} and fitted.ridge_features_ "
                                 f"adds {k} columns")
        if getattr(cls, "_trees_split_one_hot", False) and fitted.get("category_values_"):
            width = one_hot_width(fitted["category_values_"])
            why = (f"the model has {width} columns (one per numeric feature and one per "
                   "category of fitted.category_values_)")
        for i, t in enumerate(trees):
            if t.n_features != width:
                raise _schema.SchemaError(f"trees[{i}].n_features",
                                          f"is {t.n_features} but {why}.")
            if t.n_outputs != d:
                raise _schema.SchemaError(f"trees[{i}].n_outputs",
                                          f"is {t.n_outputs} but the problem has n_costs={d}.")
        _check_category_codes(trees, fitted, cls)
        model.problem = problem
        model.problem_ = problem
        for attr, value in fitted.items():
            setattr(model, attr, value)
        try:
            model._set_trees_from_load(trees)
        except _schema.SchemaError:
            raise
        except ValueError as exc:
            raise _schema.SchemaError("trees", f"do not fit the estimator: {exc}") from None
    except _SlowProblem as exc:
        raise ValueError(f"{path}: building the model's decision problem failed: {exc} "
                         "spotree.load allows its checks that long, since a file may be "
                         "untrusted. If you trust this one, build the problem without a limit "
                         "and pass it: spotree.load(path, problem=problem_from_dict(spec, "
                         "check_time_limit=None)), with spec the file's 'problem' "
                         "entry.") from None
    except _NoProblem as exc:
        raise ValueError(f"{path} holds a model saved without its decision problem{exc}, "
                         "which cannot be written to JSON. Pass the problem back: "
                         "spotree.load(path, problem=...).") from None
    except _schema.SchemaError as exc:
        raise ValueError(f"{path} is a malformed spotree model: {exc}") from None
    try:
        # Estimators whose trees' decisions mean nothing (SPOBoost's gradient
        # trees) say so; every other tree decides for the model's problem.
        if getattr(cls, "_tree_decisions_used", True):
            check_decisions(trees, problem)
    except _schema.SchemaError as exc:
        if given:
            raise ValueError(f"The 'problem' argument of spotree.load does not match the "
                             f"model in {path}: {exc}") from None
        raise ValueError(f"{path} is a malformed spotree model: {exc}") from None
    return model
