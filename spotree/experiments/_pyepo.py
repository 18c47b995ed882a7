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
Every run also scores the *Bayes floor*: the regret of deciding with the true
conditional mean ``E[c | x]`` of the test rows, which the generators know
(``return_mean=True``). The objective is linear in ``c``, so that decision
minimizes the expected cost given ``x`` and no model has lower expected
regret; a method's excess over the floor is what it can still gain.
"""

from __future__ import annotations

import contextlib
import io
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from ._configs import PYEPO_METHODS

__all__ = ["pyepo_data", "fit_pyepo_method", "run_pyepo", "LeastSquares", "PolynomialRidge",
           "TwoStageMLP", "TwoStageHGB", "PyEPOModel"]


def pyepo_data(run, return_mean=False):
    """``(problem, X_train, C_train, X_test, C_test)`` of a run, and ``E[C_test | X_test]``
    last with ``return_mean``."""
    from ..datasets import make_pyepo_knapsack, make_pyepo_shortest_path
    from ..problems import Knapsack, ShortestPath

    n = run["n_train"] + run["n_test"]
    if run["problem"] == "shortest-path":
        grid = tuple(run["grid"])
        X, C, M = make_pyepo_shortest_path(n, n_features=run["n_features"], grid=grid,
                                           degree=run["degree"], noise=run["noise"],
                                           random_state=run["seed"], return_mean=True)
        problem = ShortestPath(grid)
    elif run["problem"] == "knapsack":
        X, C, weights, M = make_pyepo_knapsack(n, n_items=run["n_items"],
                                               n_resources=run["n_resources"],
                                               n_features=run["n_features"],
                                               degree=run["degree"], noise=run["noise"],
                                               random_state=run["seed"], return_mean=True)
        problem = Knapsack(weights, np.full(run["n_resources"], float(run["capacity"])))
    else:
        raise ValueError(f"unknown PyEPO problem {run['problem']!r}")
    k = run["n_train"]
    out = (problem, X[:k], C[:k], X[k:], C[k:])
    return out + (M[k:],) if return_mean else out


class LeastSquares:
    """Two-stage least squares: one linear regression (with intercept) per cost."""

    def fit(self, X, C):
        A = np.column_stack([X, np.ones(X.shape[0])])
        self.coef_ = np.linalg.lstsq(A, C, rcond=None)[0]
        return self

    def predict(self, X):
        return np.column_stack([X, np.ones(X.shape[0])]) @ self.coef_


class PolynomialRidge:
    """Two-stage ridge regression on polynomial features.

    For each degree up to ``max_degree``: the features' monomials, each
    standardized, and a ridge regression of all costs whose penalty is
    chosen by the leave-one-out error (scikit-learn's ``RidgeCV``, computed
    in closed form). The degree with the lowest leave-one-out error is kept,
    so the capacity follows the data without a held-out part.
    """

    def __init__(self, max_degree=6, alphas=tuple(np.logspace(-4, 4, 17))):
        self.max_degree, self.alphas = max_degree, alphas

    def fit(self, X, C):
        from sklearn.linear_model import RidgeCV
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import PolynomialFeatures, StandardScaler

        best = None
        for degree in range(1, int(self.max_degree) + 1):
            model = make_pipeline(PolynomialFeatures(degree, include_bias=False),
                                  StandardScaler(), RidgeCV(alphas=self.alphas))
            model.fit(X, C)
            score = model[-1].best_score_  # minus the leave-one-out squared error
            if best is None or score > best[0]:
                best = (score, degree, model)
        _, self.degree_, self.model_ = best
        self.alpha_ = float(self.model_[-1].alpha_)
        return self

    def predict(self, X):
        return self.model_.predict(X)


class TwoStageMLP:
    """Two-stage neural network: scikit-learn's ``MLPRegressor`` on standardized
    features and costs (Adam, early stopping on 10% of the rows)."""

    def __init__(self, seed, hidden_layer_sizes=(64, 64), max_iter=500):
        self.seed, self.hidden_layer_sizes, self.max_iter = seed, hidden_layer_sizes, max_iter

    def fit(self, X, C):
        import warnings as _w

        from sklearn.compose import TransformedTargetRegressor
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.neural_network import MLPRegressor
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        net = MLPRegressor(hidden_layer_sizes=tuple(self.hidden_layer_sizes),
                           early_stopping=X.shape[0] >= 50, max_iter=self.max_iter,
                           random_state=self.seed)
        self.model_ = make_pipeline(StandardScaler(), TransformedTargetRegressor(
            net, transformer=StandardScaler()))
        with _w.catch_warnings():
            _w.simplefilter("ignore", ConvergenceWarning)
            self.model_.fit(X, C)
        return self

    def predict(self, X):
        return self.model_.predict(X)


class TwoStageHGB:
    """Two-stage gradient boosting: one scikit-learn ``HistGradientBoostingRegressor``
    per cost (squared error, early stopping on 10% of the rows).

    The estimator predicts one output, so each cost gets its own model.
    Early stopping is on at every size (scikit-learn turns it on by itself
    only above 10000 rows): on PyEPO's shortest path with 1000 rows it was
    the stronger of the two settings at degree 1 (0.179 against 0.189 on
    draws 100 and 101) and alike at degree 6.
    """

    def __init__(self, seed, **params):
        self.seed, self.params = seed, dict(params)

    def fit(self, X, C):
        from sklearn.ensemble import HistGradientBoostingRegressor

        params = dict({"early_stopping": True}, **self.params)
        self.models_ = [HistGradientBoostingRegressor(random_state=self.seed, **params)
                        .fit(X, C[:, j]) for j in range(C.shape[1])]
        return self

    def predict(self, X):
        return np.column_stack([m.predict(X) for m in self.models_])


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


class PyEPOModel:
    """PyEPO's own decision-focused training: SPO+ (``loss="spo+"``) or the
    perturbed Fenchel-Young loss (``loss="pfyl"``, 10 samples, sigma 1) of a
    torch ``nn.Linear`` (``net="linear"``) or of a network with one hidden
    layer of 32 ReLU units (``net="mlp"``); Adam, lr 0.01, batch 32, 20 epochs
    (PyEPO's own tutorial settings)."""

    def __init__(self, problem, seed, loss="spo+", net="linear", epochs=20, lr=0.01,
                 batch_size=32, hidden=32, n_samples=10, sigma=1.0):
        self.problem, self.seed, self.loss, self.net = problem, seed, loss, net
        self.epochs, self.lr, self.batch_size = epochs, lr, batch_size
        self.hidden, self.n_samples, self.sigma = hidden, n_samples, sigma

    def fit(self, X, C):
        from .._compat import import_optional

        what = f"the PyEPO {self.loss} method"
        pyepo = import_optional("pyepo", purpose=what)
        torch = import_optional("torch", purpose=what)
        from torch.utils.data import DataLoader

        from ..problems import ShortestPath

        if self.loss not in ("spo+", "pfyl") or self.net not in ("linear", "mlp"):
            raise ValueError(f"PyEPOModel: loss must be 'spo+' or 'pfyl' and net 'linear' or "
                             f"'mlp'; got {self.loss!r}, {self.net!r}.")
        torch.manual_seed(self.seed)
        # A 5x5 grid has 70 paths; a knapsack's feasible sets are far too many to list.
        vertices = self.problem.vertices() if isinstance(self.problem, ShortestPath) else None
        optmodel = _pyepo_opt_model(self.problem, vertices)
        # PyEPO's notices and progress bars (tqdm writes to stderr) are not ours to show.
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            data = pyepo.data.dataset.optDataset(optmodel, X.astype(np.float32),
                                                 C.astype(np.float32))
        gen = torch.Generator().manual_seed(self.seed)
        loader = DataLoader(data, batch_size=self.batch_size, shuffle=True, generator=gen)
        p, d = X.shape[1], C.shape[1]
        if self.net == "linear":
            self.net_ = torch.nn.Linear(p, d)
        else:
            self.net_ = torch.nn.Sequential(torch.nn.Linear(p, self.hidden), torch.nn.ReLU(),
                                            torch.nn.Linear(self.hidden, d))
        opt = torch.optim.Adam(self.net_.parameters(), lr=self.lr)
        if self.loss == "spo+":
            crit = pyepo.func.SPOPlus(optmodel, processes=1)
        else:
            crit = pyepo.func.perturbedFenchelYoung(optmodel, n_samples=self.n_samples,
                                                    sigma=self.sigma, processes=1,
                                                    seed=self.seed)
        for _ in range(self.epochs):
            for x, c, w, z in loader:
                cp = self.net_(x)
                loss = crit(cp, c, w, z) if self.loss == "spo+" else crit(cp, w)
                opt.zero_grad()
                loss.backward()
                opt.step()
        return self

    def predict(self, X):
        import torch

        with torch.no_grad():
            out = self.net_(torch.tensor(np.asarray(X), dtype=torch.float32))
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
    # Runs carry their model, so a worker fits methods registered in another process.
    kind = run.get("model") or PYEPO_METHODS[run["method"]].model
    params = dict(run["params"] if "params" in run else PYEPO_METHODS[run["method"]].params)
    # One BLAS thread: the products here are small, and several threads per fit only
    # oversubscribe the cores (40x slower ridge fits measured on a loaded 2-core machine).
    with threadpool_limits(limits=1):
        return _fit(kind, params, run, problem, X, C)


def _fit(kind, params, run, problem, X, C):
    from ..boost import SPOBoost
    from ..forest import SPOForest, tune_max_features
    from ..linear_model import SPOPlusLinear
    from ..tree import SPOTree

    seed = int(run["seed"])
    leaf = run["min_samples_leaf"]
    info = {}
    t0 = time.perf_counter()
    if kind == "boost":
        model = SPOBoost(problem, random_state=seed, **params).fit(X, C)
        info.update(rounds=int(model.n_iter_), kept=int(model.best_iteration_))
    elif kind == "forest":
        Xtr, Ctr, Xva, Cva = _validation_split(X, C, run["validation_fraction"])
        template = SPOForest(problem, n_estimators=run["n_estimators"], min_samples_leaf=leaf,
                             n_jobs=1, random_state=seed, **params)
        grid = sorted({min(f, X.shape[1]) for f in run["max_features_grid"]})
        model, res = tune_max_features(template, Xtr, Ctr, Xva, Cva, candidates=grid)
        info.update(max_features=res.best_max_features,
                    val_normalized_spo_loss=float(res.val_loss[res.best_index]))
    elif kind == "tree":
        Xtr, Ctr, Xva, Cva = _validation_split(X, C, run["validation_fraction"])
        model = SPOTree(problem, min_samples_leaf=leaf, random_state=seed, **params)
        model = model.fit(Xtr, Ctr).prune(Xva, Cva)
        info.update(n_leaves=int(model.get_n_leaves()), fitted_depth=int(model.get_depth()))
    elif kind == "linear":
        model = SPOPlusLinear(problem, random_state=seed, **params).fit(X, C)
    elif kind == "linear-conv":
        # "Trained to convergence": many more epochs, then smaller steps.
        model = SPOPlusLinear(problem, max_iter=100, random_state=seed, **params).fit(X, C)
        model = model.set_params(warm_start=True, learning_rate=0.001, max_iter=50).fit(X, C)
    elif kind == "least-squares":
        model = LeastSquares().fit(X, C)
    elif kind == "poly-ridge":
        model = PolynomialRidge(**params).fit(X, C)
        info.update(poly_degree=model.degree_, ridge_alpha=model.alpha_)
    elif kind == "mlp":
        model = TwoStageMLP(seed, **params).fit(X, C)
    elif kind == "hgb":
        model = TwoStageHGB(seed, **params).fit(X, C)
        info.update(rounds=int(np.mean([m.n_iter_ for m in model.models_])))
    elif kind == "pyepo":
        model = PyEPOModel(problem, seed, **params).fit(X, C)
    else:
        raise ValueError(f"unknown PyEPO method model {kind!r}")
    return model, time.perf_counter() - t0, info


def run_pyepo(run, data=None):
    """One run: ``(row, extra)`` for the experiment runner; ``row`` holds the test
    normalized regret (``normalized_spo_loss``), the Bayes floor of the same test
    rows (``bayes_floor``), the fit time and the fit's info."""
    from ..metrics import normalized_spo_loss

    problem, X, C, Xt, Ct, Mt = pyepo_data(run, return_mean=True)
    model, secs, info = fit_pyepo_method(run, problem, X, C)
    regret = normalized_spo_loss(Ct, model.predict(Xt), problem=problem)
    floor = normalized_spo_loss(Ct, Mt, problem=problem)
    return dict(normalized_spo_loss=float(regret), bayes_floor=float(floor), fit_time=secs,
                **info), {}
