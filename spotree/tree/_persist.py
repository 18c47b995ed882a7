"""Saving fitted models as plain JSON, and loading them back safely.

Format (version 1), one JSON object::

    {"format": "spotree-model", "version": 1,
     "estimator": "SPOTree",               # a class from the registry below
     "params": {...},                      # constructor parameters (JSON values)
     "problem": {"type": ..., ...},        # see spotree.problems.problem_from_dict
     "fitted": {"n_features_in_": 5, "feature_names_in_": [...] or null,
                "feature_importances_": [...], ...},
     "trees": [ {tree arrays}, ... ],      # see Tree.to_dict; one per tree
     "columns": {...}}                     # optional: CSV column names (spotree fit)

Loading never imports or executes anything named in the file: the estimator
name must be one of the registered classes, the problem is rebuilt from its
declarative spec, and every array's shape is checked.
"""

from __future__ import annotations

import json

import numpy as np

from .._atomic import atomic_write
from ..problems import problem_from_dict
from ._tree import Tree

__all__ = ["save_model", "load", "register_model"]

FORMAT = "spotree-model"
VERSION = 1
_REGISTRY = {}


def register_model(cls):
    """Allow ``cls`` to be saved and loaded (class decorator)."""
    _REGISTRY[cls.__name__] = cls
    return cls


def _json_param(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_json_param(v) for v in np.asarray(value, dtype=object).tolist()]
    raise ValueError(f"parameter value {value!r} cannot be written to JSON.")


def save_model(model, path, extra=None):
    """Write a fitted model to ``path`` (atomically: temp file, then rename).

    ``extra`` adds top-level keys (the CLI stores the CSV column names under
    ``"columns"``); ``load`` ignores keys it does not know.
    """
    from sklearn.utils.validation import check_is_fitted

    name = type(model).__name__
    if name not in _REGISTRY:
        raise TypeError(f"{name} cannot be saved: it is not a registered spotree model.")
    trees = getattr(model, "estimators_", None)
    check_is_fitted(model)
    params = {k: _json_param(v) for k, v in model.get_params(deep=False).items()
              if k not in ("problem", "random_state", "n_jobs", "verbose")}
    fitted = {"n_features_in_": int(model.n_features_in_)}
    names = getattr(model, "feature_names_in_", None)
    fitted["feature_names_in_"] = None if names is None else [str(n) for n in names]
    fitted["feature_importances_"] = np.asarray(model.feature_importances_).tolist()
    for attr in getattr(model, "_persist_extra", ()):
        if hasattr(model, attr):
            fitted[attr] = _json_param(getattr(model, attr))
    doc = {
        "format": FORMAT, "version": VERSION, "estimator": name, "params": params,
        "problem": model.problem_.to_dict(), "fitted": fitted,
        "trees": ([model.tree_.to_dict()] if trees is None
                  else [est.tree_.to_dict() for est in trees]),
    }
    if extra:
        doc.update({k: v for k, v in extra.items() if k not in doc})
    atomic_write(path, lambda fh: json.dump(doc, fh))


def load(path):
    """Load a model written by ``model.save(path)``.

    Raises
    ------
    ValueError
        If the file is not a spotree model or is malformed.
    """
    try:
        with open(path) as fh:
            doc = json.load(fh)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not a spotree model file (invalid JSON: {exc}).") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not a spotree model file (not text).") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"{path} is not a spotree model file (missing "
                         f"'format': '{FORMAT}').")
    if doc.get("version") != VERSION:
        raise ValueError(f"{path} has model format version {doc.get('version')!r}; this "
                         f"spotree reads version {VERSION}.")
    cls = _REGISTRY.get(doc.get("estimator"))
    if cls is None:
        raise ValueError(f"{path} names an unknown estimator {doc.get('estimator')!r}; "
                         f"known: {sorted(_REGISTRY)}.")
    try:
        problem = problem_from_dict(doc["problem"])
        params = dict(doc["params"])
        fitted = doc["fitted"]
        trees = [Tree.from_dict(t) for t in doc["trees"]]
        model = cls(problem=problem, **params)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{path} is a malformed spotree model: {exc!r}") from None
    p = int(fitted["n_features_in_"])
    for t in trees:
        if t.n_features != p or t.n_outputs != problem.n_costs:
            raise ValueError(f"{path} is a malformed spotree model: tree shapes do not match "
                             "the problem and features.")
    names = fitted.get("feature_names_in_")
    importances = np.asarray(fitted.get("feature_importances_", np.zeros(p)), dtype=np.float64)
    if importances.shape != (p,) or (names is not None and len(names) != p):
        raise ValueError(f"{path} is a malformed spotree model: feature_importances_ and "
                         f"feature_names_in_ must have n_features_in_={p} entries.")
    model.problem_ = problem
    model.n_features_in_ = p
    if names is not None:
        model.feature_names_in_ = np.asarray([str(n) for n in names], dtype=object)
    model.feature_importances_ = importances
    for extra in getattr(model, "_persist_extra", ()):
        if extra in fitted:
            setattr(model, extra, fitted[extra])
    model._set_trees_from_load(trees)
    return model
