"""problem_from_dict (spotree/problems/_io.py): round trips and one-line errors naming the key."""

import json

import numpy as np
import pytest
import scipy.sparse as sp

from spotree.problems import (Assignment, FiniteDecisions, Knapsack, LinearProgram,
                              ShortestPath, load_problem, news_recommendation, problem_from_dict)
from spotree.problems._io import SPEC_TYPES, validate_problem_spec


def market_split_spec():
    """A small infeasible 0/1 market-split MILP (about 700 bytes of JSON)."""
    rng = np.random.default_rng(0)
    A = rng.integers(0, 100, size=(4, 30))
    return {"type": "linear_program", "A_eq": A.tolist(), "b_eq": (A.sum(axis=1) // 2).tolist(),
            "bounds": [0, 1], "integrality": [1] * 30}


def round_trip_problems():
    sparse = LinearProgram(A_ub=sp.csr_matrix(np.array([[1.0, 0, 2, 0], [0, 1, 0, 1]])),
                           b_ub=[3.0, 2.0], A_eq=sp.csr_matrix(np.ones((1, 4))), b_eq=[1.5],
                           bounds=[(0, 1), (0, 2), (-1, 1), (0, None)],
                           variable_names=["a", "b", "c", "d"])
    return [
        ShortestPath((4, 4)),
        ShortestPath((2, 3), sense="max"),
        FiniteDecisions(np.eye(3)),
        FiniteDecisions([[0.5, -1.25], [1.0, 2.0]], sense="max"),
        news_recommendation(random_state=0),
        LinearProgram(A_ub=[[1.0, 2.0, 0.5]], b_ub=[4.0], A_eq=[[1.0, 0.0, 1.0]], b_eq=[1.0],
                      bounds=[(0, None), (-1, 3), (None, 2)], integrality=[0, 1, 0],
                      sense="max", basis_cache=False),
        LinearProgram(bounds=[(0, 1), (-1, 2), (3, 3)]),  # bounds only
        sparse,
        Knapsack([[3.5, 4, 5.25], [2, 2, 3]], [8, 5]),
        Knapsack([[3, 4, 5, 1]], [7], sense="min", method="bb", max_nodes=1000),
        ShortestPath.from_edges(5, [(0, 1), (0, 2), (1, 3), (2, 3), (3, 4), (1, 4)], 0, 4),
        ShortestPath.from_edges(3, [(0, 1), (1, 2), (0, 2)], 0, 2, sense="max"),
        Assignment(3),
        Assignment(2, 4, sense="max", allowed=[[1, 1, 0, 1], [0, 1, 1, 1]]),
    ]


@pytest.mark.parametrize("problem", round_trip_problems(), ids=repr)
def test_to_dict_round_trips(problem):
    spec = json.loads(json.dumps(problem.to_dict()))
    again = problem_from_dict(spec)
    assert type(again) is type(problem)
    assert again.to_dict() == problem.to_dict()
    C = np.random.default_rng(0).normal(size=(30, problem.n_costs))
    W, z = problem.solve(C)
    W2, z2 = again.solve(C)
    np.testing.assert_allclose(z2, z, rtol=1e-9, atol=1e-9)
    if isinstance(problem, LinearProgram):
        assert sp.issparse(again.A_ub) == sp.issparse(problem.A_ub)
        assert again.variable_names == problem.variable_names


def test_every_spec_type_has_a_round_trip_test():
    covered = {p.to_dict()["type"] for p in round_trip_problems()}
    assert covered == set(SPEC_TYPES)


def test_from_file_problem_round_trips(tmp_path):
    path = tmp_path / "m.lp"
    path.write_text("maximize\n obj: x + y + z\nsubject to\n c1: x + y <= 4\n"
                    " c2: x - z >= -2\n c3: x + 2 y + z = 3\nbounds\n x <= 10\n"
                    " -5 <= y <= 5\n z <= 8\ngeneral\n y\nend\n")
    problem = LinearProgram.from_file(path)
    spec = json.loads(json.dumps(problem.to_dict()))
    again = problem_from_dict(spec)
    assert again.to_dict() == problem.to_dict()
    assert again.variable_names == ["x", "y", "z"] and again.is_milp
    C = np.random.default_rng(1).normal(size=(20, 3))
    np.testing.assert_allclose(again.solve(C)[1], problem.solve(C)[1], rtol=1e-9, atol=1e-9)


def test_load_problem_reads_what_to_dict_writes(tmp_path):
    # Issue 9: load_problem rejected the 'basis_cache' key that to_dict writes.
    problem = news_recommendation(random_state=2)
    path = tmp_path / "news.json"
    path.write_text(json.dumps(problem.to_dict()))
    again = load_problem(path)
    np.testing.assert_array_equal(again.A_ub, problem.A_ub)
    assert again.basis_cache is True and again.sense == "max"


LP = {"type": "linear_program", "A_ub": [[1, 1]], "b_ub": [1]}


@pytest.mark.parametrize("spec, match", [
    ({**LP, "A_ub": [[1, float("nan")]]}, r"key 'A_ub': A_ub\[0\]\[1\] must be a finite "
                                          r"number; got nan"),
    ({**LP, "b_ub": [float("inf")]}, r"key 'b_ub': b_ub\[0\] must be a finite number; got inf"),
    ({**LP, "A_ub": [[1, True]]}, r"key 'A_ub': A_ub\[0\]\[1\] must be a finite number; "
                                  r"got true"),
    ({**LP, "A_ub": [[1, "2"]]}, r"key 'A_ub': A_ub\[0\]\[1\] must be a finite number; got '2'"),
    ({**LP, "A_ub": "[[1, 1]]"}, r"key 'A_ub': must be a 2-D array"),
    ({**LP, "b_ub": 1}, r"key 'b_ub': must be a list"),
    ({**LP, "bounds": [0, float("nan")]}, r"key 'bounds': bounds\[1\] must be a finite number"),
    ({**LP, "bounds": [[0, 1], [0, float("inf")]]},
     r"key 'bounds': bounds\[1\]\[1\] must be a finite number"),
    ({**LP, "bounds": [[0, 1]]}, r"key 'bounds': has 1 pairs but the constraint matrices "
                                 r"have 2 columns"),
    ({**LP, "bounds": "0,1"}, r"key 'bounds': must be a \[lower, upper\] pair"),
    ({**LP, "integrality": [1, 2]}, r"key 'integrality': integrality\[1\] must be an int in "
                                    r"\[0, 1\]; got 2"),
    ({**LP, "integrality": [1]}, r"key 'integrality': must be null or a list of 2 entries"),
    ({**LP, "integrality": [True, False]}, r"key 'integrality': integrality\[0\] must be an int "
                                            r"in \[0, 1\]; got true"),
    ({**LP, "variable_names": ["a", 1]}, r"key 'variable_names': variable_names\[1\] "
                                            r"must be a str; got 1"),
    ({**LP, "variable_names": ["a", "a"]}, r"'variable_names' parameter of LinearProgram "
                                           r"has duplicate names: 'a'"),
    ({**LP, "basis_cache": "yes"}, r"key 'basis_cache': must be true or false"),
    ({**LP, "sense": "maximize"}, r"key 'sense': must be one of 'min', 'max'; got "
                                   r"'maximize'"),
    ({**LP, "cache": True}, r"has unexpected keys: 'cache'; allowed: .*basis_cache"),
    ({**LP, "A_ub": {"shape": [1, 2], "row": [0], "col": [2], "data": [1.0]}},
     r"key 'A_ub': A_ub\.col\[0\] must be an int in \[0, 1\]; got 2"),
    ({**LP, "A_ub": {"shape": [1, 2], "row": [0], "col": [0]}},
     r"key 'A_ub': A_ub\.data is missing"),
    ({**LP, "A_ub": {"shape": [1, 2], "row": [0], "col": [0, 1], "data": [1.0]}},
     r"key 'A_ub': 'row', 'col' and 'data' must have the same length"),
    ({**LP, "A_ub": {"shape": [1, 2], "row": [0], "col": [0], "data": [float("nan")]}},
     r"key 'A_ub': A_ub\.data\[0\] must be a finite number"),
    ({**LP, "A_ub": {"shape": [3_000_000, 2], "row": [0], "col": [0], "data": [1.0]},
      "b_ub": [1]}, r"key 'A_ub': describes 3,000,000 rows; problem specs are limited to "
                    r"1,000,000 rows"),
    ({**LP, "A_ub": {"shape": [1, 10**12], "row": [0], "col": [0], "data": [1.0]}},
     r"key 'A_ub': describes 1,000,000,000,000 columns"),
    ({"type": "linear_program", "bounds": [0, 1]}, r"needs 'A_ub' and/or 'A_eq'"),
    ({"type": "linear_program", "b_eq": [1]}, r"key 'b_eq': is given without 'A_eq'"),
    ({"type": "shortest_path", "grid": [5000, 5000]}, r"key 'grid': describes 49,990,000 "
                                                      r"edges"),
    ({"type": "shortest_path", "grid": [4, True]},
     r"key 'grid': grid\[1\] must be an int >= 1; got true"),
    ({"type": "finite", "decisions": [[1, 0], [0]]},
     r"key 'decisions': decisions\[1\] must have 2 entries; got 1"),
    ({"type": "finite", "decisions": []}, r"key 'decisions': the candidate decisions V must "
                                          r"be a 2-D array"),
    ({"type": "finite", "decisions": [[1, 0]], "name": 3, "Name": "x"},
     r"unexpected keys: 'Name'"),
    ({"type": "knapsack", "weights": [[1, 2]]}, r"'knapsack' is missing the key 'capacities'"),
    ({"type": "knapsack", "weights": [[1, 2]], "capacities": [3, 4]},
     r"key 'capacities': has 2 entries but 'weights' has 1 resource rows"),
    ({"type": "knapsack", "weights": [[1, float("nan")]], "capacities": [3]},
     r"key 'weights': weights\[0\]\[1\] must be a finite number"),
    ({"type": "knapsack", "weights": [[1, 2]], "capacities": [3], "max_nodes": 0},
     r"key 'max_nodes': must be an int >= 1; got 0"),
    ({"type": "knapsack", "weights": [[1, -2]], "capacities": [3]},
     r"'weights' parameter of Knapsack"),
    ({"type": "dag_shortest_path", "n_nodes": 3, "edges": [[0, 1], [1, 2.5]], "source": 0,
      "target": 2}, r"key 'edges': edges\[1\]\[1\] must be an int; got 2\.5"),
    ({"type": "dag_shortest_path", "n_nodes": 10**9, "edges": [[0, 1]], "source": 0,
      "target": 1}, r"key 'n_nodes': describes 1,000,000,000 nodes"),
    ({"type": "dag_shortest_path", "n_nodes": 3, "edges": [[0, 1], [1, 0]], "source": 0,
      "target": 1}, r"cycle"),
])
def test_bad_specs_name_the_key(spec, match):
    with pytest.raises(ValueError, match=match) as info:
        problem_from_dict(spec)
    assert "\n" not in str(info.value)


def test_validate_problem_spec_drops_info_keys_only():
    spec = {"type": "finite", "decisions": [[1, 0]], "name": "roads", "description": "x"}
    assert validate_problem_spec(spec) == {"type": "finite", "decisions": [[1, 0]]}


# ------------------------------------------------------------ time limits
def test_problem_from_dict_limits_solver_work():
    spec = market_split_spec()
    with pytest.raises(ValueError, match=r"did not finish within the check time limit of "
                                         r"0\.5 s"):
        problem_from_dict(spec, check_time_limit=0.5)
    with pytest.raises(ValueError, match="'check_time_limit' parameter of problem_from_dict"):
        problem_from_dict(spec, check_time_limit=-1)


def test_model_file_with_hard_milp_fails_within_the_default_limit(tmp_path):
    # Issue 9: an ~800-byte file whose problem is a small infeasible market
    # split MILP kept loading busy for over 90 s. With the default limit
    # (DEFAULT_CHECK_TIME_LIMIT = 5 s) the load fails with a clear error.
    path = tmp_path / "split.json"
    path.write_text(json.dumps(market_split_spec()))
    assert path.stat().st_size < 1000
    with pytest.raises(ValueError, match=r"split\.json: The feasibility check of the "
                                         r"LinearProgram did not finish within the check "
                                         r"time limit of 5 s"):
        load_problem(path)


def test_deeply_nested_json_is_a_value_error(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"type": "finite", "decisions": ' + "[" * 200_000 + "]" * 200_000 + "}")
    with pytest.raises(ValueError, match=r"deep\.json is not a problem spec file \(arrays or "
                                    r"objects nested more than 100 levels deep\)"):
        load_problem(path)
