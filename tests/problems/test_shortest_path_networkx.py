"""ShortestPath.from_networkx and DAGShortestPath.to_networkx.

Decisions are checked against networkx's own shortest path lengths
(Bellman-Ford, which takes negative costs) and against every source-target
path listed by networkx; the cost columns are built here from the documented
order, ``list(G.edges())``, never from the problem's own attributes.
"""

import json
import pathlib
import pickle
import re
import sys

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from spotree.problems import LinearProgram, ShortestPath

nx = pytest.importorskip("networkx")

ROOT = pathlib.Path(__file__).resolve().parents[2]


def random_dag(rng, n, p, multi=False, labels="str"):
    """A random DAG on ``n`` labelled nodes, nodes and edges added in shuffled order.

    Edges go from a lower to a higher rank of a hidden order, so there is no
    cycle; with ``multi``, about one edge in three gets a parallel twin.
    """
    names = {"str": [f"n{k}" for k in range(n)],
             "tuple": [(k % 3, k // 3) for k in range(n)],
             "mixed": [k if k % 2 else f"s{k}" for k in range(n)]}[labels]
    rank = rng.permutation(n)
    G = nx.MultiDiGraph() if multi else nx.DiGraph()
    G.add_nodes_from(names[k] for k in rng.permutation(n))
    pairs = [(a, b) for a in range(n) for b in range(n) if rank[a] < rank[b]]
    for k in rng.permutation(len(pairs)):
        if rng.random() < p:
            a, b = pairs[k]
            G.add_edge(names[a], names[b])
            if multi and rng.random() < 1 / 3:
                G.add_edge(names[a], names[b])
    first, last = names[int(np.argmin(rank))], names[int(np.argmax(rank))]
    return G, first, last


def brute_force(G, edges, source, target, c, sense):
    """Best path by listing every source-target path; its 0/1 vector and value."""
    col = {e: k for k, e in enumerate(edges)}
    best = None
    for path in nx.all_simple_edge_paths(G, source, target):
        w = np.zeros(len(edges))
        w[[col[tuple(e)] for e in path]] = 1.0
        v = c @ w
        if best is None or (v < best[1] if sense == "min" else v > best[1]):
            best = (w, v)
    return best


@pytest.mark.parametrize("multi", [False, True])
@pytest.mark.parametrize("labels", ["str", "tuple", "mixed"])
def test_decisions_match_networkx_and_brute_force(multi, labels):
    rng = np.random.default_rng(7 + multi + len(labels))
    checked = 0
    for _ in range(4):
        G, s, t = random_dag(rng, 8, 0.45, multi=multi, labels=labels)
        if not nx.has_path(G, s, t):
            continue
        checked += 1
        edges = list(G.edges(keys=True)) if multi else list(G.edges())
        C = rng.normal(size=(6, len(edges)))  # negative costs too: the graph is acyclic
        for sense in ("min", "max"):
            sp = ShortestPath.from_networkx(G, s, t, sense=sense)
            assert sp.n_costs == len(edges)
            W, z = sp.solve(C)
            for c, w, v in zip(C, W, z):
                # networkx's Bellman-Ford on the same costs (negated for a longest path).
                H = G.copy()
                for e, ce in zip(edges, c):
                    H.edges[e]["cost"] = ce if sense == "min" else -ce
                ref = nx.shortest_path_length(H, s, t, weight="cost", method="bellman-ford")
                assert_allclose(v, ref if sense == "min" else -ref, atol=1e-9)
                # Continuous random costs: the best path is unique.
                w_best, v_best = brute_force(G, edges, s, t, c, sense)
                assert_array_equal(w, w_best)
                assert_allclose(v, v_best, atol=1e-9)
    assert checked >= 3


def test_labels_and_column_names_follow_the_documented_order():
    G = nx.DiGraph()
    G.add_nodes_from(["d", "b", "a", "c"])  # not sorted: G's order counts
    G.add_edges_from([("b", "d"), ("a", "b"), ("a", "c"), ("c", "d"), ("a", "d")])
    sp = ShortestPath.from_networkx(G, "a", "d")
    assert sp.node_labels == ["d", "b", "a", "c"]
    # G.edges(): each node's out-edges, nodes in G's order.
    assert sp.edge_labels == [("b", "d"), ("a", "b"), ("a", "c"), ("a", "d"), ("c", "d")]
    assert sp.variable_names == ["b->d", "a->b", "a->c", "a->d", "c->d"]
    assert sp.edges() == [(1, 0), (2, 1), (2, 3), (2, 0), (3, 0)]
    assert (sp.source, sp.target) == (2, 0)
    assert sp.n_paths() == 3
    W, z = sp.solve([[1.0, 1.0, 5.0, 3.0, 5.0], [5.0, 5.0, 1.0, 9.0, 1.0]])
    assert [sp.describe_decision(w) for w in W] == ["a->b->d", "a->c->d"]
    assert_array_equal(z, [2.0, 2.0])
    assert repr(sp) == ("ShortestPath.from_networkx(n_nodes=4, n_edges=5, source='a', "
                        "target='d', sense='min')")
    # Labels that print alike are told apart with repr.
    H = nx.DiGraph([(1, "1"), ("1", 2), (1, 2)])
    assert ShortestPath.from_networkx(H, 1, 2).variable_names == ["1->'1'", "1->2", "'1'->2"]


def test_multidigraph_keys_name_parallel_edges():
    G = nx.MultiDiGraph()
    G.add_edge("x", "y", key="toll")
    G.add_edge("x", "y", key="free")
    G.add_edge("y", "z")
    sp = ShortestPath.from_networkx(G, "x", "z")
    assert sp.edge_labels == [("x", "y", "toll"), ("x", "y", "free"), ("y", "z", 0)]
    assert sp.variable_names == ["x->y[toll]", "x->y[free]", "y->z[0]"]
    W, _ = sp.solve([[2.0, 3.0, 1.0], [4.0, 3.0, 1.0]])
    assert_array_equal(W, [[1, 0, 1], [0, 1, 1]])
    assert sp.describe_decision(W[1]) == "x-[free]->y->z"


def test_dataframe_costs_are_checked_against_the_edge_names():
    pd = pytest.importorskip("pandas")
    G = nx.DiGraph([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    sp = ShortestPath.from_networkx(G, "a", "d")
    C = pd.DataFrame([[1.0, 2.0, 5.0, 1.0]], columns=sp.variable_names)
    assert_array_equal(sp.solve(C)[0], [[0, 1, 0, 1]])
    with pytest.raises(ValueError, match="variable_names in another order"):
        sp.solve(C[sp.variable_names[::-1]])


@pytest.mark.parametrize("multi", [False, True])
def test_to_networkx_round_trip(multi):
    rng = np.random.default_rng(3)
    G, s, t = random_dag(rng, 7, 0.6, multi=multi, labels="tuple")
    sp = ShortestPath.from_networkx(G, s, t, sense="max")
    H = sp.to_networkx()
    assert type(H) is type(G)
    assert list(H) == list(G)
    assert list(H.edges(keys=True) if multi else H.edges()) == \
        list(G.edges(keys=True) if multi else G.edges())
    assert [d["column"] for *_, d in H.edges(data=True)] == list(range(sp.n_costs))
    assert H.graph == {"source": s, "target": t, "sense": "max"}
    back = ShortestPath.from_networkx(H, H.graph["source"], H.graph["target"],
                                      sense=H.graph["sense"])
    assert back.edge_labels == sp.edge_labels and back.node_labels == sp.node_labels
    assert_array_equal(back.tail, sp.tail)
    assert_array_equal(back.head, sp.head)
    # Pickling keeps the labels.
    again = pickle.loads(pickle.dumps(sp))
    assert again.edge_labels == sp.edge_labels and again.variable_names == sp.variable_names


def test_to_networkx_of_a_from_edges_problem_and_its_weights():
    # Parallel edges and edges listed out of node order: "column" maps them back.
    edges = [(2, 3), (0, 1), (1, 3), (0, 2), (0, 1)]
    sp = ShortestPath.from_edges(4, edges, 0, 3)
    c = np.array([1.0, 4.0, 1.0, 2.0, 0.5])
    H = sp.to_networkx(c, weight="minutes")
    assert isinstance(H, nx.MultiDiGraph) and list(H) == [0, 1, 2, 3]
    assert sorted((u, v, d["column"], d["minutes"]) for u, v, d in H.edges(data=True)) == \
        sorted((u, v, k, c[k]) for k, (u, v) in enumerate(edges))
    ref = nx.shortest_path_length(H, 0, 3, weight="minutes")
    assert_allclose(sp.solve([c])[1], [ref])  # 0->1 (0.5) ->3 (1)
    assert ref == 1.5
    simple = ShortestPath.from_edges(3, [(1, 2), (0, 1)], 0, 2).to_networkx()
    assert isinstance(simple, nx.DiGraph) and not simple.is_multigraph()
    assert simple.edges[1, 2]["column"] == 0 and simple.graph["source"] == 0


def test_the_documented_linear_program_solves_graphs_with_cycles():
    # The recipe of from_networkx's docs, on random digraphs with two-way edges.
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(6):
        G = nx.gnp_random_graph(9, 0.3, seed=int(rng.integers(1 << 30)), directed=True)
        source, target = 0, 8
        if not nx.has_path(G, source, target):
            continue
        edges = list(G.edges())
        A = nx.incidence_matrix(G, edgelist=edges, oriented=True)
        b = np.zeros(len(G))
        nodes = list(G)
        b[nodes.index(source)], b[nodes.index(target)] = -1, 1
        lp = LinearProgram(A_eq=A, b_eq=b, bounds=(0, 1))
        C = rng.uniform(0.1, 2.0, size=(3, len(edges)))
        _, z = lp.solve(C)
        for c, v in zip(C, z):
            nx.set_edge_attributes(G, dict(zip(edges, c)), "cost")
            assert_allclose(v, nx.shortest_path_length(G, source, target, weight="cost"))
        checked += 1
    assert checked >= 3


def test_refusals_name_the_argument():
    dag = nx.DiGraph([("a", "b"), ("b", "c")])
    where = "of ShortestPath.from_networkx"
    cases = [
        (([("a", "b")], "a", "b"), f"'G' parameter {where} must be a networkx DiGraph"),
        ((nx.Graph([("a", "b")]), "a", "b"), "undirected Graph"),
        ((nx.MultiGraph([("a", "b")]), "a", "b"), "undirected MultiGraph"),
        ((dag, "z", "c"), f"'source' parameter {where} must be a node of 'G'. Got 'z'"),
        ((dag, ["a"], "c"), r"'source' parameter .* Got \['a'\]"),
        ((dag, "a", "z"), f"'target' parameter {where} must be a node of 'G'"),
        ((dag, "a", "a"), "'source' and 'target' parameters .* must differ. Got 'a'"),
        ((nx.DiGraph([("a", "b"), ("b", "b")]), "a", "b"), "self loop at node 'b'"),
        ((nx.DiGraph([("s", "a"), ("a", "b"), ("b", "a"), ("b", "t")]), "s", "t"),
         r"'G' parameter .* has a cycle \((a->b->a|b->a->b)\)"),
        ((dag, "c", "a"), "no path from source 'c' to target 'a'"),
        ((nx.DiGraph([("a", "b"), ("c", "d")]), "a", "d"), "no path from source 'a'"),
    ]
    for args, message in cases:
        with pytest.raises(ValueError, match=message):
            ShortestPath.from_networkx(*args)
    with pytest.raises(ValueError, match="sense must be 'min' or 'max'"):
        ShortestPath.from_networkx(dag, "a", "c", sense="minimum")
    sp = ShortestPath.from_networkx(dag, "a", "c")
    for bad in ([1.0], [1.0, np.nan], "ab", [[1.0, 2.0]]):
        with pytest.raises(ValueError, match="'costs' parameter of DAGShortestPath.to_networkx"):
            sp.to_networkx(bad)
    with pytest.raises(ValueError, match="'weight' parameter"):
        sp.to_networkx([1.0, 2.0], weight=None)
    # "column" would replace each edge's cost column (0, 1) by its cost (5.0, 7.0).
    with pytest.raises(ValueError, match="'weight' parameter .* other than 'column'"):
        sp.to_networkx([5.0, 7.0], weight="column")


def test_spotree_works_without_networkx(monkeypatch):
    # No module of spotree imports networkx itself (only _compat.import_optional
    # does, on demand), so spotree imports where it is not installed.
    pattern = re.compile(r"^\s*(import|from)\s+networkx\b", re.MULTILINE)
    for path in (ROOT / "spotree").rglob("*.py"):
        assert not pattern.search(path.read_text(encoding="utf-8")), path
    # networkx blocked: from_edges works, to_networkx names the extra.
    monkeypatch.setitem(sys.modules, "networkx", None)
    sp = ShortestPath.from_edges(3, [(0, 1), (1, 2)], 0, 2)
    assert sp.solve([[1.0, 1.0]])[1][0] == 2.0
    with pytest.raises(ImportError, match=r"^DAGShortestPath.to_networkx requires networkx, "
                       r"which is not installed: pip install spotree\[networkx\]$"):
        sp.to_networkx()


def test_to_networkx_of_from_edges_rebuilds_with_columns_in_networkx_order():
    # to_networkx's docs: from_networkx(H, ..., sense=H.graph["sense"]) lists the
    # columns as H.edges() does, node by node; the "column" attribute maps them back.
    edges = [(2, 3), (0, 1), (1, 3), (0, 2), (0, 1)]
    sp = ShortestPath.from_edges(4, edges, 0, 3, sense="max")
    H = sp.to_networkx()
    back = ShortestPath.from_networkx(H, H.graph["source"], H.graph["target"],
                                      sense=H.graph["sense"])
    perm = [d["column"] for *_, d in H.edges(data=True)]
    assert sorted(perm) == list(range(5)) and perm != list(range(5))
    assert back.sense == "max"
    assert [edges[k] for k in perm] == back.edges()
    C = np.array([[1.0, 4.0, 1.0, 2.0, 0.5], [3.0, 0.0, 2.0, 1.0, 5.0]])
    W, z = sp.solve(C)
    W_back, z_back = back.solve(C[:, perm])
    assert_array_equal(W_back, W[:, perm])
    # Longest of 0->1->3 (5, 2), 0->1'->3 (1.5, 7) and 0->2->3 (3, 4), by hand.
    assert_allclose(z_back, [5.0, 7.0])
    assert_allclose(z, z_back)


# ---------------------------------------------- labels kept by to_dict / save
def _roads():
    """A MultiDiGraph with tuple nodes, two tolled parallel roads and costs driven by X."""
    G = nx.MultiDiGraph()
    G.add_edge((0, 0), (0, 1), key="toll")
    G.add_edge((0, 0), (0, 1), key="free")
    G.add_edge((0, 1), (1, 1))
    G.add_edge((0, 0), (1, 0))
    G.add_edge((1, 0), (1, 1))
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(60, 2))
    C = rng.uniform(1.0, 2.0, size=(60, 5)) + 2.0 * np.outer(X[:, 0], [1, 0, 0, 1, 0])
    return G, X, C


def _loss_by_networkx(G, W, frame, names):
    """Normalized SPO loss of decisions ``W`` (columns ``names``) on the costs in ``frame``,
    each row's optimum a networkx shortest path length read by column name."""
    regret = optimum = 0.0
    for w, (_, row) in zip(W, frame.iterrows()):
        H = G.copy()
        for u, v, k in H.edges(keys=True):
            H.edges[u, v, k]["c"] = row[f"{u}->{v}[{k}]"]
        best = nx.shortest_path_length(H, (0, 0), (1, 1), weight="c")
        regret += sum(row[n] for n, x in zip(names, w) if x > 0.5) - best
        optimum += abs(best)
    return regret / optimum


@pytest.mark.parametrize("model_class", ["SPOTree", "SPOForest"])
def test_a_saved_model_keeps_the_column_names_and_labels(tmp_path, model_class):
    # Loaded models used to lose variable_names: a DataFrame of costs in
    # another column order was then read by position, silently.
    pd = pytest.importorskip("pandas")
    import spotree

    G, X, C = _roads()
    sp = ShortestPath.from_networkx(G, (0, 0), (1, 1))
    kw = {"n_estimators": 3, "random_state": 0} if model_class == "SPOForest" else {}
    model = getattr(spotree, model_class)(sp, max_depth=2, **kw).fit(X, C)
    model.save(tmp_path / "m.json")
    back = spotree.load(tmp_path / "m.json")
    q = back.problem_
    assert q.variable_names == sp.variable_names == [
        "(0, 0)->(0, 1)[toll]", "(0, 0)->(0, 1)[free]", "(0, 0)->(1, 0)[0]",
        "(0, 1)->(1, 1)[0]", "(1, 0)->(1, 1)[0]"]
    assert q.node_labels == list(G) and q.edge_labels == list(G.edges(keys=True))
    assert list(q.to_networkx().edges(keys=True)) == list(G.edges(keys=True))
    frame = pd.DataFrame(C, columns=sp.variable_names)
    shuffled = frame[[sp.variable_names[k] for k in (3, 1, 4, 0, 2)]]
    for m in (model, back):
        with pytest.raises(ValueError, match="variable_names in another order"):
            m.score(X, shuffled)
        # Reordered by name, the frame scores as networkx says.
        W = m.predict_decision(X)
        assert_allclose(-m.score(X, shuffled[sp.variable_names]),
                        _loss_by_networkx(G, W, shuffled, sp.variable_names), rtol=1e-12)
    assert_array_equal(back.predict_decision(X), model.predict_decision(X))
    assert [q.describe_decision(w) for w in back.predict_decision(X[:10])] == \
        [sp.describe_decision(w) for w in model.predict_decision(X[:10])]
    # A file written before the labels were kept still loads, without them.
    doc = json.loads((tmp_path / "m.json").read_text())
    for key in ("variable_names", "node_labels", "edge_keys"):
        del doc["problem"][key]
    (tmp_path / "old.json").write_text(json.dumps(doc))
    old = spotree.load(tmp_path / "old.json")
    assert old.problem_.variable_names is None and old.problem_.node_labels is None
    assert_array_equal(old.predict_decision(X), model.predict_decision(X))


def test_to_dict_keeps_labels_json_can_hold():
    from spotree.problems import problem_from_dict

    # numpy ints, floats, None, bools and nested tuples come back equal.
    G = nx.DiGraph([(np.int64(3), (2, ("a", None))), ((2, ("a", None)), 2.5),
                    (np.int64(3), True)])
    G.add_edge(True, 2.5)
    sp = ShortestPath.from_networkx(G, 3, 2.5)
    spec = json.loads(json.dumps(sp.to_dict()))
    q = problem_from_dict(spec)
    assert q.node_labels == [3, (2, ("a", None)), 2.5, True]
    assert [type(v) for v in q.node_labels] == [int, tuple, float, bool]
    assert q.edge_labels == sp.edge_labels and q.variable_names == sp.variable_names
    assert "edge_keys" not in spec and q.to_dict() == spec
    # A label JSON cannot hold: the column names are kept, not the labels.
    H = nx.DiGraph([(frozenset("a"), "b"), ("b", "c")])
    spec = ShortestPath.from_networkx(H, frozenset("a"), "c").to_dict()
    assert spec["variable_names"] == ["frozenset({'a'})->b", "b->c"]
    assert "node_labels" not in spec
    q = problem_from_dict(spec)
    assert q.variable_names == spec["variable_names"] and q.node_labels is None
    # from_edges problems write what they always did.
    assert set(ShortestPath.from_edges(2, [(0, 1)], 0, 1).to_dict()) == {
        "type", "n_nodes", "edges", "source", "target", "sense"}


@pytest.mark.parametrize("change, message", [
    ({"node_labels": ["a", "a", "c"]}, "key 'node_labels': must hold distinct node labels; "
                                       "entries 0 and 1 are both 'a'"),
    ({"node_labels": ["a", "b"]}, "key 'node_labels': must be null or a list of 3 labels"),
    ({"node_labels": ["a", ["b"], "c"]}, r"node_labels\[1\] must be a string, number"),
    ({"node_labels": ["a", {"tuple": [float("nan")]}, "c"]},
     r"node_labels\[1\]\.tuple\[0\] must be a finite number"),
    ({"node_labels": ["a", {"set": [1]}, "c"]}, "node_labels"),
    ({"edge_keys": [0, 1]}, "key 'edge_keys': is given without 'node_labels'"),
    ({"node_labels": ["a", "b", "c"], "edge_keys": [0, 0]},
     "key 'edge_keys': must hold distinct keys for the parallel edges"),
    ({"variable_names": ["a->b", "a->b"]}, "key 'variable_names': must hold distinct"),
    ({"variable_names": ["a->b"]}, "key 'variable_names': must have 2 entries; got 1"),
])
def test_bad_labels_in_a_spec_are_refused_naming_the_key(change, message):
    from spotree.problems import problem_from_dict

    spec = {"type": "dag_shortest_path", "n_nodes": 3, "edges": [[0, 1], [0, 1]],
            "source": 0, "target": 1, **change}
    with pytest.raises(ValueError, match=message):
        problem_from_dict(spec)
    ok = problem_from_dict({**spec, "node_labels": ["a", "b", "c"], "edge_keys": [0, 1],
                            "variable_names": ["x", "y"]})
    assert ok.edge_labels == [("a", "b", 0), ("a", "b", 1)] and ok.variable_names == ["x", "y"]
    # Labels without names (a spec written by hand): named as from_networkx names them.
    unnamed = problem_from_dict({**spec, "node_labels": ["a", "b", "c"], "edge_keys": [0, 1],
                                 "variable_names": None})
    assert unnamed.variable_names == ["a->b[0]", "a->b[1]"]


def test_describe_decision_names_parallel_edges_by_their_keys():
    G = nx.MultiDiGraph()
    G.add_edge("s", "a", key="toll")
    G.add_edge("s", "a", key="free")
    G.add_edge("s", "b")
    G.add_edge("a", "t", key=1)
    G.add_edge("a", "t", key="1")  # prints as key 1 does: written with repr
    G.add_edge("b", "t")
    sp = ShortestPath.from_networkx(G, "s", "t")
    col = {e: k for k, e in enumerate(G.edges(keys=True))}
    seen = set()
    for path in nx.all_simple_edge_paths(G, "s", "t"):
        w = np.zeros(sp.n_costs)
        w[[col[e] for e in path]] = 1.0
        # From the graph: a hop with a parallel twin shows its key (repr for
        # a->t, whose keys 1 and "1" print alike).
        text = path[0][0] + "".join(
            (f"-[{(repr if (u, v) == ('a', 't') else str)(k)}]->"
             if G.number_of_edges(u, v) > 1 else "->") + v
            for u, v, k in path)
        seen.add(sp.describe_decision(w))
        assert sp.describe_decision(w) == text
    assert seen == {"s-[toll]->a-[1]->t", "s-[toll]->a-['1']->t", "s-[free]->a-[1]->t",
                    "s-[free]->a-['1']->t", "s->b->t"}


# ------------------------------------------------------ costs_from_networkx
def test_costs_from_networkx_reads_edge_attributes_in_column_order():
    rng = np.random.default_rng(21)
    G, s, t = random_dag(rng, 7, 0.5, multi=True, labels="tuple")
    sp = ShortestPath.from_networkx(G, s, t)
    days = []
    for _ in range(3):
        H = G.copy()
        H.add_edge("extra", s, minutes=-5.0)  # not in the problem: ignored
        for e in H.edges(keys=True):
            H.edges[e]["minutes"] = float(rng.uniform(1, 5))
        days.append(H)
    C = sp.costs_from_networkx(days, weight="minutes")
    # The documented order, built here from the graphs themselves.
    assert_array_equal(C, [[H.edges[e]["minutes"] for e in G.edges(keys=True)] for H in days])
    _, z = sp.solve(C)
    assert_allclose(z, [nx.shortest_path_length(H, s, t, weight="minutes") for H in days])
    # One graph gives one row; generators and int nodes of from_edges problems work.
    assert_array_equal(sp.costs_from_networkx(days[1], weight="minutes"), C[1:2])
    dag = ShortestPath.from_edges(3, [(1, 2), (0, 1), (0, 2)], 0, 2)
    H = nx.DiGraph()
    H.add_weighted_edges_from([(0, 1, 1), (0, 2, 3.5), (1, 2, np.float32(2))])
    assert_array_equal(dag.costs_from_networkx(g for g in [H]), [[2.0, 1.0, 3.5]])


def test_costs_from_networkx_refusals_name_the_graph_and_edge():
    G = nx.MultiDiGraph()
    G.add_edge("a", "b", key="toll", w=1.0)
    G.add_edge("a", "b", key="free", w=2.0)
    G.add_edge("b", "c", w=1.0)
    sp = ShortestPath.from_networkx(G, "a", "c")
    where = "passed to DAGShortestPath.costs_from_networkx"
    missing_edge = G.copy()
    missing_edge.remove_edge("a", "b", key="free")
    bad = {"w": ("s", "nan", None, True, [1.0, 2.0])}
    cases = [(missing_edge, rf"graphs\[1\] {where} has no edge 'a'->'b' \(key 'free'\)"),
             (nx.DiGraph(G), r"graphs\[1\] .* is a DiGraph, but the problem's edges have keys"),
             (G.to_undirected(), r"graphs\[1\] is a MultiGraph")]
    for v in bad["w"]:
        H = G.copy()
        H.edges["b", "c", 0]["w"] = float(v) if v == "nan" else v
        cases.append((H, rf"graphs\[1\] {where}: edge 'b'->'c' \(key 0\) has w=.*; costs "
                         "must be finite"))
    H = G.copy()
    del H.edges["a", "b", "toll"]["w"]
    cases.append((H, rf"graphs\[1\] {where}: edge 'a'->'b' \(key 'toll'\) has no attribute "
                     r"'w' \(the 'weight' parameter\)"))
    for H, message in cases:
        with pytest.raises(ValueError, match=message):
            sp.costs_from_networkx([G, H], weight="w")
    with pytest.raises(ValueError, match="'graphs' parameter .* Got 3 instead"):
        sp.costs_from_networkx(3)
    with pytest.raises(ValueError, match="'weight' parameter .* must be a str"):
        sp.costs_from_networkx(G, weight=None)
    # A MultiDiGraph's parallel edges need keys in the problem (one from a DiGraph).
    one = ShortestPath.from_networkx(nx.DiGraph([(0, 1), (1, 2)]), 0, 2)
    with pytest.raises(ValueError, match=r"graphs\[0\] .* has 2 parallel edges 0->1 and the "
                                         "problem has no keys"):
        one.costs_from_networkx(nx.MultiDiGraph([(0, 1, {"weight": 1.0}),
                                                 (0, 1, {"weight": 2.0}), (1, 2)]))
    # A problem's own parallel edges without keys (from_edges) cannot be told
    # apart by any graph: its 2-edge MultiDiGraph, and a graph with one 0->1
    # edge, which filled both columns with that edge's cost.
    dag = ShortestPath.from_edges(3, [(0, 1), (1, 2), (0, 1)], 0, 2)
    single = nx.DiGraph([(0, 1, {"weight": 1.0}), (1, 2, {"weight": 3.0})])
    for H in (dag.to_networkx([1.0, 2.0, 3.0]), single, nx.MultiDiGraph(single)):
        with pytest.raises(ValueError, match=r"costs_from_networkx cannot tell apart the "
                                             r"problem's parallel edges 0->1 \(cost columns 0 "
                                             r"and 2\): the problem has no edge keys"):
            dag.costs_from_networkx(H)


def test_describe_decision_tells_apart_nodes_that_print_alike():
    # The nodes 1 and "1" both printed as 1: the two paths read "s->1->t".
    G = nx.DiGraph([("s", 1), (1, "t"), ("s", "1"), ("1", "t"), ("s", "t")])
    sp = ShortestPath.from_networkx(G, "s", "t")
    col = {e: k for k, e in enumerate(G.edges())}
    seen = set()
    for path in nx.all_simple_paths(G, "s", "t"):
        w = np.zeros(sp.n_costs)
        w[[col[e] for e in zip(path, path[1:])]] = 1.0
        assert sp.describe_decision(w) == "->".join(map(repr, path))  # from the path itself
        seen.add(sp.describe_decision(w))
    assert seen == {"'s'->1->'t'", "'s'->'1'->'t'", "'s'->'t'"}
    # Labels that print apart keep str.
    H = nx.relabel_nodes(G, {"1": "one"})
    sp = ShortestPath.from_networkx(H, "s", "t")
    w = np.zeros(sp.n_costs)
    w[[k for k, e in enumerate(H.edges()) if e in {("s", "one"), ("one", "t")}]] = 1.0
    assert sp.describe_decision(w) == "s->one->t"
