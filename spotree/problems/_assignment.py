"""The linear assignment problem: agents to tasks, one each, solved exactly per cost vector."""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from ._base import DecisionProblem, _check_sense, null_space_basis
from ._compiled import assignment_oracle, solve_rows

__all__ = ["Assignment"]


def _check_count(value, name):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"The '{name}' parameter of Assignment must be an int in the range "
                         f"[1, inf). Got {value!r} instead.")
    return int(value)


def _check_allowed(allowed, shape):
    """``allowed`` as a boolean array of ``shape`` (True: the pair may be chosen)."""
    try:
        with warnings.catch_warnings():
            # numpy < 1.24 makes a ragged list a 1-D array of lists (with a
            # VisibleDeprecationWarning) instead of raising: refused below.
            warnings.simplefilter("ignore")
            arr = np.array(allowed)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.dtype == object or not (arr.dtype == bool or
                                                    np.issubdtype(arr.dtype, np.number)):
        raise ValueError(f"The 'allowed' parameter of Assignment must be None or an array "
                         f"of booleans of shape {shape} (n_agents, n_tasks). Got "
                         f"{type(allowed).__name__} instead.")
    if arr.shape != shape:
        raise ValueError(f"The 'allowed' parameter of Assignment must have shape {shape} "
                         f"(n_agents, n_tasks). Got an array of shape {arr.shape} instead.")
    if arr.dtype != bool:
        # 0/1 are accepted (a mask read from a CSV); 0.5 or NaN are no answer.
        bad = ~np.isin(arr, (0, 1))
        if bad.any():
            i, j = (int(k) for k in np.argwhere(bad)[0])
            raise ValueError(f"The 'allowed' parameter of Assignment must hold booleans (or "
                             f"0/1). Got {arr[i, j].item()!r} at index ({i}, {j}) instead.")
        arr = arr == 1
    return np.ascontiguousarray(arr, dtype=bool)


def _check_names(names, name, count):
    """``names`` as a list of ``count`` distinct non-empty strings (or None)."""
    if names is None:
        return None
    if isinstance(names, str) or not hasattr(names, "__len__"):
        raise ValueError(f"The '{name}' parameter of Assignment must be None or a list of "
                         f"{count} strings. Got {type(names).__name__} instead.")
    names = list(names)
    if len(names) != count:
        raise ValueError(f"The '{name}' parameter of Assignment must have {count} entries "
                         f"(one per {name.split('_')[0]}). Got {len(names)} instead.")
    for k, x in enumerate(names):
        if not isinstance(x, str) or not x:
            raise ValueError(f"The '{name}' parameter of Assignment must hold non-empty "
                             f"strings. Got {x!r} at index {k} instead.")
    if len(set(names)) < count:
        dup = next(x for k, x in enumerate(names) if x in names[:k])
        raise ValueError(f"The '{name}' parameter of Assignment has duplicate names: "
                         f"{dup!r}.")
    return names


class Assignment(DecisionProblem):
    """Linear assignment: give each agent one task (drivers to jobs, nurses to shifts).

    The decision ``x[i, j]`` in ``{0, 1}`` says whether agent ``i`` does task
    ``j``; it is flattened in C order, so the cost vector's column
    ``i * n_tasks + j`` is the cost of agent ``i`` doing task ``j``, and
    :attr:`variable_names` names it ``"agent{i}->task{j}"`` (or with the
    names given in ``agent_names`` and ``task_names``). The feasible set
    depends on the shape:

    - ``n_agents == n_tasks``: every agent does exactly one task and every
      task is done by exactly one agent (``x`` is a permutation matrix);
    - ``n_agents < n_tasks``: every agent does exactly one task and every
      task is done by at most one agent (some tasks stay undone);
    - ``n_agents > n_tasks``: every task is done by exactly one agent and
      every agent does at most one task (some agents stay idle).

    In each case ``min(n_agents, n_tasks)`` pairs are chosen. ``allowed``
    forbids pairs (a nurse who cannot work a shift): their ``x[i, j]`` is
    always 0, and their costs are ignored.

    Every cost vector is solved exactly by shortest augmenting paths with
    potentials (the Hungarian method in Jonker and Volgenant's form,
    ``O(k^2 K)`` for ``k <= K`` the two sides), in compiled code: 1 to 3
    microseconds per row of a batch of 5x5 instances, 200 to 500 times
    faster than the same problem as a :class:`LinearProgram` (HiGHS), and 10
    to 15 at 10x10 (60 to 100 times; ``benchmarks/bench_problems.py``); from
    50x50 on, 1 to 2 times the time of
    :func:`scipy.optimize.linear_sum_assignment`, which breaks ties its own
    way. A tree's split search solves its candidates with the same compiled
    solver when the problem has too many assignments to list (see Notes).

    **Ties** among optimal assignments: every method returns the
    lexicographically first one, reading the tasks of agents 0, 1, ... (the
    agents of tasks 0, 1, ... when ``n_agents > n_tasks``), which is the
    first optimal one in :meth:`vertices`'s order. So :meth:`solve` (any
    size, any batch), :meth:`solve_vertices` and a tree's split search give
    one decision for one cost vector, and the SPO loss, which charges the
    decision taken, does not depend on the path. This holds exactly when
    the costs' sums are exact in floating point (integers, or multiples of
    one power of two, of moderate size); otherwise rounding decides between
    assignments whose totals differ by about its size.

    Parameters
    ----------
    n_agents : int
        Number of agents (rows of ``x``), at least 1.
    n_tasks : int or None, default=None
        Number of tasks (columns of ``x``); None means ``n_agents`` (a square
        problem).
    sense : {"min", "max"}, default="min"
        ``"min"``: the costs are costs (minimize the total); ``"max"``: they
        are values or preferences (maximize the total).
    allowed : array-like of bool of shape (n_agents, n_tasks) or None, default=None
        Which pairs may be chosen (0/1 accepted); None allows every pair. At
        least one feasible assignment must remain (``min(n_agents, n_tasks)``
        pairs, no agent or task used twice), otherwise a ValueError is raised.
    agent_names, task_names : list of str or None, default=None
        Distinct names of the agents and of the tasks (``["Ann", "Bob"]``,
        ``["night", "day"]``), used by :attr:`variable_names` and
        :meth:`describe_decision` (``"Ann->night"``); None means ``agent0``,
        ``agent1``, ... and ``task0``, ``task1``, ...

    Attributes
    ----------
    n_costs : int
        ``n_agents * n_tasks``.
    n_agents, n_tasks : int
    allowed : ndarray of bool of shape (n_agents, n_tasks) or None
    agent_names, task_names : list of str or None
    variable_names : list of str
        ``"agent{i}->task{j}"`` (``"{agent_names[i]}->{task_names[j]}"``)
        per cost column, in cost order: a pandas
        DataFrame of costs with these columns in another order is refused
        instead of being read by position.

    Notes
    -----
    :meth:`vertices` lists every feasible assignment while there are at most
    ``max_vertices`` (5,000) of them: square problems up to 6x6 (720
    permutations), 4 agents and 8 tasks (1,680). The list is in
    lexicographic order of the tasks of agents 0, 1, ... (of the agents of
    tasks 0, 1, ... when ``n_agents > n_tasks``); the identity comes first.
    A fitted tree scores its splits with ``G = C V^T`` over this list when
    it is short, and with the compiled solver otherwise (4x8 and from 7x7
    on); neither calls the oracle (``n_oracle_calls_`` is 0).

    Examples
    --------
    Three drivers, three jobs: ``C[i * 3 + j]`` is driver ``i``'s time for job ``j``.

    >>> from spotree.problems import Assignment
    >>> drivers = Assignment(3)
    >>> C = [[4.0, 1.0, 3.0,
    ...       2.0, 0.0, 5.0,
    ...       3.0, 2.0, 2.0]]
    >>> W, z = drivers.solve(C)
    >>> W.reshape(3, 3)
    array([[0., 1., 0.],
           [1., 0., 0.],
           [0., 0., 1.]])
    >>> z
    array([5.])
    >>> drivers.describe_decision(W[0])
    'agent0->task1, agent1->task0, agent2->task2'
    >>> len(drivers.vertices())          # 3! permutations
    6
    """

    # The compiled solver with scratch of its own per call (see solve_is_thread_safe).
    _thread_safe_solve = True

    agent_names = None
    task_names = None

    def __init__(self, n_agents, n_tasks=None, *, sense="min", allowed=None,
                 agent_names=None, task_names=None):
        n_agents = _check_count(n_agents, "n_agents")
        n_tasks = n_agents if n_tasks is None else _check_count(n_tasks, "n_tasks")
        self.n_agents = n_agents
        self.n_tasks = n_tasks
        self.sense = _check_sense(sense)
        self.n_costs = n_agents * n_tasks
        self.allowed = None
        if allowed is not None:
            mask = _check_allowed(allowed, (n_agents, n_tasks))
            self._check_feasible(mask)
            # All pairs allowed is the same problem as no mask: one spelling.
            self.allowed = None if mask.all() else mask
        self.agent_names = _check_names(agent_names, "agent_names", n_agents)
        self.task_names = _check_names(task_names, "task_names", n_tasks)
        if agent_names is not None or task_names is not None:
            self.variable_names  # refuse colliding names now, not at the first DataFrame

    @property
    def variable_names(self):
        """``"agent{i}->task{j}"`` per cost column, in cost order (built on first use)."""
        # Lazily: a 1000x1000 problem's million names took 0.5 s and 170 MB
        # at construction, and most problems never need them.
        names = self.__dict__.get("_names")
        if names is None:
            agents = self.agent_names or [f"agent{i}" for i in range(self.n_agents)]
            tasks = self.task_names or [f"task{j}" for j in range(self.n_tasks)]
            names = [f"{a}->{t}" for a in agents for t in tasks]
            if len(set(names)) < len(names):
                # "a->b" + "c" and "a" + "b->c": names that collide would
                # let a DataFrame's columns be paired with the wrong pairs.
                raise ValueError("The 'agent_names' and 'task_names' of Assignment give two "
                                 "pairs the same name 'agent->task'; avoid '->' in names.")
            self._names = names
        return names

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_names", None)  # rebuilt on demand
        return state

    @staticmethod
    def _check_feasible(mask):
        from scipy.optimize import linear_sum_assignment

        # The largest number of allowed pairs with no agent or task twice.
        r, c = linear_sum_assignment(mask, maximize=True)
        matched = int(mask[r, c].sum())
        need = min(mask.shape)
        if matched < need:
            hint = ""
            n, m = mask.shape
            idle_agents = np.flatnonzero(~mask.any(axis=1)) if n <= m else np.zeros(0)
            idle_tasks = np.flatnonzero(~mask.any(axis=0)) if n >= m else np.zeros(0)
            if idle_agents.size:
                hint = f" (agent {int(idle_agents[0])} has no allowed task)"
            elif idle_tasks.size:
                hint = f" (task {int(idle_tasks[0])} has no allowed agent)"
            raise ValueError(f"The 'allowed' parameter of Assignment leaves no feasible "
                             f"assignment: at most {matched} of the {need} required pairs can "
                             f"be chosen with no agent or task used twice{hint}.")

    # -------------------------------------------------------------- solve
    def compiled_oracle(self):
        """The compiled Hungarian method (:func:`._compiled.assignment_oracle`)."""
        return assignment_oracle(self.n_agents, self.n_tasks, self.allowed)

    def _solve(self, C):
        # Every size goes to the compiled solver (not scipy's above 20x20, as
        # before): one tie rule for solve, the vertex list and the tree.
        Cm = C if self.sense == "min" else -C
        W = np.zeros_like(C)
        z = solve_rows(self.compiled_oracle(), Cm, W)
        if np.isnan(z).any():  # pragma: no cover - the constructor refuses infeasible masks
            raise RuntimeError("Assignment: the compiled solver found no feasible assignment.")
        return W, np.einsum("ij,ij->i", C, W)

    # ----------------------------------------------------------- vertices
    def n_assignments(self):
        """The number of feasible assignments (without ``allowed``: ``max! / (max - min)!``).

        With ``allowed`` it is counted by enumeration only when that stays
        small; otherwise None.
        """
        k, big = sorted((self.n_agents, self.n_tasks))
        if self.allowed is None:
            return math.perm(big, k)
        V = self._enumerate(limit=None if math.perm(big, k) <= self.max_vertices
                            else 20 * self.max_vertices)
        return None if V is None else V.shape[0]

    def _enumerate(self, limit):
        """Every feasible assignment as rows of ``x`` flattened; None past ``limit`` of them.

        Depth first over the smaller side, each member's partners in
        increasing order: the rows come in lexicographic order.
        """
        n, m = self.n_agents, self.n_tasks
        mask = np.ones((n, m), dtype=bool) if self.allowed is None else self.allowed
        transposed = n > m
        if transposed:
            mask = mask.T
        k, big = mask.shape
        partners = [np.flatnonzero(mask[i]).tolist() for i in range(k)]
        out = []
        # Each partial assignment is a tuple of partners; a stack of its own
        # (pushed in reverse, so that the smallest partner is explored first).
        stack = [()]
        nodes = 0
        while stack:
            part = stack.pop()
            nodes += 1
            if limit is not None and nodes > 20 * limit:
                return None  # a mask with many dead ends: give up
            i = len(part)
            if i == k:
                out.append(part)
                if limit is not None and len(out) > limit:
                    return None
                continue
            used = set(part)
            for j in reversed(partners[i]):
                if j not in used:
                    stack.append(part + (j,))
        P = np.array(out, dtype=np.intp).reshape(len(out), k)
        X = np.zeros((len(out), k, big))
        X[np.arange(len(out))[:, None], np.arange(k)[None, :], P] = 1.0
        if transposed:
            X = X.transpose(0, 2, 1)
        return X.reshape(len(out), n * m)

    def _vertices(self):
        """Every feasible assignment, when there are at most ``max_vertices``."""
        k, big = sorted((self.n_agents, self.n_tasks))
        if self.allowed is None and math.perm(big, k) > self.max_vertices:
            return None
        return self._enumerate(self.max_vertices)

    def _difference_basis(self):
        V = self.vertices()
        if V is not None:
            return super()._difference_basis()
        # Decisions differ only on allowed pairs, and every decision has the
        # same row sums (n_agents <= n_tasks) and/or column sums (>=), so
        # their differences lie in the null space of those sums.
        n, m = self.n_agents, self.n_tasks
        keep = (np.ones(self.n_costs, dtype=bool) if self.allowed is None
                else self.allowed.reshape(-1))
        rows = []
        if n <= m:
            rows.append(np.kron(np.eye(n), np.ones((1, m))))
        if n >= m:
            rows.append(np.kron(np.ones((1, n)), np.eye(m)))
        A = np.vstack(rows)[:, keep]
        N = null_space_basis(A)
        B = np.zeros((self.n_costs, N.shape[1]))
        B[keep] = N
        return B

    # ------------------------------------------------------------ helpers
    def cost_shape_hint(self, shape, name="C"):
        """How to flatten costs given as agents-by-tasks matrices (see the base class).

        Cost column ``i * n_tasks + j`` is agent ``i`` doing task ``j``: a
        stack of ``(n_agents, n_tasks)`` matrices is flattened row-major,
        agent by agent, by ``C.reshape(len(C), -1)``.
        """
        n, m = self.n_agents, self.n_tasks
        shape = tuple(int(s) for s in shape)
        layout = (f"{type(self).__name__} reads one row of n_agents * n_tasks = {n * m} "
                  f"costs per sample, agent by agent (column i * {m} + j: agent i, task j)")
        if len(shape) == 3 and shape[1:] == (n, m):
            return (f"{layout}: for {name} of shape (n_samples, n_agents, n_tasks), pass "
                    f"{name}.reshape({name}.shape[0], -1).")
        if len(shape) == 3 and shape[1:] == (m, n):
            return (f"{layout}; {name} looks like (n_samples, n_tasks, n_agents): pass "
                    f"{name}.transpose(0, 2, 1).reshape({name}.shape[0], -1).")
        if len(shape) == 2 and shape == (n, m):
            return (f"{layout}: for one cost matrix of shape (n_agents, n_tasks), pass "
                    f"{name}.reshape(1, -1).")
        if len(shape) == 3:
            return (f"{layout}; a stack of cost matrices must have shape (n_samples, {n}, "
                    f"{m}) and is flattened by {name}.reshape({name}.shape[0], -1).")
        return None

    def to_linear_program(self, **kwargs):
        """The same problem as a :class:`LinearProgram` (the textbook formulation).

        One equality row per member of the side that is matched in full (the
        agents when ``n_agents <= n_tasks``, else the tasks; both sides when
        square), one ``<= 1`` row per member of the other side when it is
        larger, and bounds ``0 <= x <= 1`` (``x = 0`` for forbidden pairs). Its constraint matrix is
        totally unimodular, so its vertices are the assignments and no
        integrality is needed. Far slower to solve than this class (HiGHS
        per row); useful to hand the problem to code that reads linear
        constraints (``OptimalSPOTree(method="milp")``) or to another
        solver.

        Parameters
        ----------
        **kwargs
            Further arguments of :class:`LinearProgram` (``basis_cache``).

        Returns
        -------
        LinearProgram
        """
        from ._linear import LinearProgram

        n, m = self.n_agents, self.n_tasks
        per_agent = np.kron(np.eye(n), np.ones((1, m)))
        per_task = np.kron(np.ones((1, n)), np.eye(m))
        if n == m:
            full, other = np.vstack([per_agent, per_task]), None
        else:
            full, other = (per_agent, per_task) if n < m else (per_task, per_agent)
        ub = (np.ones(self.n_costs) if self.allowed is None
              else self.allowed.reshape(-1).astype(np.float64))
        args = dict(A_eq=full, b_eq=np.ones(full.shape[0]),
                    bounds=[(0.0, float(u)) for u in ub], sense=self.sense,
                    variable_names=list(self.variable_names))
        if other is not None:
            args.update(A_ub=other, b_ub=np.ones(other.shape[0]))
        return LinearProgram(**args, **kwargs)

    def describe_decision(self, w):
        """``"agent0->task2, agent1->task0"``: the chosen pairs (``"no pair"`` for none)."""
        x = np.asarray(w, dtype=np.float64).reshape(-1)
        pairs = np.flatnonzero(x > 0.5)
        if pairs.size == 0:
            return "no pair"
        return ", ".join(self.variable_names[p] for p in pairs)

    def to_dict(self):
        spec = {"type": "assignment", "n_agents": self.n_agents, "n_tasks": self.n_tasks,
                "sense": self.sense}
        if self.allowed is not None:
            spec["allowed"] = self.allowed.tolist()
        for key in ("agent_names", "task_names"):
            if getattr(self, key) is not None:
                spec[key] = list(getattr(self, key))
        return spec

    @classmethod
    def from_dict(cls, spec):
        """Inverse of :meth:`to_dict` (the ``"type"`` key is ignored)."""
        args = {k: v for k, v in spec.items() if k != "type"}
        return cls(**args)

    def __repr__(self):
        extra = ("" if self.allowed is None
                 else f", n_forbidden={int((~self.allowed).sum())}")
        return (f"Assignment(n_agents={self.n_agents}, n_tasks={self.n_tasks}, "
                f"sense={self.sense!r}{extra})")
