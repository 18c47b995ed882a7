"""Shortest paths: on a grid with edges directed east and north (paper section
5.1), and on any directed acyclic graph (:meth:`ShortestPath.from_edges`,
:meth:`ShortestPath.from_networkx`)."""

from __future__ import annotations

import numbers
from math import comb

import numpy as np

from .._compat import import_optional
from ._base import DecisionProblem, _check_sense, null_space_basis

__all__ = ["ShortestPath", "DAGShortestPath", "incidence_network"]


class ShortestPath(DecisionProblem):
    """Shortest south-west to north-east path on a ``rows x cols`` grid.

    Edges point east and north only, so every path has ``rows + cols - 2``
    edges and there are ``comb(rows + cols - 2, rows - 1)`` paths (20 on the
    paper's 4x4 grid, which has 24 edges).

    **Edge order.** Nodes are numbered 1..rows*cols row by row, starting at the
    south-west corner. The cost vector lists first all east edges ``(i, i+1)``
    in increasing ``i``, then all north edges ``(i, i+cols)`` in increasing
    ``i``; this matches the paper's experiments.

    A batch is solved by one dynamic program vectorized over all rows (no
    per-row solver call). Ties: at each node the path arrives from the west
    whenever that is no worse than arriving from the south.

    Parameters
    ----------
    grid : tuple of int, default=(4, 4)
        ``(rows, cols)``, each at least 1 and not both 1.
    sense : {"min", "max"}, default="min"
        ``"max"`` finds the longest path (costs as rewards).

    Examples
    --------
    >>> import numpy as np
    >>> from spotree.problems import ShortestPath
    >>> sp = ShortestPath((4, 4))
    >>> sp.n_costs, len(sp.vertices())
    (24, 20)
    >>> W, z = sp.solve(np.ones((2, 24)))
    >>> z
    array([6., 6.])
    """

    # solve is NumPy on arrays of its own (see solve_is_thread_safe).
    _thread_safe_solve = True

    @staticmethod
    def from_edges(n_nodes, edges, source, target, sense="min"):
        """Shortest (or longest) path on any directed acyclic graph.

        A factory: returns a :class:`DAGShortestPath` (see there for the
        details, ties and errors).

        Parameters
        ----------
        n_nodes : int
            Nodes are numbered ``0 .. n_nodes - 1``.
        edges : sequence of (tail, head) pairs
            The directed edges; the cost vector lists their costs in this order.
        source, target : int
            The path goes from ``source`` to ``target``.
        sense : {"min", "max"}, default="min"

        Returns
        -------
        DAGShortestPath

        Examples
        --------
        >>> from spotree.problems import ShortestPath
        >>> sp = ShortestPath.from_edges(4, [(0, 1), (0, 2), (1, 3), (2, 3)], 0, 3)
        >>> W, z = sp.solve([[1.0, 2.0, 5.0, 1.0]])
        >>> W, sp.describe_decision(W[0])
        (array([[0., 1., 0., 1.]]), '0->2->3')
        """
        return DAGShortestPath(n_nodes, edges, source, target, sense=sense)

    @staticmethod
    def from_networkx(G, source, target, *, sense="min"):
        """Shortest (or longest) path on a networkx directed acyclic graph.

        A factory: returns a :class:`DAGShortestPath` whose nodes and edges
        keep their networkx labels. Needs networkx (``pip install
        spotree[networkx]``).

        **Graphs accepted.** A ``networkx.DiGraph``, or a
        ``networkx.MultiDiGraph`` whose parallel edges are different
        decisions with their own costs (two roads between the same places,
        as in OSMnx street networks). The graph must be acyclic, as for
        :meth:`from_edges`, so that any costs, negative ones included, have
        a shortest path. Refused with a ValueError that names the argument:
        an undirected graph (``Graph``, ``MultiGraph``: every edge could be
        used both ways, which is a cycle), a cycle or self loop (reported
        with its nodes), ``source`` or ``target`` not a node of ``G``,
        ``source == target``, no path from ``source`` to ``target``. Edge
        and node attributes are ignored; costs come from ``C``.

        **Numbering.** Node ``i`` of the problem is ``list(G)[i]``, G's own
        node order (the order the nodes were added), kept in
        :attr:`~DAGShortestPath.node_labels`. The cost vector lists the edges
        in the order of ``G.edges()`` (``G.edges(keys=True)`` for a
        MultiDiGraph: each node's out-edges, nodes in G's order), kept in
        :attr:`~DAGShortestPath.edge_labels`; cost column ``k`` is the cost
        of ``edge_labels[k]``. :attr:`~DAGShortestPath.variable_names`
        names the columns ``"u->v"`` (``"u->v[key]"`` for a MultiDiGraph),
        so that a pandas DataFrame of costs with those columns in another
        order is refused instead of being read by position.
        :meth:`~DAGShortestPath.describe_decision` writes paths with the
        labels and :meth:`~DAGShortestPath.to_networkx` gives the graph back.
        :meth:`~DAGShortestPath.to_dict` (and so a saved model) keeps the
        graph with nodes numbered 0..n-1, the
        :attr:`~DAGShortestPath.variable_names` and, when every node label
        and edge key is a str, int, bool, finite float, None or a tuple of
        these, the labels; pickling keeps any labels.

        **Graphs with cycles** (road networks with two-way streets) and
        non-negative costs are solved by a
        :class:`~spotree.problems.LinearProgram` on the incidence matrix,
        which recognizes the network and uses a compiled label-setting
        (Dijkstra) solver (for an undirected graph, take ``G =
        G.to_directed()`` first: each edge both ways)::

            edges = list(G.edges())  # the cost columns
            A = nx.incidence_matrix(G, edgelist=edges, oriented=True)
            b = np.zeros(len(G)); nodes = list(G)
            b[nodes.index(source)], b[nodes.index(target)] = -1, 1
            LinearProgram(A_eq=A, b_eq=b, bounds=(0, 1))

        Parameters
        ----------
        G : networkx.DiGraph or networkx.MultiDiGraph
            A directed acyclic graph; nodes may be any hashable labels.
        source, target : node of G
            The path goes from ``source`` to ``target``.
        sense : {"min", "max"}, default="min"
            ``"max"`` finds the longest path.

        Returns
        -------
        DAGShortestPath

        Raises
        ------
        ValueError
            For the graphs and nodes refused above.
        ImportError
            When networkx is not installed.

        Examples
        --------
        >>> import networkx as nx
        >>> from spotree.problems import ShortestPath
        >>> G = nx.DiGraph([("home", "bridge"), ("home", "tunnel"),
        ...                 ("bridge", "work"), ("tunnel", "work")])
        >>> sp = ShortestPath.from_networkx(G, "home", "work")
        >>> sp.variable_names
        ['home->bridge', 'home->tunnel', 'bridge->work', 'tunnel->work']
        >>> W, z = sp.solve([[4.0, 1.0, 2.0, 2.0]])
        >>> sp.describe_decision(W[0]), z
        ('home->tunnel->work', array([3.]))
        """
        return _from_networkx(G, source, target, sense)

    @staticmethod
    def from_incidence(A, b, sense="min"):
        """Shortest path given as a node-edge incidence matrix and a supply vector.

        For users who hold the linear program ``min c^T w`` subject to
        ``A w = b``, ``0 <= w <= 1`` of a path problem. Column ``e`` of ``A``
        is edge ``e``: -1 in the row of its tail, +1 in the row of its head
        (the opposite signs, with ``-b``, describe the same feasible set and
        are read the same way). ``b`` has -1 at the source, +1 at the target
        and 0 elsewhere. Returns the same :class:`DAGShortestPath` as
        :meth:`from_edges` with those edges. A
        :class:`~spotree.problems.LinearProgram` with such rows is recognized
        too, and solved by the same compiled solver.

        **A column with a single nonzero.** The rows of an incidence matrix
        add up to zero, so one of them is redundant and often left out. A
        column with one entry is read as an edge to (or from) that left-out
        node, which is added back as node ``A.shape[0]`` with supply
        ``-sum(b)``. This is exact: the left-out row is implied by the
        others. An edge whose other end is that node and that lies on no
        source-target path (the Uber Movement Los Angeles network has one)
        is never used, as in the linear program, where adding up all the
        rows forces it to zero.

        Parameters
        ----------
        A : array-like or scipy.sparse matrix of shape (n_nodes, n_edges)
            Entries in {-1, 0, 1}; every column has at most one -1 and at
            most one +1, and at least one of them.
        b : array-like of shape (n_nodes,)
        sense : {"min", "max"}, default="min"

        Returns
        -------
        DAGShortestPath

        Raises
        ------
        ValueError
            When ``A`` is not an incidence matrix, ``b`` does not name one
            source and one target, or the graph has a cycle (a
            ``LinearProgram(A_eq=A, b_eq=b, bounds=(0, 1))`` solves that one).

        Examples
        --------
        >>> import numpy as np
        >>> from spotree.problems import ShortestPath
        >>> A = np.array([[-1, -1, 0, 0], [1, 0, -1, 0], [0, 1, 0, -1], [0, 0, 1, 1]])
        >>> sp = ShortestPath.from_incidence(A, [-1, 0, 0, 1])
        >>> sp.edges()
        [(0, 1), (0, 2), (1, 3), (2, 3)]
        >>> sp.solve([[1.0, 2.0, 5.0, 1.0]])[0]
        array([[0., 1., 0., 1.]])
        """
        net = incidence_network(A, b)
        if isinstance(net, str):
            raise ValueError(f"ShortestPath.from_incidence: {net}")
        n_nodes, tail, head, source, target = net
        order, cycle = _topological_order(n_nodes, tail, head)
        if cycle is not None:
            raise ValueError(f"ShortestPath.from_incidence: the graph of 'A' has a cycle "
                             f"({'->'.join(map(str, cycle))}); solve it as "
                             "LinearProgram(A_eq=A, b_eq=b, bounds=(0, 1)), which uses a "
                             "label-setting solver for non-negative costs.")
        return DAGShortestPath(n_nodes, np.column_stack([tail, head]), source, target,
                               sense=sense)

    def __init__(self, grid=(4, 4), sense="min"):
        try:
            rows, cols = grid
        except (TypeError, ValueError):
            raise ValueError(f"grid must be a pair of ints (rows, cols); got {grid!r}.") from None
        if not all(isinstance(g, (int, np.integer)) and not isinstance(g, bool)
                   for g in (rows, cols)):
            raise ValueError(f"grid must be a pair of ints (rows, cols); got {grid!r}.")
        rows, cols = int(rows), int(cols)
        if rows < 1 or cols < 1 or rows * cols < 2:
            raise ValueError(f"grid must have at least 1 row, 1 column and 2 nodes; got "
                             f"{grid!r}.")
        self.grid = (rows, cols)
        self.sense = _check_sense(sense)
        self.n_east = rows * (cols - 1)
        self.n_costs = self.n_east + (rows - 1) * cols

    # East edge leaving node (r, c) eastwards, north edge leaving it northwards,
    # with 0-based row r from the south and column c from the west.
    def _east(self, r, c):
        return r * (self.grid[1] - 1) + c

    def _north(self, r, c):
        return self.n_east + r * self.grid[1] + c

    def edges(self):
        """The edges as 1-based node pairs ``(i, j)``, in cost-vector order."""
        rows, cols = self.grid
        out = []
        for r in range(rows):
            for c in range(cols - 1):
                i = r * cols + c + 1
                out.append((i, i + 1))
        for r in range(rows - 1):
            for c in range(cols):
                i = r * cols + c + 1
                out.append((i, i + cols))
        return out

    def n_paths(self):
        """Number of monotone paths, ``comb(rows + cols - 2, rows - 1)``."""
        rows, cols = self.grid
        return comb(rows + cols - 2, rows - 1)

    def _solve(self, C):
        from ._compiled import solve_rows

        # The compiled dynamic program (the split search's; same edge order and
        # tie rule, from the west): NumPy over the grid's nodes held the GIL
        # ~1 ms per squared-error forest tree, for its leaves' one batch.
        Cm = C if self.sense == "min" else -C
        W = np.empty_like(C)
        solve_rows(self.compiled_oracle(), Cm, W)
        return W, np.einsum("ij,ij->i", C, W)

    def _vertices(self):
        if self.n_paths() > self.max_vertices:
            return None
        rows, cols = self.grid
        paths = []
        # Depth-first, east before north, with a stack of its own: recursion
        # one level per edge overflowed Python's stack on a 1 x 1500 grid.
        stack = [(0, 0, ())]
        while stack:
            r, c, used = stack.pop()
            if r == rows - 1 and c == cols - 1:
                paths.append(list(used))
                continue
            if r < rows - 1:
                stack.append((r + 1, c, used + (self._north(r, c),)))
            if c < cols - 1:
                stack.append((r, c + 1, used + (self._east(r, c),)))
        V = np.zeros((len(paths), self.n_costs))
        for k, p in enumerate(paths):
            V[k, p] = 1.0
        return V

    def _difference_basis(self):
        # Two paths from the same source to the same target differ by a
        # circulation: the null space of the node-edge incidence matrix.
        E = np.asarray(self.edges()) - 1
        return _circulation_basis(self.grid[0] * self.grid[1], E[:, 0], E[:, 1],
                                  np.ones(self.n_costs, dtype=bool))

    def compiled_oracle(self):
        """The grid's dynamic program for the compiled split search.

        See :func:`spotree.problems._compiled.grid_oracle` (same edge order and
        tie rule as :meth:`solve`).
        """
        from ._compiled import grid_oracle

        return grid_oracle(*self.grid)

    def describe_decision(self, w):
        """Human-readable path, e.g. ``"1->2->6->..."`` for a decision vector."""
        edges = self.edges()
        used = [edges[k] for k in np.flatnonzero(np.asarray(w) > 0.5)]
        nxt = dict(used)
        node, seq = 1, [1]
        while node in nxt:
            node = nxt[node]
            seq.append(node)
        return "->".join(str(s) for s in seq)

    def to_dict(self):
        return {"type": "shortest_path", "grid": list(self.grid), "sense": self.sense}

    def __repr__(self):
        return f"ShortestPath(grid={self.grid}, sense={self.sense!r})"


def _circulation_basis(n_nodes, tail, head, usable):
    """Orthonormal basis of the circulations on the ``usable`` edges (zero elsewhere)."""
    edges = np.flatnonzero(usable)
    A = np.zeros((n_nodes, edges.size))
    A[tail[edges], np.arange(edges.size)] = -1.0
    A[head[edges], np.arange(edges.size)] = 1.0
    N = null_space_basis(A)
    B = np.zeros((tail.shape[0], N.shape[1]))
    B[edges] = N
    return B


def incidence_network(A, b):
    """Read a node-edge incidence matrix and a supply vector as a path problem.

    Parameters
    ----------
    A : array-like or scipy.sparse matrix of shape (n_rows, n_edges)
    b : array-like of shape (n_rows,)

    Returns
    -------
    (n_nodes, tail, head, source, target) or str
        The graph (``n_nodes`` is ``n_rows + 1`` when a column has a single
        nonzero: its other end is the left-out node ``n_rows``), or a
        sentence saying why ``(A, b)`` is not a single-path network. See
        :meth:`ShortestPath.from_incidence`.
    """
    import scipy.sparse as sp

    try:
        M = sp.csc_matrix(A, dtype=np.float64, copy=True)  # eliminate_zeros works in place
        b = np.asarray(b, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        return "'A' must be a 2-D numeric matrix and 'b' a numeric vector."
    n, E = M.shape
    if b.shape[0] != n:
        return f"'b' has {b.shape[0]} entries but 'A' has {n} rows."
    if E == 0:
        return "'A' has no columns (edges)."
    M.eliminate_zeros()
    if not np.isin(M.data, (-1.0, 1.0)).all():
        return "the entries of 'A' must be -1, 0 or 1."
    nnz = np.diff(M.indptr)
    plus = np.zeros(E, dtype=np.int64)
    minus = np.zeros(E, dtype=np.int64)
    cols = np.repeat(np.arange(E), nnz)
    np.add.at(plus, cols, M.data > 0)
    np.add.at(minus, cols, M.data < 0)
    bad = np.flatnonzero((plus > 1) | (minus > 1) | (plus + minus == 0))
    if bad.size:
        return (f"column {bad[0]} of 'A' is not an edge: every column needs at most one -1 "
                "(its tail), at most one +1 (its head) and at least one of them.")
    rows = M.indices
    sign = M.data
    tail = np.full(E, n, dtype=np.int64)
    head = np.full(E, n, dtype=np.int64)
    tail[cols[sign < 0]] = rows[sign < 0]
    head[cols[sign > 0]] = rows[sign > 0]
    n_nodes = n
    supply = b
    if (plus + minus == 1).any():
        # The left-out node of the redundant row comes back, with the supply
        # that makes all rows add up to zero.
        n_nodes = n + 1
        supply = np.append(b, -b.sum())
    src = np.flatnonzero(supply == -1.0)
    dst = np.flatnonzero(supply == 1.0)
    if src.size != 1 or dst.size != 1 or np.count_nonzero(supply) != 2:
        return ("'b' must have one -1 (the source), one +1 (the target) and zeros "
                "elsewhere" + (" (with the left-out node of the one-entry columns)"
                               if n_nodes > n else "") + ".")
    return n_nodes, tail, head, int(src[0]), int(dst[0])


def _check_node(value, name, n_nodes):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise ValueError(f"The '{name}' parameter of ShortestPath.from_edges must be an int "
                         f"node id. Got {value!r} instead.")
    if not 0 <= value < n_nodes:
        raise ValueError(f"The '{name}' parameter of ShortestPath.from_edges must be a node "
                         f"id in the range [0, {n_nodes - 1}]. Got {value} instead.")
    return int(value)


def _from_networkx(G, source, target, sense):
    """:meth:`ShortestPath.from_networkx`; the checks speak of labels, not node ids."""
    where = "ShortestPath.from_networkx"
    nx = import_optional("networkx", where)
    if not isinstance(G, nx.Graph):
        raise ValueError(f"The 'G' parameter of {where} must be a networkx DiGraph or "
                         f"MultiDiGraph. Got {type(G).__name__} instead.")
    if not G.is_directed():
        raise ValueError(f"The 'G' parameter of {where} must be a directed acyclic graph "
                         f"(a networkx DiGraph or MultiDiGraph). Got an undirected "
                         f"{type(G).__name__}, whose edges can each be used both ways "
                         "(a cycle). Orient them, e.g. nx.DiGraph(edges); for "
                         "non-negative costs, the from_networkx docs show a LinearProgram on "
                         "G.to_directed() that solves graphs with cycles.")
    sense = _check_sense(sense)
    labels = list(G)
    index = {v: i for i, v in enumerate(labels)}
    s = _label_node(index, source, "source")
    t = _label_node(index, target, "target")
    if s == t:
        raise ValueError(f"The 'source' and 'target' parameters of {where} must differ. Got "
                         f"{source!r} for both.")
    multi = G.is_multigraph()
    edge_labels = list(G.edges(keys=True) if multi else G.edges())
    E = np.array([(index[e[0]], index[e[1]]) for e in edge_labels],
                 dtype=np.int64).reshape(-1, 2)
    tail, head = np.ascontiguousarray(E[:, 0]), np.ascontiguousarray(E[:, 1])
    loops = np.flatnonzero(tail == head)
    if loops.size:
        raise ValueError(f"The 'G' parameter of {where} has a self loop at node "
                         f"{labels[tail[loops[0]]]!r}; the graph must be acyclic.")
    _, cycle = _topological_order(len(labels), tail, head)
    if cycle is not None:
        raise ValueError(f"The 'G' parameter of {where} has a cycle "
                         f"({'->'.join(str(labels[v]) for v in cycle)}); the graph must be "
                         "acyclic (see the from_networkx docs for a LinearProgram that "
                         "solves graphs with cycles and non-negative costs).")
    if not _reaches(len(labels), tail, head, s, t):
        raise ValueError(f"The 'G' parameter of {where} has no path from source {source!r} "
                         f"to target {target!r}.")
    problem = DAGShortestPath(len(labels), E, s, t, sense=sense)
    problem.node_labels = labels
    problem.edge_labels = edge_labels
    problem.variable_names = _edge_names(edge_labels)
    return problem


# ------------------------------------------------- labels in JSON (to_dict)
# A node label or edge key is written as itself when it is a JSON scalar (str,
# int, bool, finite float, null) and a tuple as {"tuple": [...]}: networkx
# graphs often have tuple nodes (grid_2d_graph, OSMnx keys), and a JSON list
# would come back as an unhashable list. Any other label is not written.
_TUPLE_TAG = "tuple"


def _label_to_json(v):
    """``v`` as a JSON value, or raise TypeError when it has none that reads back equal."""
    if isinstance(v, np.generic):
        v = v.item()  # numpy ints from an array of node ids: equal and hash alike
    if v is None or isinstance(v, (str, bool, int)):
        return v
    if isinstance(v, float) and np.isfinite(v):
        return v
    if isinstance(v, tuple):
        return {_TUPLE_TAG: [_label_to_json(x) for x in v]}
    raise TypeError(type(v).__name__)


def _label_from_json(v):
    """Inverse of :func:`_label_to_json` (``v`` already checked by the spec reader)."""
    if isinstance(v, dict):
        return tuple(_label_from_json(x) for x in v[_TUPLE_TAG])
    return v


def _labels_to_json(problem):
    """The spec keys that keep a from_networkx problem's labels and column names."""
    spec = {}
    if problem.variable_names is not None:
        spec["variable_names"] = list(problem.variable_names)
    if problem.node_labels is None:
        return spec
    try:
        nodes = [_label_to_json(v) for v in problem.node_labels]
        keyed = problem.edge_labels is not None and any(len(e) == 3
                                                        for e in problem.edge_labels)
        keys = [_label_to_json(e[2]) for e in problem.edge_labels] if keyed else None
    except TypeError:
        # A label JSON cannot hold (a frozenset, an object): the file keeps the
        # column names, which the DataFrame checks need, but not the labels.
        return spec
    spec["node_labels"] = nodes
    if keys is not None:
        spec["edge_keys"] = keys
    return spec


def _set_labels(problem, node_labels=None, edge_keys=None, variable_names=None):
    """Give ``problem`` the labels read back from its spec (see :func:`_labels_to_json`)."""
    if node_labels is not None:
        labels = [_label_from_json(v) for v in node_labels]
        problem.node_labels = labels
        ends = [(labels[a], labels[b]) for a, b in zip(problem.tail.tolist(),
                                                       problem.head.tolist())]
        problem.edge_labels = (ends if edge_keys is None else
                               [(u, v, _label_from_json(k)) for (u, v), k in
                                zip(ends, edge_keys)])
    if variable_names is not None:
        problem.variable_names = list(variable_names)
    elif node_labels is not None:  # a spec written by hand: named as from_networkx does
        problem.variable_names = _edge_names(problem.edge_labels)
    return problem


def _label_node(index, value, name):
    try:
        return index[value]
    except (KeyError, TypeError):  # TypeError: an unhashable value is no node
        raise ValueError(f"The '{name}' parameter of ShortestPath.from_networkx must be a "
                         f"node of 'G'. Got {_short_repr(value)} instead.") from None


def _reaches(n_nodes, tail, head, source, target):
    """Whether a directed path leads from ``source`` to ``target``."""
    out = [[] for _ in range(n_nodes)]
    for a, b in zip(tail.tolist(), head.tolist()):
        out[a].append(b)
    seen = {source}
    stack = [source]
    while stack:
        for u in out[stack.pop()]:
            if u not in seen:
                seen.add(u)
                stack.append(u)
    return target in seen


def _edge_names(edge_labels):
    """``"u->v"`` (``"u->v[key]"``) per edge, or None when two edges print alike.

    Labels are written with str; when two of them print alike (the node ``1``
    and the node ``"1"``) with repr, which tells them apart.
    """
    for fmt in (str, repr):
        names = [f"{fmt(e[0])}->{fmt(e[1])}" + (f"[{fmt(e[2])}]" if len(e) == 3 else "")
                 for e in edge_labels]
        if len(set(names)) == len(names):
            return names
    return None


def _topological_order(n_nodes, tail, head):
    """Kahn's algorithm; returns (order, None) or (None, nodes of one cycle)."""
    out_ptr = np.zeros(n_nodes + 1, dtype=np.int64)
    np.add.at(out_ptr, tail + 1, 1)
    out_ptr = np.cumsum(out_ptr)
    out_edges = np.argsort(tail, kind="stable")
    indeg = np.bincount(head, minlength=n_nodes)
    stack = [v for v in range(n_nodes - 1, -1, -1) if indeg[v] == 0]
    order = []
    while stack:
        v = stack.pop()
        order.append(v)
        for a in range(out_ptr[v], out_ptr[v + 1]):
            u = head[out_edges[a]]
            indeg[u] -= 1
            if indeg[u] == 0:
                stack.append(u)
    if len(order) == n_nodes:
        return np.array(order, dtype=np.int64), None
    # Every node left has an in-edge from another node left: walk backwards
    # along such edges until a node repeats, which closes a cycle.
    left = indeg > 0
    pred = {}
    for e in range(len(tail)):
        if left[tail[e]] and left[head[e]]:
            pred.setdefault(int(head[e]), int(tail[e]))
    v = int(np.flatnonzero(left)[0])
    seen = []
    while v not in seen:
        seen.append(v)
        v = pred[v]
    cycle = seen[seen.index(v):][::-1]
    return None, cycle + [cycle[0]]


class DAGShortestPath(DecisionProblem):
    """Shortest (or longest) path between two nodes of a directed acyclic graph.

    Built by :meth:`ShortestPath.from_edges` (or
    :meth:`ShortestPath.from_networkx`, which also keeps the node and edge
    labels). The decision ``w`` has one
    entry per edge, in the order the edges were given: 1 on the edges of the
    path, 0 elsewhere.

    A batch is solved by a dynamic program over a topological order of the
    nodes, in compiled code (the same solver the tree's split search runs,
    see :meth:`compiled_oracle`), ``O(n_edges + n_nodes)`` per cost vector.
    Costs may be negative: the graph has no cycle.

    **Ties.** At every node the path arrives through the in-edge of lowest
    index among those that reach the node at the best value (in the problem's
    sense). :meth:`solve_vertices` instead takes the first path of
    :meth:`vertices`.

    **Graphs accepted.** Parallel edges (the same ``(tail, head)`` twice) are
    allowed: they are different decisions with their own costs, e.g. two
    roads between the same places. Edges and nodes off every source-target
    path are allowed; their entries of ``w`` are always 0. Rejected, with a
    ValueError naming the argument: a cycle (reported with its nodes), a self
    loop, node ids out of range, no path from ``source`` to ``target``,
    ``source == target``.

    Parameters
    ----------
    n_nodes : int
        At least 2; nodes are numbered ``0 .. n_nodes - 1``.
    edges : array-like of shape (n_edges, 2)
        ``(tail, head)`` pairs of ints.
    source, target : int
    sense : {"min", "max"}, default="min"
        ``"max"`` finds the longest path.

    Attributes
    ----------
    n_costs : int
        Number of edges.
    n_nodes, source, target : int
    tail, head : ndarray of int64 of shape (n_edges,)
    node_labels : list or None
        Built by :meth:`ShortestPath.from_networkx`: the networkx label of
        node ``i`` at position ``i``; None otherwise.
    edge_labels : list of tuple or None
        Built by :meth:`ShortestPath.from_networkx`: the networkx edge
        ``(u, v)`` (``(u, v, key)`` for a MultiDiGraph) whose cost is column
        ``k``, at position ``k``; None otherwise.
    variable_names : list of str or None
        Built by :meth:`ShortestPath.from_networkx`: ``"u->v"`` (or
        ``"u->v[key]"``) per cost column, None otherwise (and None when two
        edges would print alike with both str and repr).
    """

    # The compiled solver with scratch of its own per call (see solve_is_thread_safe).
    _thread_safe_solve = True

    node_labels = None
    edge_labels = None
    variable_names = None

    def __init__(self, n_nodes, edges, source, target, sense="min"):
        if (not isinstance(n_nodes, numbers.Integral) or isinstance(n_nodes, bool)
                or n_nodes < 2):
            raise ValueError(f"The 'n_nodes' parameter of ShortestPath.from_edges must be an "
                             f"int in the range [2, inf). Got {n_nodes!r} instead.")
        n_nodes = int(n_nodes)
        try:
            E = np.asarray(edges)
        except (TypeError, ValueError):
            E = None
        if (E is None or E.ndim != 2 or E.shape[1] != 2 or E.shape[0] == 0
                or not (np.issubdtype(E.dtype, np.integer)
                        or (np.issubdtype(E.dtype, np.floating) and np.isfinite(E).all()
                            and (E == np.round(E)).all()))):
            raise ValueError("The 'edges' parameter of ShortestPath.from_edges must be a "
                             "non-empty sequence of (tail, head) pairs of int node ids. Got "
                             f"{_short_repr(edges)} instead.")
        E = E.astype(np.int64)
        bad = np.flatnonzero(((E < 0) | (E >= n_nodes)).any(axis=1))
        if bad.size:
            raise ValueError(f"The 'edges' parameter of ShortestPath.from_edges has a node id "
                             f"out of the range [0, {n_nodes - 1}]: edge {bad[0]} is "
                             f"{tuple(int(v) for v in E[bad[0]])}.")
        loops = np.flatnonzero(E[:, 0] == E[:, 1])
        if loops.size:
            raise ValueError(f"The 'edges' parameter of ShortestPath.from_edges has a self "
                             f"loop: edge {loops[0]} is {tuple(int(v) for v in E[loops[0]])}. "
                             "The graph must be acyclic.")
        source = _check_node(source, "source", n_nodes)
        target = _check_node(target, "target", n_nodes)
        if source == target:
            raise ValueError(f"The 'source' and 'target' parameters of "
                             f"ShortestPath.from_edges must differ. Got {source} for both.")
        tail = np.ascontiguousarray(E[:, 0])
        head = np.ascontiguousarray(E[:, 1])
        order, cycle = _topological_order(n_nodes, tail, head)
        if cycle is not None:
            raise ValueError(f"The 'edges' parameter of ShortestPath.from_edges has a cycle "
                             f"({'->'.join(map(str, cycle))}); the graph must be acyclic.")
        self.n_nodes = n_nodes
        self.tail = tail
        self.head = head
        self.source = source
        self.target = target
        self.sense = _check_sense(sense)
        self.n_costs = int(tail.shape[0])
        self._order = order
        if self.n_paths() == 0:
            raise ValueError(f"The 'edges' parameter of ShortestPath.from_edges gives no path "
                             f"from source {source} to target {target}.")

    def edges(self):
        """The edges as ``(tail, head)`` pairs, in cost-vector order."""
        return [(int(t), int(h)) for t, h in zip(self.tail, self.head)]

    def n_paths(self):
        """Number of source-target paths (exact, by dynamic programming)."""
        count = [0] * self.n_nodes
        count[self.source] = 1
        in_edges = self._in_edges()
        for v in self._order:
            if v != self.source:
                count[v] = sum(count[self.tail[e]] for e in in_edges[v])
        return count[self.target]

    def _in_edges(self):
        in_edges = [[] for _ in range(self.n_nodes)]
        for e, h in enumerate(self.head):
            in_edges[h].append(e)
        return in_edges

    def compiled_oracle(self):
        """The graph for the compiled DAG solver (see ``problems._compiled``)."""
        from ._compiled import dag_oracle

        return dag_oracle(self.n_nodes, self.tail, self.head, self.source, self.target,
                          self._order)

    def _solve(self, C):
        from ._compiled import solve_rows

        Cm = C if self.sense == "min" else -C
        W = np.empty_like(C)
        solve_rows(self.compiled_oracle(), Cm, W)
        return W, np.einsum("ij,ij->i", C, W)

    def _vertices(self):
        if self.n_paths() > self.max_vertices:
            return None
        # Nodes from which the target can be reached prune the search.
        all_out = [[] for _ in range(self.n_nodes)]
        for e, t in enumerate(self.tail):
            all_out[t].append(e)
        reaches = np.zeros(self.n_nodes, dtype=bool)
        reaches[self.target] = True
        for v in self._order[::-1]:
            reaches[v] = reaches[v] or any(reaches[self.head[e]] for e in all_out[v])
        out_edges = [[e for e in all_out[v] if reaches[self.head[e]]]
                     for v in range(self.n_nodes)]
        paths = []
        stack = [(self.source, [])]
        while stack:
            v, used = stack.pop()
            if v == self.target:
                paths.append(used)
                continue
            for e in reversed(out_edges[v]):  # popped in increasing edge index
                stack.append((int(self.head[e]), used + [e]))
        V = np.zeros((len(paths), self.n_costs))
        for k, p in enumerate(paths):
            V[k, p] = 1.0
        return V

    def _difference_basis(self):
        # Circulations on the edges that lie on some source-target path (the
        # others are never used, so every difference is zero there).
        reached = np.zeros(self.n_nodes, dtype=bool)
        reaches = np.zeros(self.n_nodes, dtype=bool)
        reached[self.source] = True
        reaches[self.target] = True
        out_edges = [[] for _ in range(self.n_nodes)]
        for e, t in enumerate(self.tail):
            out_edges[t].append(e)
        for v in self._order:
            if reached[v]:
                reached[self.head[out_edges[v]]] = True
        for v in self._order[::-1]:
            reaches[v] = reaches[v] or bool(reaches[self.head[out_edges[v]]].any())
        usable = reached[self.tail] & reaches[self.head]
        return _circulation_basis(self.n_nodes, self.tail, self.head, usable)

    def describe_decision(self, w):
        """The path as node ids, e.g. ``"0->2->5"`` (labels, e.g. ``"home->work"``,
        when built by :meth:`ShortestPath.from_networkx`).

        A hop along one of several parallel edges names the edge, otherwise
        two paths that differ only there would read the same: by its
        networkx key when the problem was built from a MultiDiGraph, e.g.
        ``"home-[toll]->bridge->work"`` (keys that print alike with str are
        written with repr), else by its index in the cost vector, e.g.
        ``"0-[e1]->2->5"``. When two node labels print alike with str (the
        node ``1`` and the node ``"1"``), every label is written with repr,
        e.g. ``"'s'->1->'t'"``, as in :attr:`variable_names`.
        """
        used = np.flatnonzero(np.asarray(w) > 0.5)
        nxt = {int(self.tail[e]): (int(self.head[e]), int(e)) for e in used}
        pairs, counts = np.unique(np.column_stack([self.tail, self.head]), axis=0,
                                  return_counts=True)
        parallel = {(int(a), int(b)) for (a, b), k in zip(pairs, counts) if k > 1}
        labels = self.node_labels
        if labels is None:
            name = str
        else:
            # Nodes that print alike with str (1 and "1") are written with repr,
            # as in variable_names: else two paths through them read the same.
            fmt = str if len({str(v) for v in labels}) == len(labels) else repr
            name = (lambda v: fmt(labels[v]))
        edge_name = self._parallel_edge_names(parallel)
        node, text, steps = self.source, name(self.source), 0
        while node in nxt and steps < self.n_nodes:
            head, e = nxt[node]
            hop = f"-[{edge_name.get(e, f'e{e}')}]->" if (node, head) in parallel else "->"
            text += hop + name(head)
            node, steps = head, steps + 1
        return text

    def _parallel_edge_names(self, parallel):
        """``{edge: str(key)}`` for the parallel edges of a problem built from a
        MultiDiGraph (repr for the keys of a node pair that print alike)."""
        if (not parallel or self.edge_labels is None
                or not all(len(e) == 3 for e in self.edge_labels)):
            return {}
        groups = {}
        for e, (a, b) in enumerate(zip(self.tail.tolist(), self.head.tolist())):
            if (a, b) in parallel:
                groups.setdefault((a, b), []).append(e)
        names = {}
        for edges in groups.values():
            keys = [self.edge_labels[e][2] for e in edges]
            fmt = str if len({str(k) for k in keys}) == len(keys) else repr
            names.update((e, fmt(k)) for e, k in zip(edges, keys))
        return names

    def to_networkx(self, costs=None, *, weight="weight"):
        """The graph as a networkx directed graph, with the problem's node labels.

        Needs networkx. Nodes are the :attr:`node_labels` (``0 .. n_nodes - 1``
        when the problem was not built from networkx), added in node order;
        edges are added in cost-vector order, each with its cost column as
        the attribute ``"column"``. The graph's attributes ``"source"``,
        ``"target"`` and ``"sense"`` hold the problem's, so
        ``ShortestPath.from_networkx(H, H.graph["source"], H.graph["target"],
        sense=H.graph["sense"])`` rebuilds a problem built by
        :meth:`ShortestPath.from_networkx`, with the same cost columns.
        Rebuilt from a problem of :meth:`ShortestPath.from_edges`, its cost
        columns follow ``H.edges()`` (each node's out-edges, nodes in order),
        which is not the order of ``edges`` unless they were listed node by
        node: ``[d["column"] for *_, d in H.edges(data=True)]`` gives each new
        column's old one, to reorder the costs.

        Parameters
        ----------
        costs : array-like of shape (n_costs,), default=None
            A cost vector; each edge gets its cost as the attribute
            ``weight``, e.g. for ``nx.shortest_path(H, s, t, weight=...)``.
        weight : str, default="weight"
            Name of that attribute (not ``"column"``).

        Returns
        -------
        networkx.DiGraph or networkx.MultiDiGraph
            A MultiDiGraph when the problem was built from one or has
            parallel edges (which a DiGraph cannot hold), keeping the keys
            of :attr:`edge_labels`.
        """
        nx = import_optional("networkx", "DAGShortestPath.to_networkx")
        if costs is not None:
            try:
                c = np.asarray(costs, dtype=np.float64)
            except (TypeError, ValueError):
                c = None
            if c is None or c.shape != (self.n_costs,) or not np.isfinite(c).all():
                raise ValueError(f"The 'costs' parameter of DAGShortestPath.to_networkx must "
                                 f"be a vector of {self.n_costs} finite numbers, one per "
                                 f"edge. Got {_short_repr(costs)} instead.")
        if not isinstance(weight, str) or weight == "column":
            # "column" would overwrite each edge's cost column with its cost.
            raise ValueError(f"The 'weight' parameter of DAGShortestPath.to_networkx must be "
                             f"a str other than 'column' (each edge's cost column). Got "
                             f"{weight!r} instead.")
        labels = self.node_labels if self.node_labels is not None else range(self.n_nodes)
        keys = self.edge_labels is not None and any(len(e) == 3 for e in self.edge_labels)
        multi = keys or len(set(zip(self.tail.tolist(), self.head.tolist()))) < self.n_costs
        H = nx.MultiDiGraph() if multi else nx.DiGraph()
        H.graph.update(source=labels[self.source], target=labels[self.target],
                       sense=self.sense)
        H.add_nodes_from(labels)
        for k, (a, b) in enumerate(zip(self.tail.tolist(), self.head.tolist())):
            attrs = {"column": k}
            if costs is not None:
                attrs[weight] = float(c[k])
            if keys:
                H.add_edge(labels[a], labels[b], key=self.edge_labels[k][2], **attrs)
            else:
                H.add_edge(labels[a], labels[b], **attrs)
        return H

    def costs_from_networkx(self, graphs, *, weight="weight"):
        """Cost vectors read from an edge attribute of networkx graphs, in column order.

        Needs networkx. Each graph gives one row: the value of its edge
        attribute ``weight`` on every edge of the problem, column ``k`` being
        the edge ``edge_labels[k]`` (``(u, v)``, or ``(u, v, key)`` for a
        problem built from a MultiDiGraph). For a problem of
        :meth:`ShortestPath.from_edges`, the nodes are the ints
        ``0 .. n_nodes - 1`` and column ``k`` is the edge ``edges()[k]``.
        Typically the same road network with each day's travel times; nodes
        and edges of a graph that are not in the problem are ignored.

        Parameters
        ----------
        graphs : networkx.DiGraph or networkx.MultiDiGraph, or an iterable of them
            One graph per cost vector.
        weight : str, default="weight"
            The edge attribute that holds the cost.

        Returns
        -------
        C : ndarray of shape (n_graphs, n_costs), dtype float64
            One row per graph (a single graph gives one row), ready for
            :meth:`solve` or a model's ``fit``.

        Raises
        ------
        ValueError
            Naming the graph (``graphs[i]``) and the edge: an edge of the
            problem missing from the graph, an edge without the attribute,
            a value that is not a finite number; a keyed edge looked up in a
            DiGraph, or an edge with parallel twins in a MultiDiGraph when
            the problem has no keys to tell them apart. Also a problem with
            parallel edges but no keys (:meth:`ShortestPath.from_edges`):
            no graph edge names one of them.
        ImportError
            When networkx is not installed.

        Examples
        --------
        >>> import networkx as nx
        >>> from spotree.problems import ShortestPath
        >>> G = nx.DiGraph([("home", "bridge"), ("home", "tunnel"),
        ...                 ("bridge", "work"), ("tunnel", "work")])
        >>> sp = ShortestPath.from_networkx(G, "home", "work")
        >>> monday, tuesday = G.copy(), G.copy()
        >>> nx.set_edge_attributes(monday, 2.0, "minutes")
        >>> nx.set_edge_attributes(tuesday, 2.0, "minutes")
        >>> tuesday.edges["home", "bridge"]["minutes"] = 9.0
        >>> C = sp.costs_from_networkx([monday, tuesday], weight="minutes")
        >>> C
        array([[2., 2., 2., 2.],
               [9., 2., 2., 2.]])
        >>> [sp.describe_decision(w) for w in sp.solve(C)[0]]
        ['home->bridge->work', 'home->tunnel->work']
        """
        where = "DAGShortestPath.costs_from_networkx"
        nx = import_optional("networkx", where)
        if not isinstance(weight, str):
            raise ValueError(f"The 'weight' parameter of {where} must be a str (an edge "
                             f"attribute). Got {weight!r} instead.")
        if isinstance(graphs, nx.Graph):
            graphs = [graphs]
        try:
            graphs = list(graphs)
        except TypeError:
            raise ValueError(f"The 'graphs' parameter of {where} must be a networkx DiGraph "
                             f"or MultiDiGraph, or an iterable of them. Got "
                             f"{_short_repr(graphs)} instead.") from None
        if self.edge_labels is not None:
            edges = self.edge_labels
        else:
            edges = self.edges()
        keyed = bool(edges) and len(edges[0]) == 3
        if not keyed:
            # Parallel edges without keys: one graph edge would fill both
            # columns with the same cost, hiding that the graph lacks a twin.
            first = {}
            for k, e in enumerate(edges):
                pair = tuple(e[:2])
                if pair in first:
                    raise ValueError(
                        f"{where} cannot tell apart the problem's parallel edges "
                        f"{'->'.join(map(repr, pair))} (cost columns {first[pair]} and {k}): "
                        "the problem has no edge keys (built by ShortestPath.from_edges, or "
                        "saved without its networkx labels), so no graph can give each its "
                        "own cost; build the cost matrix by column instead.")
                first[pair] = k
        C = np.empty((len(graphs), self.n_costs))
        for i, G in enumerate(graphs):
            if not isinstance(G, nx.Graph) or not G.is_directed():
                raise ValueError(f"The 'graphs' parameter of {where} must hold networkx "
                                 f"DiGraphs or MultiDiGraphs; graphs[{i}] is a "
                                 f"{type(G).__name__}.")
            if keyed and not G.is_multigraph():
                raise ValueError(f"graphs[{i}] passed to {where} is a DiGraph, but the "
                                 "problem's edges have keys (it was built from a "
                                 "MultiDiGraph): pass MultiDiGraphs with the same keys.")
            for k, e in enumerate(edges):
                C[i, k] = self._edge_cost(G, e, weight, f"graphs[{i}]", where)
        return C

    @staticmethod
    def _edge_cost(G, e, weight, name, where):
        """The attribute ``weight`` of edge ``e`` of ``G``, a finite float."""
        data = G.get_edge_data(*e)
        shown = "->".join(map(repr, e[:2])) + (f" (key {e[2]!r})" if len(e) == 3 else "")
        if data is None:
            raise ValueError(f"{name} passed to {where} has no edge {shown}, which is a "
                             "cost column of the problem.")
        if G.is_multigraph() and len(e) == 2:
            # No key in the problem: only an unambiguous single edge will do.
            if len(data) != 1:
                raise ValueError(f"{name} passed to {where} has {len(data)} parallel edges "
                                 f"{shown} and the problem has no keys to tell them apart.")
            data = next(iter(data.values()))
        if weight not in data:
            raise ValueError(f"{name} passed to {where}: edge {shown} has no attribute "
                             f"{weight!r} (the 'weight' parameter).")
        value = data[weight]
        try:
            if isinstance(value, (bool, np.bool_, str, bytes)):
                raise TypeError
            x = float(value)
        except (TypeError, ValueError):
            x = None
        if x is None or not np.isfinite(x):
            raise ValueError(f"{name} passed to {where}: edge {shown} has {weight}="
                             f"{_short_repr(value)}; costs must be finite numbers.")
        return x

    def to_dict(self):
        """A JSON-ready description (see :func:`~spotree.problems.problem_from_dict`).

        A problem built by :meth:`ShortestPath.from_networkx` also writes its
        :attr:`variable_names` and, when every node label and edge key is a
        str, int, bool, finite float, None or a tuple of these, its
        :attr:`node_labels` and the keys of :attr:`edge_labels`
        (``"edge_keys"``, for a MultiDiGraph), so that a saved model reads a
        DataFrame of costs and describes its decisions as before saving.
        """
        spec = {"type": "dag_shortest_path", "n_nodes": self.n_nodes,
                "edges": [list(e) for e in self.edges()], "source": self.source,
                "target": self.target, "sense": self.sense}
        spec.update(_labels_to_json(self))
        return spec

    @classmethod
    def from_dict(cls, spec):
        """Inverse of :meth:`to_dict` (the ``"type"`` key is ignored)."""
        args = {k: v for k, v in spec.items() if k != "type"}
        labels = {k: args.pop(k) for k in ("node_labels", "edge_keys", "variable_names")
                  if k in args}
        return _set_labels(cls(**args), **labels)

    def __repr__(self):
        if self.node_labels is not None:
            return (f"ShortestPath.from_networkx(n_nodes={self.n_nodes}, "
                    f"n_edges={self.n_costs}, source={self.node_labels[self.source]!r}, "
                    f"target={self.node_labels[self.target]!r}, sense={self.sense!r})")
        return (f"ShortestPath.from_edges(n_nodes={self.n_nodes}, n_edges={self.n_costs}, "
                f"source={self.source}, target={self.target}, sense={self.sense!r})")


def _short_repr(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
