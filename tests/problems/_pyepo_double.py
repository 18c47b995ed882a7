"""A test double of PyEPO's model interface, so that ``from_pyepo`` runs in CI.

CI installs neither PyEPO nor torch. This module imitates the part of
PyEPO's ``optModel`` interface that ``spotree.problems.from_pyepo`` relies
on, as PyEPO 2 documents and behaves (checked against pyepo 2.2.7):

- ``modelSense``: an int enum, 1 to minimize and -1 to maximize;
- ``num_cost``: the number of cost columns;
- ``setObj(c)`` then ``solve()`` -> ``(solution as float32 array, value)``;
  an infeasible model raises from ``solve``;
- ``to_spec()`` -> an object whose ``build()`` makes a fresh model;
- ``addConstr(coefs, rhs)`` -> a new model with the cut ``coefs @ w <= rhs``,
  the cuts listed in ``_extra_constrs``; ``relax()`` -> the LP relaxation,
  a class of its own (``knapsackModelRel``) that keeps the cuts;
- ``c_pred_index``: None (every variable has a predicted cost);
- the grid shortest path: ``grid``, and ``arcs`` in PyEPO's order (for each
  row, its east arcs, then the arcs to the next row), the node of
  (row i, column j) numbered ``i * cols + j``, from node 0 to the last;
- the knapsack: ``weights`` of shape (dim, n_items), ``capacity`` (dim,).

Each model is solved as a backend does it: its formulation (the flow LP of
the grid, the knapsack MILP) handed to a generic solver, here
``scipy.optimize.milp``, which shares no code with spotree's own solvers.

``from_pyepo`` uses its own solvers only for classes defined in PyEPO's
``pyepo.model`` package, so the two model classes that stand for PyEPO's
say they live in ``pyepo.model.double`` (``__module__``); nothing is
registered under that name. The rebuild recipe refers to this module's
functions, so it pickles.
"""

import enum

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp


class ModelSense(enum.IntEnum):
    MINIMIZE = 1
    MAXIMIZE = -1


class Spec:
    """The constructor arguments of a model, and how to build it again."""

    def __init__(self, kind, args):
        self.kind, self.args = kind, args

    def build(self):
        return _KINDS[self.kind](*self.args)


class _Model:
    """What the double's models share (PyEPO's optModel, in outline)."""

    modelSense = ModelSense.MINIMIZE
    integral = True

    def __init__(self):
        self._extra_constrs = []
        self._c = None
        # Built once, as PyEPO builds its solver model in the constructor:
        # later changes to attributes such as ``arcs`` do not reach it.
        self._model = self._constraints()

    @property
    def c_pred_index(self):
        return None

    def setObj(self, c):
        c = np.asarray(c, dtype=np.float64).reshape(-1)
        if c.shape != (self.num_cost,):
            raise ValueError(f"cost vector of length {c.size}; the model has "
                             f"{self.num_cost} variables")
        self._c = c

    def _constraints(self):
        """(A_eq, b_eq, A_ub, b_ub) of the formulation, without the cuts."""
        raise NotImplementedError

    def solve(self):
        A_eq, b_eq, A_ub, b_ub = self._model
        cons = []
        if A_eq is not None:
            cons.append(LinearConstraint(A_eq, b_eq, b_eq))
        if A_ub is not None:
            cons.append(LinearConstraint(A_ub, -np.inf, b_ub))
        for coefs, rhs in self._extra_constrs:
            cons.append(LinearConstraint(coefs[None, :], -np.inf, rhs))
        n = self.num_cost
        res = milp(int(self.modelSense) * self._c, constraints=cons,
                   integrality=np.full(n, int(self.integral)), bounds=Bounds(0.0, 1.0))
        if res.status != 0 or res.x is None:
            raise RuntimeError(f"the solver found no optimal solution: {res.message}")
        w = np.round(res.x, 9) if self.integral else res.x
        return w.astype(np.float32), float(self._c @ res.x)

    def _spec_args(self):
        raise NotImplementedError

    def to_spec(self):
        return Spec(self._kind, self._spec_args())

    def copy(self):
        new = self.to_spec().build()
        new._extra_constrs = [(c.copy(), r) for c, r in self._extra_constrs]
        return new

    def addConstr(self, coefs, rhs):
        coefs = np.asarray(coefs, dtype=np.float64).reshape(-1)
        if coefs.shape != (self.num_cost,):
            raise ValueError("coefs must have one entry per variable")
        new = self.copy()
        new._extra_constrs.append((coefs, float(rhs)))
        return new


class shortestPathModel(_Model):  # noqa: N801 (PyEPO's class name)
    """The grid shortest path as PyEPO states it: a unit flow from corner to corner."""

    _kind = "shortest_path"

    def __init__(self, grid):
        rows, cols = grid
        self.grid = (int(rows), int(cols))
        self.arcs = []
        for i in range(rows):
            for j in range(cols - 1):
                self.arcs.append((i * cols + j, i * cols + j + 1))
            if i < rows - 1:
                for j in range(cols):
                    self.arcs.append((i * cols + j, (i + 1) * cols + j))
        super().__init__()

    @property
    def num_cost(self):
        return len(self.arcs)

    def _spec_args(self):
        return (self.grid,)

    def _constraints(self):
        rows, cols = self.grid
        n_nodes = rows * cols
        A = np.zeros((n_nodes, len(self.arcs)))
        for e, (u, v) in enumerate(self.arcs):
            A[u, e] -= 1.0  # flow in minus flow out
            A[v, e] += 1.0
        b = np.zeros(n_nodes)
        b[0], b[-1] = -1.0, 1.0
        return A, b, None, None

    def relax(self):
        raise NotImplementedError("the flow LP is already a relaxation")


class knapsackModel(_Model):  # noqa: N801
    """max c @ w over 0/1 w with weights @ w <= capacity."""

    _kind = "knapsack"
    modelSense = ModelSense.MAXIMIZE

    def __init__(self, weights, capacity):
        self.weights = np.asarray(weights, dtype=np.float64)
        self.capacity = np.asarray(capacity, dtype=np.float64).reshape(-1)
        self.items = list(range(self.weights.shape[1]))
        super().__init__()

    @property
    def num_cost(self):
        return len(self.items)

    def _spec_args(self):
        return (self.weights.copy(), self.capacity.copy())

    def _constraints(self):
        return None, None, self.weights, self.capacity

    def relax(self):
        rel = knapsackModelRel(self.weights, self.capacity)
        for coefs, rhs in self._extra_constrs:
            rel = rel.addConstr(coefs, rhs)
        return rel


class knapsackModelRel(knapsackModel):  # noqa: N801
    """The knapsack's LP relaxation (0 <= w <= 1)."""

    _kind = "knapsack_relaxed"
    integral = False

    def relax(self):
        raise RuntimeError("Model has already been relaxed.")


for _cls in (shortestPathModel, knapsackModel, knapsackModelRel):
    _cls.__module__ = "pyepo.model.double"

_KINDS = {"shortest_path": shortestPathModel, "knapsack": knapsackModel,
          "knapsack_relaxed": knapsackModelRel}
