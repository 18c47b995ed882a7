"""PyEPO models as spotree decision problems (:func:`from_pyepo`)."""

from __future__ import annotations

import threading
import warnings

import numpy as np

from ._base import CallableProblem, _looks_like_pyepo, _NotPicklable

__all__ = ["from_pyepo", "PyEPOProblem"]

#: PyEPO classes solved by spotree's own solvers (exact class names in
#: pyepo.model.*; subclasses and relaxations such as knapsackModelRel are
#: not, since they may change the feasible set).
_GRID_PATH = ("shortestPathModel", "shortestPathCpModel")
_KNAPSACK = ("knapsackModel", "knapsackCpModel")


def _sense_of(model, source):
    sense = getattr(model, "modelSense", None)
    try:
        value = int(sense)
    except (TypeError, ValueError):
        value = None
    if value == 1:
        return "min"
    if value == -1:
        return "max"
    raise ValueError(f"The 'model' parameter of from_pyepo: {source} has modelSense "
                     f"{sense!r}; expected PyEPO's EPO.MINIMIZE (1) or EPO.MAXIMIZE (-1).")


def _describe(model):
    cls = type(model)
    return f"PyEPO model {cls.__name__} ({cls.__module__})"


def _recipe(model):
    """How to rebuild the model in another process, or None.

    PyEPO models keep their constructor arguments (``to_spec()``, PyEPO >=
    2); user cuts added with ``addConstr`` are replayed on the rebuilt
    model. A model without ``to_spec`` travels as itself when it pickles.
    """
    extras = [(np.asarray(c, dtype=np.float64).copy(), float(r))
              for c, r in getattr(model, "_extra_constrs", None) or []]
    to_spec = getattr(model, "to_spec", None)
    if callable(to_spec):
        try:
            spec = to_spec()
            _dumps(spec)
            return ("spec", spec, extras)
        except Exception:  # a spec holding something unpicklable: try the model
            pass
    try:
        _dumps(model)
        return ("model", model, [])
    except Exception:
        return None


def _dumps(obj):
    try:
        import cloudpickle as dumper
    except ImportError:  # pragma: no cover
        import pickle as dumper
    return dumper.dumps(obj)


class _PyEPOOracle:
    """A picklable per-row oracle over a PyEPO model.

    Holds the live model (dropped on pickling) and a recipe to rebuild it in
    another process. Calls are serialized by a lock: a solver model is not
    safe to share between threads.
    """

    def __init__(self, model, recipe, source):
        self._model = model
        self._lock = threading.Lock()
        self.recipe = recipe
        self.source = source

    def _live(self):
        if self._model is None:
            kind, obj, extras = self.recipe
            model = obj.build() if kind == "spec" else obj
            for coefs, rhs in extras:
                model = model.addConstr(coefs, rhs)
            self._model = model
        return self._model

    def __call__(self, c):
        with self._lock:
            model = self._live()
            try:
                model.setObj(c)
                sol, obj = model.solve()
            except Exception as exc:
                raise ValueError(
                    f"The {self.source} found no optimal solution ({type(exc).__name__}: "
                    f"{exc}). The model is infeasible, or unbounded for this cost vector; "
                    f"check its constraints and variable bounds.") from exc
        try:
            sol = sol.detach().cpu().numpy()  # a torch tensor
        except AttributeError:
            pass
        return np.asarray(sol, dtype=np.float64).reshape(-1), float(obj)

    def _check_recipe(self):
        """Build the model from its to_spec() recipe once, here, before a worker needs it.

        A recipe can pickle and still fail to build: PyEPO's optOrtModel adds
        ``solver`` to the constructor arguments it records, which a subclass
        whose ``__init__`` does not take it refuses. Found here, it gets a
        clear error instead of a TypeError raised in every worker.
        """
        kind, obj, extras = self.recipe
        if kind != "spec" or getattr(self, "_recipe_checked", False):
            return
        try:
            obj.build()
        except Exception as exc:
            raise _NotPicklable(
                f"The {self.source} cannot be sent to another process: rebuilding it from "
                f"its to_spec() recipe fails ({type(exc).__name__}: {exc}); its __init__ "
                f"must accept every argument that its get_config() returns. It can only "
                f"be used in this process: fit with n_jobs=1 (or a threading backend), or "
                f"make __init__ accept them."
            ) from exc
        self._recipe_checked = True

    def __getstate__(self):
        if self.recipe is None:
            raise _NotPicklable(
                f"The {self.source} cannot be sent to another process: it has no to_spec() "
                f"recipe (PyEPO >= 2 provides one) and the model itself cannot be pickled "
                f"(solver handles). It can only be used in this process: fit with "
                f"n_jobs=1 (or a threading backend), or upgrade PyEPO.")
        self._check_recipe()
        state = self.__dict__.copy()
        state["_model"] = None
        del state["_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def __deepcopy__(self, memo):
        # A copy shares nothing mutable with the original but the recipe.
        new = object.__new__(_PyEPOOracle)
        new.recipe, new.source = self.recipe, self.source
        if self.recipe is not None:
            new._model, new._lock = None, threading.Lock()
        else:  # cannot rebuild: share the model, and its lock
            new._model, new._lock = self._model, self._lock
        return new

    def __repr__(self):
        return self.source


class PyEPOProblem(CallableProblem):
    """A PyEPO optimization model as a spotree problem (built by :func:`from_pyepo`).

    Each cost vector is solved by the model's own solver (``setObj`` then
    ``solve``); decisions and values are checked as for any
    :class:`CallableProblem`.
    """

    def __repr__(self):
        return f"from_pyepo({self.oracle.source}, n_costs={self.n_costs}, sense={self.sense!r})"

    def to_dict(self):
        raise NotImplementedError(
            f"A problem wrapping the {self.oracle.source} cannot be written to JSON. Save "
            f"the model without it and pass the problem again when loading.")


def _native(model, sense, source):
    """spotree's own solver for a PyEPO grid shortest path or knapsack, or None."""
    cls = type(model)
    if not (cls.__module__ or "").startswith("pyepo.model."):
        return None
    if getattr(model, "_extra_constrs", None) or getattr(model, "c_pred_index", None) is not None:
        return None
    if cls.__name__ in _GRID_PATH:
        from ._shortest_path import ShortestPath

        rows, cols = model.grid
        # PyEPO numbers node (i, j) as i * cols + j from the source (0, 0) to
        # the sink (rows - 1, cols - 1); its cost columns follow model.arcs.
        return ShortestPath.from_edges(rows * cols, [tuple(a) for a in model.arcs], 0,
                                       rows * cols - 1, sense=sense)
    if cls.__name__ in _KNAPSACK:
        from ._knapsack import Knapsack

        return Knapsack(np.asarray(model.weights, dtype=np.float64),
                        np.asarray(model.capacity, dtype=np.float64).reshape(-1), sense=sense)
    return None


def _agrees(problem, oracle, n_costs, sense):
    """Whether ``problem`` gives the model's own optimal values on a few cost vectors."""
    rng = np.random.default_rng(0)
    C = rng.uniform(0.5, 1.5, size=(3, n_costs))
    _, z = problem.solve(C)
    for c, zi in zip(C, z):
        _, obj = oracle(c)
        if abs(obj - zi) > 1e-6 * (abs(obj) + np.abs(c).sum()):
            return False
    return True


def from_pyepo(model, native=True, n_jobs=None):
    """A PyEPO optimization model as a spotree decision problem.

    Costs are in the model's own column order (the order of its variables,
    as ``setObj`` takes them), and the sense is the model's ``modelSense``.

    - PyEPO's grid shortest path (``shortestPathModel``) and knapsack
      (``knapsackModel``), of any backend, are solved by spotree's own
      compiled solvers (:meth:`ShortestPath.from_edges` on PyEPO's arcs, and
      :class:`Knapsack`), hundreds of times faster than a call to the model
      (per cost vector, with PyEPO's OR-Tools models: 0.5 us against about
      110 us on the 5x5 grid, 2.4 us against 1.5 ms on a 32-item knapsack),
      with the same optimal values; such problems also save to JSON. At
      construction, three random cost vectors are solved both ways; if the
      values disagree (a future PyEPO changing its models), a warning is
      issued and the model's own solver is used.
    - Any other ``optModel`` (duck-typed: ``setObj``, ``solve``,
      ``modelSense``, ``num_cost``) is solved by calling the model, one cost
      vector at a time, with its outputs checked (shape, finite, value equal
      to ``c^T w``). The problem pickles by rebuilding the model from its
      constructor arguments (PyEPO's ``to_spec()``) in each process, so
      forests fit in parallel processes; a model that can be neither rebuilt
      nor pickled runs in this process only, and pickling it raises a
      TypeError that says so. Each solve overwrites the model's objective.

    Parameters
    ----------
    model : pyepo.model.opt.optModel
    native : bool, default=True
        Use spotree's own solver for the models it recognizes; False always
        calls the model.
    n_jobs : int or None, default=None
        For models solved by calling them: solve the rows of a batch in this
        many processes (see :class:`CallableProblem`).

    Returns
    -------
    DecisionProblem
        A :class:`DAGShortestPath`, a :class:`Knapsack` or a
        :class:`PyEPOProblem`.

    Raises
    ------
    TypeError
        If ``model`` does not look like a PyEPO model.
    ValueError
        On solving, if the model has no optimal solution for a cost vector
        (infeasible or unbounded), naming the model.
    """
    if not _looks_like_pyepo(model):
        raise TypeError(f"The 'model' parameter of from_pyepo must be a PyEPO optModel (with "
                        f"setObj, solve, modelSense and num_cost). Got "
                        f"{type(model).__name__} instead.")
    if not isinstance(native, (bool, np.bool_)):
        raise ValueError(f"The 'native' parameter of from_pyepo must be a bool. Got "
                         f"{native!r} instead.")
    source = _describe(model)
    sense = _sense_of(model, source)
    try:
        n_costs = int(model.num_cost)
    except (TypeError, ValueError):
        raise ValueError(f"The 'model' parameter of from_pyepo: {source} has num_cost "
                         f"{model.num_cost!r}; expected a positive int.") from None
    if n_costs < 1:
        raise ValueError(f"The 'model' parameter of from_pyepo: {source} has num_cost "
                         f"{n_costs}; expected a positive int.")
    oracle = _PyEPOOracle(model, _recipe(model), source)
    if native:
        problem = _native(model, sense, source)
        if problem is not None and problem.n_costs == n_costs:
            if _agrees(problem, oracle, n_costs, sense):
                return problem
            warnings.warn(f"spotree's own solver disagrees with the {source} on test cost "
                          f"vectors; using the model's solver instead.", RuntimeWarning,
                          stacklevel=2)
    return PyEPOProblem(oracle, n_costs=n_costs, sense=sense, n_jobs=n_jobs)
