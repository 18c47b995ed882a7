"""Problem spec files (JSON / YAML) and their one-line errors."""

import json
from pathlib import Path

import numpy as np
import pytest

from spotree.problems import FiniteDecisions, ShortestPath
from spotree.problems._spec import load_problem, validate_problem_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_example_shortest_path_and_finite_specs_load():
    sp = load_problem(EXAMPLES / "shortest_path.json")
    assert isinstance(sp, ShortestPath) and sp.grid == (4, 4) and sp.n_costs == 24
    roads = load_problem(EXAMPLES / "finite.json")
    assert isinstance(roads, FiniteDecisions)
    np.testing.assert_array_equal(roads.V, np.eye(2))


def test_example_news_lp_spec_validates():
    spec = json.loads((EXAMPLES / "news_lp.json").read_text())
    clean = validate_problem_spec(spec)
    assert "name" not in clean and clean["type"] == "linear_program"
    assert np.asarray(clean["A_ub"]).shape == (5, 6)
    problem = load_problem(EXAMPLES / "news_lp.json")
    assert problem.n_costs == 6 and problem.sense == "max"


def test_yaml_spec_equals_json_spec(tmp_path):
    pytest.importorskip("yaml")
    (tmp_path / "p.yaml").write_text("type: finite\nsense: max\ndecisions:\n"
                                     "  - [1, 0, 0]\n  - [0, 1, 0]\n")
    p = load_problem(tmp_path / "p.yaml")
    assert p.sense == "max" and p.V.shape == (2, 3)


@pytest.mark.parametrize("text, match", [
    ('{"type": "shortest_path", "grid": [4, 4]', "invalid JSON at line 1"),
    ('[1, 2]', "must be a JSON object"),
    ('{"grid": [4, 4]}', "'type' must be one of"),
    ('{"type": "bogus"}', "'type' must be one of"),
    ('{"type": "shortest_path", "grid": [4]}', "key 'grid'"),
    ('{"type": "shortest_path", "gird": [4, 4]}', "unexpected key"),
    ('{"type": "finite"}', "is missing the key"),
    ('{"type": "finite", "decisions": [[1, 0], [0]]}', r"decisions\[1\] must have 2 entries"),
    ('{"type": "finite", "decisions": [[1, "a"]]}', "finite number"),
    ('{"type": "finite", "decisions": [[1, 0]], "sense": "minimize"}', "'sense'"),
    ('{"type": "linear_program", "b_ub": [1]}', "needs 'A_ub'"),
    ('{"type": "linear_program", "A_ub": [[1, 1]], "b_ub": [1, 2]}', "has 2 entries"),
    ('{"type": "linear_program", "A_ub": [[1, 1]]}', "'b_ub'"),
    ('{"type": "linear_program", "A_ub": [[1, 1]], "b_ub": [1], "A_eq": [[1, 1, 1]], '
     '"b_eq": [1]}', "columns"),
])
def test_malformed_specs_give_one_line_errors_naming_the_file(tmp_path, text, match):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=match) as info:
        load_problem(path)
    msg = str(info.value)
    assert msg.startswith(str(path)) and "\n" not in msg


def test_missing_and_binary_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="not found"):
        load_problem(tmp_path / "none.json")
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00\x01")
    with pytest.raises(ValueError, match="bin.json"):
        load_problem(tmp_path / "bin.json")


def test_every_spec_quoted_in_examples_readme_builds_what_it_says():
    """The knapsack and DAG types were missing from the README's schema."""
    import re

    from spotree.problems import problem_from_dict

    text = (EXAMPLES / "README.md").read_text()
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", text, flags=re.S)]
    assert {b["type"] for b in blocks} == {"shortest_path", "linear_program", "finite",
                                           "knapsack", "dag_shortest_path", "assignment"}
    for spec in blocks:
        problem = problem_from_dict(spec)
        if spec["type"] == "knapsack":
            # Brute force over the 16 subsets of the quoted 4 items.
            import itertools

            subsets = np.array(list(itertools.product([0, 1], repeat=4)), dtype=float)
            weights = np.asarray(spec["weights"], dtype=float)
            feasible = subsets[(subsets @ weights.T <= spec["capacities"]).all(axis=1)]
            c = np.array([[4.0, 5.0, 6.0, 7.0]])
            assert problem.sense == "max"
            assert problem.solve(c)[1][0] == (c @ feasible.T).max()
        if spec["type"] == "dag_shortest_path":
            # The quoted graph's three paths 0-1-3, 0-2-3, 0-1-2-3, by edge index.
            paths = np.array([[1, 0, 0, 1, 0], [0, 1, 0, 0, 1], [1, 0, 1, 0, 1]], dtype=float)
            c = np.array([[1.0, 5.0, 1.0, 9.0, 1.0]])
            assert problem.solve(c)[1][0] == (c @ paths.T).min()
        if spec["type"] == "assignment":
            # Brute force over the 24 maps of 3 agents to distinct tasks of 4, minus
            # those using a forbidden pair.
            import itertools

            allowed = np.array(spec["allowed"])
            c = np.arange(12.0)[::-1].reshape(1, 12)
            best = min(sum(c[0, 4 * i + t] for i, t in enumerate(ts))
                       for ts in itertools.permutations(range(4), 3)
                       if all(allowed[i, t] for i, t in enumerate(ts)))
            assert problem.n_costs == 12 and problem.solve(c)[1][0] == best


@pytest.mark.parametrize("name, text, match", [
    ("twice.json", '{"type": "shortest_path", "grid": [3, 3], "grid": [5, 5]}',
     r"twice\.json is not a problem spec file \(the key 'grid' appears twice in one object\)"),
    ("twice.yaml", "type: shortest_path\ngrid: [3, 3]\ngrid: [5, 5]\n",
     r"twice\.yaml: invalid YAML at line 3, column 1: the key 'grid' appears twice"),
    ("empty.yaml", "# nothing yet\n", r"empty\.yaml: the YAML file holds no problem spec"),
])
def test_a_key_given_twice_is_refused(tmp_path, name, text, match):
    # json and PyYAML keep the last value without a word: the 5x5 grid was
    # built from a file whose first "grid" says 3x3.
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError, match=match):
        load_problem(path)


def test_a_spec_whose_checks_run_out_of_time_keeps_the_error_class(tmp_path):
    # load_problem re-raised every error as a plain ValueError, so its callers
    # (the CLI) could not tell a slow check from a malformed spec.
    from spotree.problems._linear import CheckTimeLimitError

    rng = np.random.default_rng(0)
    A = rng.integers(0, 100, size=(4, 30))
    spec = {"type": "linear_program", "A_eq": A.tolist(), "b_eq": (A.sum(axis=1) // 2).tolist(),
            "bounds": [0, 1], "integrality": [1] * 30}
    path = tmp_path / "split.json"
    path.write_text(json.dumps(spec))
    with pytest.raises(CheckTimeLimitError, match=r"split\.json: The feasibility check"):
        load_problem(path, check_time_limit=0.3)
