"""One run of the PyEPO comparison (``spotree reproduce pyepo``): data, fit, regret.

The data are PyEPO's: :func:`~spotree.datasets.make_pyepo_shortest_path`
(5x5 grid) and :func:`~spotree.datasets.make_pyepo_knapsack` (32 items, 2
resources of capacity 20) draw ``n_train + n_test`` rows with
``random_state=seed`` exactly as PyEPO's ``genData(..., seed=seed)`` does;
the first ``n_train`` rows train, the rest test. Methods that tune or prune
(forests, the tree) hold out the first ``validation_fraction`` of the
training rows; the others (boosting keeps its own early-stopping split) fit
on all of them. Every method and data draw is seeded, so a run is
deterministic up to its fit time.

The score is the test normalized regret, PyEPO's name for the normalized SPO
loss: ``sum(regret) / sum(|z*|)`` (:func:`spotree.metrics.normalized_spo_loss`).
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from ._configs import PYEPO_METHODS

__all__ = ["pyepo_data", "fit_pyepo_method", "run_pyepo", "LeastSquares"]


def pyepo_data(run):
    """``(problem, X_train, C_train, X_test, C_test)`` of a run."""
    from ..datasets import make_pyepo_knapsack, make_pyepo_shortest_path
    from ..problems import Knapsack, ShortestPath

    n = run["n_train"] + run["n_test"]
    if run["problem"] == "shortest-path":
        grid = tuple(run["grid"])
        X, C = make_pyepo_shortest_path(n, n_features=run["n_features"], grid=grid,
                                        degree=run["degree"], noise=run["noise"],
                                        random_state=run["seed"])
        problem = ShortestPath(grid)
    elif run["problem"] == "knapsack":
        X, C, weights = make_pyepo_knapsack(n, n_items=run["n_items"],
                                            n_resources=run["n_resources"],
                                            n_features=run["n_features"], degree=run["degree"],
                                            noise=run["noise"], random_state=run["seed"])
        problem = Knapsack(weights, np.full(run["n_resources"], float(run["capacity"])))
    else:
        raise ValueError(f"unknown PyEPO problem {run['problem']!r}")
    k = run["n_train"]
    return problem, X[:k], C[:k], X[k:], C[k:]


class LeastSquares:
    """Two-stage least squares: one linear regression (with intercept) per cost."""

    def fit(self, X, C):
        A = np.column_stack([X, np.ones(X.shape[0])])
        self.coef_ = np.linalg.lstsq(A, C, rcond=None)[0]
        return self

    def predict(self, X):
        return np.column_stack([X, np.ones(X.shape[0])]) @ self.coef_


def _validation_split(X, C, fraction):
    """The first ``fraction`` of the rows validate, the rest train (as paper 5.1)."""
    n_val = max(1, int(round(fraction * X.shape[0])))
    return X[n_val:], C[n_val:], X[:n_val], C[:n_val]


def _pyepo_opt_model(problem, vertices=None):
    """A PyEPO ``optModel`` whose solves are spotree's (exact, in the problem's own
    column order). PyEPO solves one cost vector per call: with ``vertices`` (all
    feasible decisions, a short list) a product with them is much cheaper than a
    solver call."""
    from pyepo import EPO
    from pyepo.model.opt import optModel

    class SpotreeOptModel(optModel):
        # PyEPO reads an attribute named "problem" as its own modelling object.
        def __init__(self, spotree_problem):
            self.spotree_problem = spotree_problem
            self.modelSense = EPO.MINIMIZE if spotree_problem.sense == "min" else EPO.MAXIMIZE
            self._V = None if vertices is None else np.asarray(vertices, dtype=np.float64)
            super().__init__()

        def get_config(self):
            return {"problem": self.spotree_problem}

        def _getModel(self):
            return None, list(range(self.spotree_problem.n_costs))

        def setObj(self, c):
            self._c = np.asarray(c, dtype=np.float64).reshape(1, -1)

        def solve(self):
            if self._V is not None:
                z = self._V @ self._c[0]
                k = int(np.argmin(z) if self.spotree_problem.sense == "min" else np.argmax(z))
                return self._V[k].copy(), float(z[k])
            W, z = self.spotree_problem.solve(self._c)
            return W[0], float(z[0])

    return SpotreeOptModel(problem)


class PyEPOSPOPlus:
    """PyEPO's SPO+ on a torch ``nn.Linear``: Adam, lr 0.01, batch 32, 20 epochs
    (PyEPO's own tutorial settings)."""

    def __init__(self, problem, seed, epochs=20, lr=0.01, batch_size=32):
        self.problem, self.seed = problem, seed
        self.epochs, self.lr, self.batch_size = epochs, lr, batch_size

    def fit(self, X, C):
        from .._compat import import_optional

        pyepo = import_optional("pyepo", purpose="the 'PyEPO SPO+' method")
        torch = import_optional("torch", purpose="the 'PyEPO SPO+' method")
        from torch.utils.data import DataLoader

        from ..problems import ShortestPath

        torch.manual_seed(self.seed)
        # A 5x5 grid has 70 paths; a knapsack's feasible sets are far too many to list.
        vertices = self.problem.vertices() if isinstance(self.problem, ShortestPath) else None
        optmodel = _pyepo_opt_model(self.problem, vertices)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyEPO's progress bars and notices
            data = pyepo.data.dataset.optDataset(optmodel, X.astype(np.float32),
                                                 C.astype(np.float32))
        loader = DataLoader(data, batch_size=self.batch_size, shuffle=True)
        self.linear_ = torch.nn.Linear(X.shape[1], C.shape[1])
        opt = torch.optim.Adam(self.linear_.parameters(), lr=self.lr)
        spop = pyepo.func.SPOPlus(optmodel, processes=1)
        for _ in range(self.epochs):
            for x, c, w, z in loader:
                loss = spop(self.linear_(x), c, w, z)
                opt.zero_grad()
                loss.backward()
                opt.step()
        return self

    def predict(self, X):
        import torch

        with torch.no_grad():
            out = self.linear_(torch.tensor(np.asarray(X), dtype=torch.float32))
        return out.numpy().astype(np.float64)


def fit_pyepo_method(run, problem, X, C):
    """Fit the run's method on the training rows.

    Returns
    -------
    model : object with ``predict(X) -> costs``
    seconds : float
        Wall time of the fit (validation and tuning included).
    info : dict
        What the fit chose: leaves of the tree, ``max_features`` of a
        forest, boosting rounds run and kept.
    """
    from ..boost import SPOBoost
    from ..forest import SPOForest, tune_max_features
    from ..linear_model import SPOPlusLinear
    from ..tree import SPOTree

    method = PYEPO_METHODS[run["method"]]
    params = dict(run.get("params", method.params))
    seed = int(run["seed"])
    leaf = run["min_samples_leaf"]
    info = {}
    t0 = time.perf_counter()
    if method.model == "boost":
        model = SPOBoost(problem, random_state=seed, **params).fit(X, C)
        info.update(rounds=int(model.n_iter_), kept=int(model.best_iteration_))
    elif method.model == "forest":
        Xtr, Ctr, Xva, Cva = _validation_split(X, C, run["validation_fraction"])
        template = SPOForest(problem, n_estimators=run["n_estimators"], min_samples_leaf=leaf,
                             n_jobs=1, random_state=seed, **params)
        grid = sorted({min(f, X.shape[1]) for f in run["max_features_grid"]})
        model, res = tune_max_features(template, Xtr, Ctr, Xva, Cva, candidates=grid)
        info.update(max_features=res.best_max_features,
                    val_normalized_spo_loss=float(res.val_loss[res.best_index]))
    elif method.model == "tree":
        Xtr, Ctr, Xva, Cva = _validation_split(X, C, run["validation_fraction"])
        model = SPOTree(problem, min_samples_leaf=leaf, random_state=seed, **params)
        model = model.fit(Xtr, Ctr).prune(Xva, Cva)
        info.update(n_leaves=int(model.get_n_leaves()), fitted_depth=int(model.get_depth()))
    elif method.model == "linear":
        model = SPOPlusLinear(problem, random_state=seed, **params).fit(X, C)
    elif method.model == "linear-conv":
        # "Trained to convergence": many more epochs, then smaller steps.
        model = SPOPlusLinear(problem, max_iter=100, random_state=seed, **params).fit(X, C)
        model = model.set_params(warm_start=True, learning_rate=0.001, max_iter=50).fit(X, C)
    elif method.model == "least-squares":
        model = LeastSquares().fit(X, C)
    elif method.model == "pyepo":
        model = PyEPOSPOPlus(problem, seed, **params).fit(X, C)
    else:  # pragma: no cover - PYEPO_METHODS is checked by the tests
        raise ValueError(f"unknown PyEPO method model {method.model!r}")
    return model, time.perf_counter() - t0, info


def run_pyepo(run, data=None):
    """One run: ``(row, extra)`` for the experiment runner; ``row`` holds the test
    normalized regret (``normalized_spo_loss``), the fit time and the fit's info."""
    from ..metrics import normalized_spo_loss

    problem, X, C, Xt, Ct = pyepo_data(run)
    model, secs, info = fit_pyepo_method(run, problem, X, C)
    regret = normalized_spo_loss(Ct, model.predict(Xt), problem=problem)
    return dict(normalized_spo_loss=float(regret), fit_time=secs, **info), {}
