"""One run of the ICON energy comparison (``spotree reproduce energy``).

Real data: the ICON energy-price knapsack of the decision-focused learning
benchmark (:func:`~spotree.datasets.load_icon_energy`): one instance per day,
48 half-hour items, capacity 60, 120 or 180, the benchmark's day split (550
train, 100 validation, 139 test, shuffled with the seed). Day-level features
(196 columns) feed every method except the item-level least squares, which
fits one linear model shared by the 48 items on their 8 features each, as the
benchmark's own baseline does. Features are used raw or standardized (with
the statistics of the file's training part, as the benchmark prepares them).

The pruned tree grows on the 550 training days and prunes on the 100
validation days; every other method fits on all 650 (boosting keeps its own
early-stopping split). Scores on the 139 test days: the benchmark's *relative
regret*, the mean over days of ``(z* - c.w_hat) / z*`` in percent, and the
normalized regret ``sum(z* - c.w_hat) / sum(z*)``.
"""

from __future__ import annotations

import functools
import hashlib
import time

import numpy as np
from threadpoolctl import threadpool_limits

__all__ = ["data_id", "energy_data", "fit_energy_method", "run_energy", "relative_regret",
           "ItemLinear"]


def data_id(path):
    """``"icon-energy-<sha256 prefix>"``: the fingerprint of the file at ``path``, part of
    each run's key (so other data are other runs)."""
    with open(path, "rb") as fh:
        return "icon-energy-" + hashlib.sha256(fh.read()).hexdigest()[:12]


def energy_data(path, seed, standardize, expected_id=None):
    """The loaded data of one (file, seed, scaling), kept per process: a worker
    reads the 3 MB file once, not once per run.

    ``expected_id`` (a run's ``data``, from :func:`data_id`) is part of the key:
    keyed by the path alone, a process that had read the file kept serving its
    old contents after the file was replaced, and the runs of the new file (a
    new fingerprint, so new cache keys) were computed and cached on the old
    data. A file read whose fingerprint is not ``expected_id`` (replaced during
    the experiment) is an error.
    """
    return _load(path, seed, standardize, expected_id)


@functools.lru_cache(maxsize=8)
def _load(path, seed, standardize, expected_id):
    from ..datasets import load_icon_energy

    if expected_id is not None and data_id(path) != expected_id:
        raise ValueError(f"{path} changed during the experiment (its fingerprint is no "
                         f"longer {expected_id}); rerun the command.")
    return load_icon_energy(path, random_state=seed, standardize=standardize)


def _first_days(data, k):
    from sklearn.utils import Bunch

    train, val, test = data.train[:k], data.validation[:k], data.test[:k]
    return Bunch(**dict(data, train=train, validation=val, test=test, X_train=data.X[train],
                 C_train=data.C[train], X_val=data.X[val], C_val=data.C[val],
                 X_test=data.X[test], C_test=data.C[test]))


def relative_regret(C_true, W, problem):
    """The benchmark's metric: mean over instances of ``(z* - c.w) / |z*|`` in percent
    (maximization; instances with ``z* = 0`` count as 0)."""
    _, z = problem.solve(C_true)
    got = np.einsum("ij,ij->i", C_true, W)
    gap = (z - got) if problem.sense == "max" else (got - z)
    safe = np.where(z != 0, np.abs(z), 1.0)
    return float(100.0 * np.mean(np.where(z != 0, gap / safe, 0.0)))


class ItemLinear:
    """Two-stage least squares at item level: one linear model (with intercept) maps
    an item's own features to its value, shared by all items of all days."""

    def fit(self, X_items, C):
        n, m, p = X_items.shape
        A = np.column_stack([X_items.reshape(n * m, p), np.ones(n * m)])
        self.coef_ = np.linalg.lstsq(A, C.reshape(n * m), rcond=None)[0]
        return self

    def predict(self, X_items):
        n, m, p = X_items.shape
        return (X_items.reshape(n * m, p) @ self.coef_[:-1] + self.coef_[-1]).reshape(n, m)


def fit_energy_method(run, problem, data):
    """Fit the run's method; returns ``(predicted test costs, fit seconds, info)``."""
    from ..boost import SPOBoost
    from ..forest import SPOForest
    from ..linear_model import SPOPlusLinear
    from ..tree import SPOTree

    kind, params, seed = run["model"], dict(run["params"]), int(run["seed"])
    fit = np.concatenate([data.train, data.validation])
    X, C = data.X[fit], data.C[fit]
    info = {}
    with threadpool_limits(limits=1):  # small products: extra BLAS threads only contend
        t0 = time.perf_counter()
        if kind == "tree":
            model = SPOTree(problem, random_state=seed, **params)
            model = model.fit(data.X_train, data.C_train).prune(data.X_val, data.C_val)
            info.update(n_leaves=int(model.get_n_leaves()), fitted_depth=int(model.get_depth()))
        elif kind == "forest":
            model = SPOForest(problem, random_state=seed, n_jobs=1, **params).fit(X, C)
        elif kind == "boost":
            model = SPOBoost(problem, random_state=seed, **params).fit(X, C)
            info.update(rounds=int(model.n_iter_), kept=int(model.best_iteration_))
        elif kind == "linear":
            model = SPOPlusLinear(problem, random_state=seed, **params).fit(X, C)
        elif kind == "least-squares":
            from sklearn.linear_model import LinearRegression

            model = LinearRegression(**params).fit(X, C)
        elif kind == "item-least-squares":
            model = ItemLinear().fit(data.X_items[fit], C)
        elif kind == "random-forest":
            from sklearn.ensemble import RandomForestRegressor

            model = RandomForestRegressor(random_state=seed, n_jobs=1, **params).fit(X, C)
        else:
            raise ValueError(f"unknown energy method model {kind!r}")
        secs = time.perf_counter() - t0
        Xt = data.X_items[data.test] if kind == "item-least-squares" else data.X_test
        return model.predict(Xt), secs, info


def run_energy(run, data=None):
    """One run: ``(row, extra)`` for the experiment runner; ``row`` holds the test
    relative regret (percent), the normalized regret, the fit time and the fit's
    info."""
    from ..metrics import normalized_spo_loss
    from ..problems import Knapsack

    data = energy_data(run["data_path"], int(run["seed"]), run["scaling"] == "standardized",
                       run.get("data"))
    if run.get("max_days"):  # the runner's warm-up fit: a few days of each part
        data = _first_days(data, int(run["max_days"]))
    problem = Knapsack(data.weights, float(run["capacity"]))
    C_pred, secs, info = fit_energy_method(run, problem, data)
    W, _ = problem.solve(C_pred)
    row = dict(relative_regret=relative_regret(data.C_test, W, problem),
               normalized_spo_loss=float(normalized_spo_loss(data.C_test, C_pred,
                                                             problem=problem)),
               fit_time=secs, **info)
    return row, {}
