"""The HiGHS wrapper (spotree/problems/_highs.py) against scipy and highspy itself."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from spotree.problems import _highs


def model(A, rl, ru, lo, hi, integrality=None):
    return _highs.HighsModel(sp.csr_matrix(np.asarray(A, dtype=float)), np.asarray(lo, float),
                             np.asarray(hi, float), np.asarray(rl, float),
                             np.asarray(ru, float), integrality)


def test_solve_matches_linprog_with_ranged_rows():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(5, 6))
    x0 = rng.uniform(0, 1, 6)
    rl, ru = A @ x0 - 0.5, A @ x0 + 0.5
    m = model(A, rl, ru, np.zeros(6), np.ones(6))
    for c in rng.normal(size=(20, 6)):
        status, w = m.solve(c)
        assert status == _highs.OPTIMAL
        ref = linprog(c, A_ub=np.vstack([A, -A]), b_ub=np.r_[ru, -rl], bounds=(0, 1))
        assert abs(c @ w - ref.fun) <= 1e-9 * max(1, abs(ref.fun))


def test_status_strings():
    infeasible = model([[1.0, 1.0]], [3.0], [np.inf], [0, 0], [1, 1])
    assert infeasible.solve(np.ones(2)) == (_highs.INFEASIBLE, None)
    assert "nfeasible" in infeasible.status_name()
    unbounded = model([[1.0, -1.0]], [-np.inf], [1.0], [0, 0], [np.inf, np.inf])
    status, w = unbounded.solve(np.array([-1.0, 0.0]))
    assert status in (_highs.UNBOUNDED, _highs.INFEASIBLE_OR_UNBOUNDED) and w is None


def test_time_limit_status_and_reset():
    rng = np.random.default_rng(0)
    A = rng.integers(0, 100, size=(4, 30)).astype(float)
    b = np.floor(A.sum(axis=1) / 2)
    m = model(A, b, b, np.zeros(30), np.ones(30), integrality=np.ones(30))
    assert m.solve(np.zeros(30), time_limit=0.3) == (_highs.TIME_LIMIT, None)
    assert _highs._option(m.h, "time_limit") == 0.3
    # The limit applies to that run only.
    easy = model([[1.0, 1.0]], [1.0], [1.0], [0, 0], [1, 1], integrality=[1, 1])
    assert easy.solve(np.array([1.0, 2.0]), time_limit=5.0)[0] == _highs.OPTIMAL
    assert _highs._option(easy.h, "time_limit") == 5.0
    status, w = easy.solve(np.array([2.0, 1.0]))
    assert status == _highs.OPTIMAL and list(w) == [0.0, 1.0]
    assert _highs._option(easy.h, "time_limit") == np.inf


def test_basic_variables_and_transpose_solve_match_highspy_basis():
    import highspy

    rng = np.random.default_rng(1)
    A = rng.normal(size=(4, 7))
    x0 = rng.uniform(0, 1, 7)
    rl = np.array([-np.inf, A[1] @ x0 - 1, A[2] @ x0, -np.inf])
    ru = np.array([A[0] @ x0 + 1, np.inf, A[2] @ x0, A[3] @ x0 + 0.1])
    m = model(A, rl, ru, np.zeros(7), np.ones(7))
    c = rng.normal(size=7)
    assert m.solve(c)[0] == _highs.OPTIMAL
    basic = m.basic_variables()
    # The same set from HiGHS's basis statuses (columns, then rows).
    b = m.h.getBasis()
    statuses = list(b.col_status) + list(b.row_status)
    expected = {k for k, s in enumerate(statuses) if s == highspy.HighsBasisStatus.kBasic}
    assert set(basic.tolist()) == expected and len(basic) == 4
    # B^T y = rhs with B the basic columns of [A, I], in that order.
    full = np.hstack([A, np.eye(4)])
    rhs = rng.normal(size=4)
    y = m.transpose_solve(rhs)
    np.testing.assert_allclose(full[:, basic].T @ y, rhs, atol=1e-10)
    # For the costs of the basic variables, y are HiGHS's row duals (HiGHS
    # solved c scaled by a power of two to a largest entry in [0.5, 1)).
    cb = np.where(basic < 7, c[np.minimum(basic, 6)], 0.0)
    scale = 2.0 ** -np.frexp(np.abs(c).max())[1]
    assert 0.5 <= scale * np.abs(c).max() < 1.0
    np.testing.assert_allclose(m.transpose_solve(scale * cb), m.h.getSolution().row_dual,
                               atol=1e-10)


def test_new_highs_is_silent(capfd):
    m = model([[1.0, 1.0]], [1.0], [1.0], [0, 0], [1, 1])
    m.solve(np.array([1.0, 2.0]))
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_read_model_returns_the_file_data(tmp_path):
    path = tmp_path / "m.lp"
    path.write_text("maximize\n obj: 2 x + 3 y - z\nsubject to\n c1: x + y <= 4\n"
                    " c2: x - y + z >= -2\n c3: x + 2 y = 3\nbounds\n x <= 10\n"
                    " y free\n -1 <= z <= 1\ngeneral\n y\nend\n")
    data = _highs.read_model(str(path))
    assert data["col_names"] == ["x", "y", "z"] and data["sense"] == "max"
    np.testing.assert_array_equal(data["A"].toarray(), [[1, 1, 0], [1, -1, 1], [1, 2, 0]])
    np.testing.assert_array_equal(data["row_lower"], [-np.inf, -2, 3])
    np.testing.assert_array_equal(data["row_upper"], [4, np.inf, 3])
    np.testing.assert_array_equal(data["col_lower"], [0, -np.inf, -1])
    np.testing.assert_array_equal(data["col_upper"], [10, np.inf, 1])
    np.testing.assert_array_equal(data["integrality"], [0, 1, 0])
    np.testing.assert_array_equal(data["costs"], [2, 3, -1])


def test_read_model_error_carries_highs_reason(tmp_path, capfd):
    bad = tmp_path / "bad.mps"
    bad.write_text("NAME x\nROWS\n N  OBJ\n Q  R1\nCOLUMNS\nENDATA\n")
    with pytest.raises(ValueError, match=r"HiGHS could not read .*bad\.mps: .*R1"):
        _highs.read_model(str(bad))
    out, err = capfd.readouterr()
    assert "ERROR" not in out + err  # the log went to a file, not the console
    assert not list(tmp_path.glob("*.log"))


def test_far_cost_vectors_start_from_the_reference_basis():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(6, 10))
    x0 = rng.uniform(0, 1, 10)
    b = A @ x0 + 0.5
    m = model(A, np.full(6, -np.inf), b, np.zeros(10), np.ones(10))
    m.far_start = "reference"
    c = rng.uniform(0.5, 1.5, 10)
    m.solve(c)
    m.solve(3.0 * c + 1e-3 * rng.uniform(size=10))  # same direction: from the last basis
    assert m.n_far == 0
    c_ref = rng.uniform(-1.5, -0.5, 10)
    assert m.set_reference(c_ref) == _highs.OPTIMAL
    far = rng.uniform(0.5, 1.5, 10) * np.where(rng.random(10) < 0.5, -1.0, 1.0)
    before = m.n_far
    for cost in (far, 2.0 * c_ref, far):  # each far from the one before
        status, w = m.solve(cost)
        assert status == _highs.OPTIMAL
        ref = linprog(cost, A_ub=A, b_ub=b, bounds=(0, 1))
        assert abs(cost @ w - ref.fun) <= 1e-9 * max(1, abs(ref.fun))
        if cost is not far:
            # The reference basis is optimal for its own direction: no
            # simplex iteration when the solve starts from it.
            assert m.h.getInfo().simplex_iteration_count == 0
    assert m.n_far == before + 3


def test_a_primal_run_that_stops_short_is_solved_again():
    # With HiGHS 1.16 the warm primal simplex stops on row 5 of this sequence
    # with status "unknown" (one dual infeasibility left); the model solves
    # it again from scratch with the dual method. Every row must be optimal.
    rng = np.random.default_rng(1)
    A = rng.uniform(1, 5, size=(2, 9)).round(2)
    b = A.sum(axis=1) / 2
    m = model(A, np.full(2, -np.inf), b, np.zeros(9), np.ones(9))
    for c in -np.random.default_rng(3).normal(size=(10, 9)):
        status, w = m.solve(c)
        assert status == _highs.OPTIMAL
        ref = linprog(c, A_ub=A, b_ub=b, bounds=(0, 1))
        assert abs(c @ w - ref.fun) <= 1e-9 * max(1, abs(ref.fun))


def test_a_deferred_reference_is_solved_only_when_a_far_cost_vector_needs_it():
    rng = np.random.default_rng(5)
    A = rng.normal(size=(6, 10))
    b = A @ rng.uniform(0, 1, 10) + 0.5
    m = model(A, np.full(6, -np.inf), b, np.zeros(10), np.ones(10))
    m.far_start = "reference"
    c = rng.uniform(0.5, 1.5, 10)
    m.solve(c)
    c_ref = rng.uniform(-1.5, -0.5, 10)
    m.defer_reference(c_ref)
    m.solve(1.01 * c)  # near: no reference solved
    assert m._reference is None and m.n_far == 0
    status, w = m.solve(2.0 * c_ref)  # far: the reference is solved, then used
    assert status == _highs.OPTIMAL and m._reference is not None
    assert m.h.getInfo().simplex_iteration_count == 0
    ref = linprog(c_ref, A_ub=A, b_ub=b, bounds=(0, 1))
    assert abs(c_ref @ w - ref.fun) <= 1e-9 * max(1, abs(ref.fun))


def test_far_start_scratch_solves_from_scratch_with_the_dual_method():
    rng = np.random.default_rng(6)
    A = rng.normal(size=(8, 14))
    b = A @ rng.uniform(0, 1, 14) + 0.5
    C = rng.uniform(-1, 1, size=(6, 14))
    fresh = []
    for c in C:  # each on a new model: HiGHS from scratch
        m = model(A, np.full(8, -np.inf), b, np.zeros(14), np.ones(14))
        m.solve(c)
        fresh.append(m.h.getInfo().simplex_iteration_count)
    m = model(A, np.full(8, -np.inf), b, np.zeros(14), np.ones(14))
    m.far_start = "scratch"
    m.set_reference(-C[0])  # ignored by this start
    for c, it in zip(C, fresh):
        status, w = m.solve(c)
        assert status == _highs.OPTIMAL
        assert m.h.getInfo().simplex_iteration_count == it
        ref = linprog(c, A_ub=A, b_ub=b, bounds=(0, 1))
        assert abs(c @ w - ref.fun) <= 1e-9 * max(1, abs(ref.fun))


def test_auto_far_start_counts_simplex_iterations_a_primal_one_as_145_dual_ones():
    # The work of a far solve is HiGHS's own iteration count (plus one for the
    # run), not a measured time, so that the choice is the same on every run.
    rng = np.random.default_rng(4)
    A = rng.normal(size=(8, 14))
    b = A @ rng.uniform(0, 1, 14) + 0.5
    m = model(A, np.full(8, -np.inf), b, np.zeros(14), np.ones(14))
    m.set_reference(rng.uniform(-1, 1, 14))
    seen = {}
    for k in range(4):
        c = rng.uniform(-1, 1, 14) * (-1) ** k  # each far from the one before
        n_before = list(m._far_n)
        m.solve(c)
        arm = [a for a in (0, 1) if m._far_n[a] == n_before[a] + 1]
        assert len(arm) == 1
        arm = arm[0]
        its = m.h.getInfo().simplex_iteration_count
        if arm not in seen:  # an arm's first record is its work as it is
            weight = 1.45 if arm == m._FAR_REFERENCE else 1.0
            assert m._far_work[arm] == pytest.approx((its + 1) * weight)
            seen[arm] = its
    assert set(seen) == {m._FAR_SCRATCH, m._FAR_REFERENCE}
    assert seen[m._FAR_SCRATCH] > 0  # a dual run from scratch iterates


def test_auto_far_start_tries_both_then_keeps_the_cheaper_and_explores():
    m = model(np.ones((1, 2)), [-np.inf], [1.0], np.zeros(2), np.ones(2))
    scratch, reference = m._FAR_SCRATCH, m._FAR_REFERENCE
    picks = []
    for k in range(4):  # each start twice first
        m.n_far += 1
        arm = m._far_arm()
        picks.append(arm)
        m._record_far(arm, 1.0 if arm == scratch else 5.0)
    assert sorted(picks) == [scratch, scratch, reference, reference]
    picks = []
    for k in range(32):
        m.n_far += 1
        arm = m._far_arm()
        picks.append(arm)
        m._record_far(arm, 1.0 if arm == scratch else 5.0)
    # The cheaper start, except every _explore_every-th far solve.
    explored = sum(1 for n in range(5, 37) if n % m._explore_every == 0)
    assert explored >= 1
    assert picks.count(reference) == explored and picks.count(scratch) == 32 - explored
    # When the other start becomes cheaper, the decayed times follow.
    for k in range(64):
        m.n_far += 1
        arm = m._far_arm()
        m._record_far(arm, 9.0 if arm == scratch else 0.5)
    assert m._far_arm() == reference or m.n_far % m._explore_every == 0
    m.far_start = "scratch"
    assert m._far_arm() == scratch
    m.far_start = "reference"
    assert m._far_arm() == reference
