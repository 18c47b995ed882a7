"""LinearProgram.from_file: MPS and LP files written by highspy, PuLP and by hand.

Every model is also solved by scipy.optimize.milp from the same row-bound
data (``LinearConstraint(A, row_lower, row_upper)``), which reads ranged
rows and bounds directly, independently of spotree's conversion.
"""

import json

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from spotree.problems import LinearProgram, problem_from_dict

N_COSTS = 50


def scipy_values(data, C, sense):
    """Optimal values of the model for each cost row, by scipy's milp."""
    sign = 1.0 if sense == "min" else -1.0
    out = []
    for c in C:
        res = milp(sign * c, constraints=LinearConstraint(data["A"], data["rl"], data["ru"]),
                   bounds=Bounds(data["lo"], data["hi"]), integrality=data["integ"],
                   options={"mip_rel_gap": 0.0})
        assert res.status == 0, res.message
        out.append(sign * res.fun)
    return np.array(out)


def random_model(seed, n=8, integer=False):
    """Row-bound data with every row kind and bound kind, feasible at x0, bounded.

    Rows: <=, >=, =, ranged, plus one ranged row per variable without a
    finite box (so that the LP is bounded only through constraints).
    Columns: boxed, lower only, upper only, free, fixed, negative bounds;
    with ``integer=True`` every other column is integer.
    """
    rng = np.random.default_rng(seed)
    integ = np.zeros(n, dtype=int)
    if integer:
        integ[::2] = 1
    x0 = rng.uniform(-2, 2, n)
    x0[integ == 1] = np.round(x0[integ == 1])
    kinds = ["box", "lower", "upper", "free", "fixed", "box", "lower", "upper"]
    lo, hi = np.full(n, -np.inf), np.full(n, np.inf)
    for j in range(n):
        k = kinds[j % len(kinds)]
        if k in ("box", "lower"):
            lo[j] = np.floor(x0[j]) - rng.integers(0, 2)
        if k in ("box", "upper"):
            hi[j] = np.ceil(x0[j]) + rng.integers(0, 2)
        if k == "fixed":
            lo[j] = hi[j] = x0[j]
    rows, rl, ru = [], [], []
    for i in range(6):
        a = rng.normal(size=n) * (rng.random(n) < 0.6)
        a[i % n] += 1.0
        act = a @ x0
        kind = ["le", "ge", "eq", "range"][i % 4]
        rows.append(a)
        if kind == "le":
            rl.append(-np.inf), ru.append(act + rng.uniform(0.1, 1))
        elif kind == "ge":
            rl.append(act - rng.uniform(0.1, 1)), ru.append(np.inf)
        elif kind == "eq" and not integer:
            rl.append(act), ru.append(act)
        else:
            rl.append(act - rng.uniform(0.1, 1)), ru.append(act + rng.uniform(0.1, 1))
    for j in np.flatnonzero(~(np.isfinite(lo) & np.isfinite(hi))):
        a = np.zeros(n)
        a[j] = 1.0
        a[(j + 1) % n] = 0.5
        act = a @ x0
        rows.append(a), rl.append(act - 3.0), ru.append(act + 3.0)
    A = sp.csc_matrix(np.array(rows))
    names = [f"v{j}_{kinds[j % len(kinds)]}" for j in range(n)]
    return dict(A=A, rl=np.array(rl), ru=np.array(ru), lo=lo, hi=hi, integ=integ,
                names=names, x0=x0)


def write_with_highspy(data, path, sense="min"):
    import highspy

    A = data["A"]
    m, n = A.shape
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, m
    lp.col_cost_ = np.arange(1.0, n + 1)
    lp.col_lower_ = np.where(np.isinf(data["lo"]), -inf, data["lo"])
    lp.col_upper_ = np.where(np.isinf(data["hi"]), inf, data["hi"])
    lp.row_lower_ = np.where(np.isinf(data["rl"]), -inf, data["rl"])
    lp.row_upper_ = np.where(np.isinf(data["ru"]), inf, data["ru"])
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = n, m
    lp.a_matrix_.start_ = A.indptr.astype(np.int32)
    lp.a_matrix_.index_ = A.indices.astype(np.int32)
    lp.a_matrix_.value_ = A.data
    lp.col_names_ = data["names"]
    lp.row_names_ = [f"r{i}" for i in range(m)]
    if data["integ"].any():
        lp.integrality_ = [highspy.HighsVarType.kInteger if v else
                           highspy.HighsVarType.kContinuous for v in data["integ"]]
    if sense == "max":
        lp.sense_ = highspy.ObjSense.kMaximize
    h = highspy._core._Highs() if hasattr(highspy, "_core") else highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.passModel(lp) != highspy.HighsStatus.kError
    assert h.writeModel(str(path)) == highspy.HighsStatus.kOk


# ---------------------------------------------------------- highspy files
@pytest.mark.parametrize("ext", [".mps", ".lp"])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("integer", [False, True])
def test_highspy_written_files_match_scipy(tmp_path, ext, seed, integer):
    data = random_model(seed, integer=integer)
    path = tmp_path / f"model{ext}"
    write_with_highspy(data, path)
    lp = LinearProgram.from_file(path)
    assert lp.n_costs == data["A"].shape[1]
    assert lp.variable_names == data["names"]
    assert lp.sense == "min"
    assert lp.is_milp == bool(integer)
    if integer:
        np.testing.assert_array_equal(lp.integrality, data["integ"])
    C = np.random.default_rng(seed + 100).normal(size=(N_COSTS, lp.n_costs))
    W, z = lp.solve(C)
    expected = scipy_values(data, C, "min")
    np.testing.assert_allclose(z, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())
    # The decisions are feasible for the file's rows and bounds.
    act = W @ data["A"].T.toarray()
    assert (act >= data["rl"] - 1e-7).all() and (act <= data["ru"] + 1e-7).all()
    assert (W >= data["lo"] - 1e-7).all() and (W <= data["hi"] + 1e-7).all()


@pytest.mark.parametrize("ext", [".mps", ".lp"])
def test_file_sense_and_override(tmp_path, ext):
    data = random_model(3)
    path = tmp_path / f"model{ext}"
    write_with_highspy(data, path, sense="max")
    lp = LinearProgram.from_file(path)
    assert lp.sense == "max"
    C = np.random.default_rng(0).normal(size=(N_COSTS, lp.n_costs))
    np.testing.assert_allclose(lp.solve(C)[1], scipy_values(data, C, "max"), rtol=1e-9,
                               atol=1e-9)
    flipped = LinearProgram.from_file(path, sense="min")
    assert flipped.sense == "min"
    np.testing.assert_allclose(flipped.solve(C)[1], scipy_values(data, C, "min"), rtol=1e-9,
                               atol=1e-9)


def test_sparse_views_round_trip_and_keep_names(tmp_path):
    data = random_model(4)
    path = tmp_path / "model.mps"
    write_with_highspy(data, path)
    lp = LinearProgram.from_file(path)
    assert sp.issparse(lp.A_ub) and sp.issparse(lp.A_eq)
    # The linprog-style views describe the same set as the file's rows.
    ranged = np.isfinite(data["rl"]) & np.isfinite(data["ru"]) & (data["rl"] < data["ru"])
    n_le = int((np.isfinite(data["ru"]) & (data["rl"] < data["ru"])).sum())
    n_ge = int((np.isfinite(data["rl"]) & (data["rl"] < data["ru"])).sum())
    assert lp.A_ub.shape[0] == n_le + n_ge and ranged.any()
    assert lp.n_rows == data["A"].shape[0]  # a ranged row is one row inside
    spec = json.loads(json.dumps(lp.to_dict()))
    assert spec["variable_names"] == data["names"]
    assert set(spec["A_ub"]) == {"shape", "row", "col", "data"}
    again = problem_from_dict(spec)
    assert again.variable_names == data["names"] and sp.issparse(again.A_ub)
    assert again.to_dict() == lp.to_dict()
    C = np.random.default_rng(1).normal(size=(N_COSTS, lp.n_costs))
    np.testing.assert_allclose(again.solve(C)[1], lp.solve(C)[1], rtol=1e-9, atol=1e-9)


# ------------------------------------------------------- hand-written MPS
HAND_MPS = """\
NAME          HAND
OBJSENSE
    MAX
ROWS
 N  COST
 N  FREEROW
 L  LIM1
 G  LIM2
 E  MYEQN
 E  EQRNG
 L  RNGL
COLUMNS
    X1        COST         1.0   LIM1         1.0
    X1        LIM2         1.0   FREEROW      5.0
    X2        COST         2.0   LIM1         1.0
    X2        MYEQN       -1.0   EQRNG        1.0
    X3        COST        -1.0   MYEQN        1.0
    X3        RNGL         1.0
    X4        LIM2         1.0   EQRNG        1.0
    X4        RNGL         1.0
    MARKER                 'MARKER'                 'INTORG'
    X5        LIM1         1.0   RNGL         1.0
    MARKER                 'MARKER'                 'INTEND'
RHS
    RHS       LIM1         4.0   LIM2         1.0
    RHS       MYEQN        1.0   EQRNG        2.0
    RHS       RNGL         6.0   FREEROW    100.0
RANGES
    RNG       EQRNG       -1.5   RNGL         4.0
BOUNDS
 UP BND       X1           4.0
 MI BND       X2
 UP BND       X2           3.0
 LO BND       X3          -2.0
 UP BND       X3          10.0
 FR BND       X4
 BV BND       X5
ENDATA
"""


def test_hand_written_mps_row_and_bound_semantics(tmp_path):
    # Expected by the MPS rules: LIM1 <= 4; LIM2 >= 1; MYEQN = 1; an E row
    # with a negative range R is [rhs + R, rhs] = [0.5, 2]; an L row with
    # range R is [rhs - |R|, rhs] = [2, 6]; FREEROW (a second N row)
    # constrains nothing. Bounds: X1 in [0, 4] (default lower 0), X2 in
    # (-inf, 3] (MI), X3 in [-2, 10], X4 free, X5 binary.
    path = tmp_path / "hand.mps"
    path.write_text(HAND_MPS)
    lp = LinearProgram.from_file(path)
    assert lp.variable_names == ["X1", "X2", "X3", "X4", "X5"]
    assert lp.sense == "max"
    np.testing.assert_array_equal(lp.integrality, [0, 0, 0, 0, 1])
    assert lp.n_rows == 5
    A = np.array([[1, 1, 0, 0, 1],      # LIM1
                  [1, 0, 0, 1, 0],      # LIM2
                  [0, -1, 1, 0, 0],     # MYEQN
                  [0, 1, 0, 1, 0],      # EQRNG
                  [0, 0, 1, 1, 1]], dtype=float)  # RNGL
    data = dict(A=A, rl=np.array([-np.inf, 1, 1, 0.5, 2]), ru=np.array([4, np.inf, 1, 2, 6]),
                lo=np.array([0, -np.inf, -2, -np.inf, 0]), hi=np.array([4, 3, 10, np.inf, 1]),
                integ=np.array([0, 0, 0, 0, 1]))
    C = np.random.default_rng(5).normal(size=(N_COSTS, 5))
    np.testing.assert_allclose(lp.solve(C)[1], scipy_values(data, C, "max"), rtol=1e-9,
                               atol=1e-9)


# -------------------------------------------------------------- PuLP files
def test_pulp_written_files_match_scipy_by_name(tmp_path):
    pulp = pytest.importorskip("pulp")
    data = random_model(7, integer=True)
    A = data["A"].toarray()
    m, n = A.shape
    for sense_name, pulp_sense in (("min", pulp.LpMinimize), ("max", pulp.LpMaximize)):
        prob = pulp.LpProblem("spotree_test", pulp_sense)
        # prob.add_variable: PuLP >= 3.3.1, which the dev extra requires.
        new_var = prob.add_variable
        # Names that PuLP sorts differently from the model's column order.
        xs = [new_var(f"z{n - j:02d}_{data['names'][j]}",
                      None if np.isinf(data["lo"][j]) else data["lo"][j],
                      None if np.isinf(data["hi"][j]) else data["hi"][j],
                      cat="Integer" if data["integ"][j] else "Continuous")
              for j in range(n)]
        prob += pulp.lpSum((j + 1) * xs[j] for j in range(n))
        for i in range(m):
            expr = pulp.lpSum(A[i, j] * xs[j] for j in range(n) if A[i, j])
            lo_i, hi_i = data["rl"][i], data["ru"][i]
            if lo_i == hi_i:
                prob += expr == lo_i, f"r{i}"
            else:
                if np.isfinite(hi_i):
                    prob += expr <= hi_i, f"r{i}_le"
                if np.isfinite(lo_i):
                    prob += expr >= lo_i, f"r{i}_ge"
        for ext in (".mps", ".lp"):
            path = tmp_path / f"pulp_{sense_name}{ext}"
            (prob.writeMPS if ext == ".mps" else prob.writeLP)(str(path))
            # PuLP's MPS files carry the sense only in a comment
            # ("*SENSE:Maximize"), which HiGHS ignores: it was read as "min".
            lp = LinearProgram.from_file(path)
            assert lp.sense == sense_name
            # Map spotree's cost columns back to the model's by name.
            order = [[x.name for x in xs].index(name) for name in lp.variable_names]
            assert sorted(order) == list(range(n))
            C = np.random.default_rng(11).normal(size=(N_COSTS, n))
            np.testing.assert_allclose(lp.solve(C[:, order])[1],
                                       scipy_values(data, C, sense_name),
                                       rtol=1e-9, atol=1e-9)


# ------------------------------------------------------------------ errors
def test_missing_and_malformed_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="none.mps"):
        LinearProgram.from_file(tmp_path / "none.mps")
    with pytest.raises(ValueError, match="not a file"):
        LinearProgram.from_file(tmp_path)
    (tmp_path / "model.txt").write_text("x")
    with pytest.raises(ValueError, match=r"model.txt: unknown model file type.*'\.mps'"):
        LinearProgram.from_file(tmp_path / "model.txt")
    bad = tmp_path / "bad.mps"
    bad.write_text("NAME x\nROWS\n N  OBJ\n Q  R1\nCOLUMNS\nENDATA\n")
    with pytest.raises(ValueError, match=r"HiGHS could not read .*bad\.mps") as info:
        LinearProgram.from_file(bad)
    assert "\n" not in str(info.value)
    bad_lp = tmp_path / "bad.lp"
    bad_lp.write_text("minimize\n obj: x +\nsubject to\n c: x >=\nend\n")
    with pytest.raises(ValueError, match=r"HiGHS could not read .*bad\.lp"):
        LinearProgram.from_file(bad_lp)
    with pytest.raises(ValueError, match="sense must be 'min' or 'max'"):
        LinearProgram.from_file(bad_lp, sense="maximize")


def test_infeasible_and_unbounded_files_name_the_file(tmp_path):
    infeasible = tmp_path / "infeasible.lp"
    infeasible.write_text("minimize\n obj: x + y\nsubject to\n c1: x + y <= 1\n"
                          " c2: x + y >= 2\nend\n")
    with pytest.raises(ValueError, match=r"infeasible\.lp: The LinearProgram is infeasible"):
        LinearProgram.from_file(infeasible)
    unbounded = tmp_path / "unbounded.lp"
    unbounded.write_text("minimize\n obj: x\nsubject to\n c1: x - y <= 1\nend\n")
    with pytest.raises(ValueError, match=r"unbounded\.lp: The LinearProgram is unbounded: "
                                         r"variable w\[.\] \('[xy]'\) is unbounded above"):
        LinearProgram.from_file(unbounded)
    semi = tmp_path / "semi.lp"
    semi.write_text("minimize\n obj: x\nsubject to\n c1: x <= 5\nbounds\n x <= 4\n"
                    "semi-continuous\n x\nend\n")
    with pytest.raises(ValueError, match=r"semi\.lp: column 'x' is semi-continuous"):
        LinearProgram.from_file(semi)


def test_file_with_time_limit(tmp_path):
    # A market-split instance (see test_linear.py) as an LP file: the check
    # stops at the limit and the error names the file.
    rng = np.random.default_rng(0)
    A = rng.integers(0, 100, size=(4, 30))
    b = A.sum(axis=1) // 2
    rows = "\n".join(f" r{i}: " + " + ".join(f"{A[i, j]} x{j}" for j in range(30))
                     + f" = {b[i]}" for i in range(4))
    path = tmp_path / "split.lp"
    path.write_text("minimize\n obj: x0\nsubject to\n" + rows + "\nbinary\n"
                    + " ".join(f"x{j}" for j in range(30)) + "\nend\n")
    with pytest.raises(ValueError, match=r"split\.lp: The feasibility check .* did not "
                                         r"finish within the check time limit of 0\.5 s"):
        LinearProgram.from_file(path, check_time_limit=0.5)


_TYPO_MPS = ["NAME          assign", "ROWS", " N  OBJ", " E  C1", " L  C2", "COLUMNS",
             "    x0        C1        1.0", "    x0        OBJ       1.0",
             "    x1        C1        1.0   C2   2.0", "    x1        OBJ       1.0",
             "RHS", "    RHS       C1        1.0", "    RHS       C2        4.0",
             "BOUNDS", " UP BND       x0        1.0", " UP BND       x1        1.0",
             "ENDATA"]


@pytest.mark.parametrize("index, line, bad, section", [
    (6, "    x0        C1        abc", "abc", "COLUMNS"),
    (8, "    x1        C1        1.0   C2   1,5", "1,5", "COLUMNS"),
    (11, "    RHS       C1        one", "one", "RHS"),
    (15, " UP BND       x1        1.O", "1.O", "BOUNDS"),
])
def test_mps_with_a_value_that_is_not_a_number_is_malformed(tmp_path, index, line, bad,
                                                           section):
    # HiGHS reads "abc" as 0 without a word: the file must be refused, naming
    # the line, instead of becoming another model.
    path = tmp_path / "typo.mps"
    path.write_text("\n".join(_TYPO_MPS) + "\n")
    LinearProgram.from_file(path)  # the file as written is fine
    lines = list(_TYPO_MPS)
    lines[index] = line
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=rf"typo\.mps: malformed MPS file: line {index + 1}: "
                                         rf"'{bad}' in the {section} section is not a "
                                         r"number"):
        LinearProgram.from_file(path)


@pytest.mark.parametrize("index, line, what", [
    # A typo in a row name of COLUMNS, RHS or RANGES: HiGHS drops the entry
    # with a log warning, so the model would lose a coefficient or a bound.
    (8, "    x1        C1        1.0   C3   2.0", r'Row name "C3" in COLUMNS section is not '
                                                 r"defined"),
    (12, "    RHS       C4        4.0", r'Row name "C4" in RHS section is not defined'),
    (13, "RANGES\n    RNG       C5        2.0\nBOUNDS", r'Row name "C5" in RANGES section'),
    # A second value for the same entry: HiGHS keeps the first one silently.
    (9, "    x1        OBJ       1.0\n    x1        C2        3.0",
     r'Column "x1" has duplicate nonzero 3 in row "C2"'),
    (12, "    RHS       C2        4.0\n    RHS       C2        5.0",
     r'Row name "C2" in RHS section has duplicate value 5'),
    # FR then UP means (-inf, 1], but HiGHS keeps the first upper bound (+inf).
    (15, " FR BND       x1\n UP BND       x1        1.0",
     r'Column name "x1" in BOUNDS section has duplicate upper bound definition'),
])
def test_mps_entries_that_highs_would_ignore_are_refused(tmp_path, index, line, what):
    path = tmp_path / "typo.mps"
    lines = list(_TYPO_MPS)
    lines[index] = line
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"typo\.mps: malformed MPS file: " + what):
        LinearProgram.from_file(path)


def test_mps_bound_on_an_undefined_column_is_refused(tmp_path):
    # HiGHS would add the unknown column as a new variable: the cost vectors
    # would get one more entry than the model has columns.
    path = tmp_path / "typo.mps"
    lines = list(_TYPO_MPS)
    lines[15] = " UP BND       x2        1.0"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"typo\.mps: malformed MPS file: line 16: the BOUNDS "
                                         r"section names column 'x2', which is not in the "
                                         r"COLUMNS section"):
        LinearProgram.from_file(path)


def test_unbounded_file_variable_is_named_by_its_column_name(tmp_path):
    path = tmp_path / "free.lp"
    path.write_text("minimize\n obj: a + b\nsubject to\n c1: a + b <= 4\n"
                    "bounds\n a <= 3\n b free\nend\n")
    with pytest.raises(ValueError, match=r"free\.lp: The LinearProgram is unbounded: variable "
                                         r"w\[1\] \('b'\) is unbounded below"):
        LinearProgram.from_file(path)


def test_mps_free_bound_on_an_undefined_column_is_refused(tmp_path):
    path = tmp_path / "typo.mps"
    lines = list(_TYPO_MPS)
    lines[15] = " FR BND       x3"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"typo\.mps: malformed MPS file: line 16: the BOUNDS "
                                         r"section names column 'x3'"):
        LinearProgram.from_file(path)


def test_tree_exports_name_a_file_models_variables(tmp_path):
    # The leaves of a tree on a model file read "w = {0: 1}": the column
    # names the user wrote were lost in the exports.
    from spotree import SPOTree, export_text

    path = tmp_path / "plans.lp"
    path.write_text("minimize\n obj: a + b + c\nsubject to\n one: a + b + c = 1\n"
                    " half: b <= 0.5\nend\n")
    lp = LinearProgram.from_file(path)
    assert lp.describe_decision([0.0, 0.5, 0.5]) == "w = {b: 0.5, c: 0.5}"
    assert lp.describe_decision([0.0, 0.0, 0.0]) == "w = 0"
    rng = np.random.default_rng(0)
    X = rng.random((40, 1))
    C = np.column_stack([1 + X[:, 0], 2 - 2 * X[:, 0], np.full(40, 1.2)])
    text = export_text(SPOTree(lp, max_depth=1).fit(X, C))
    assert "decision: w = {a: 1}" in text and "decision: w = {b: 0.5, c: 0.5}" in text
    unnamed = LinearProgram(A_eq=[[1, 1, 1]], b_eq=[1], bounds=(0, 1))
    assert unnamed.describe_decision([0.0, 1.0, 0.0]) == "w = {1: 1}"


@pytest.mark.parametrize("head, sense", [
    ("OBJSENSE    MAXIMIZE", "max"),    # one line: HiGHS read it as a minimization
    ("OBJSENSE MAXIMISE", "max"),
    ("OBJSENSE MAX", "max"),
    ("OBJSENSE\n    MAXIMIZE", "max"),
    ("OBJSENSE\n    MIN", "min"),
    ("", "min"),
])
def test_mps_objective_sense_as_written(tmp_path, head, sense):
    path = tmp_path / "sense.mps"
    lines = list(_TYPO_MPS)
    if head:
        lines.insert(1, head)
    path.write_text("\n".join(lines) + "\n")
    lp = LinearProgram.from_file(path)
    assert lp.sense == sense
    # The decision follows the sense: x0 + x1 = 1 (C1), x in [0, 1]; costs (1, 2).
    W, z = lp.solve([[1.0, 2.0]])
    assert z[0] == (2.0 if sense == "max" else 1.0)
    assert LinearProgram.from_file(path, sense="min").sense == "min"  # an override still wins


def test_mps_negative_upper_bound_alone_names_the_convention(tmp_path):
    # The error said only 'lower bound 0.0 > upper bound -1.0'; some MPS
    # readers take such a column's lower bound as -infinity.
    path = tmp_path / "neg.mps"
    lines = list(_TYPO_MPS)
    lines[14] = " UP BND       x0        -1.0"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"neg\.mps: column 'x0' has lower bound 0\.0 > upper "
                                         r"bound -1\.0 \(an UP bound below 0 with no LO bound: "
                                         r"some MPS readers then take the lower bound as "
                                         r"-infinity"):
        LinearProgram.from_file(path)


def test_lp_constant_on_the_left_of_a_constraint_is_refused(tmp_path):
    # HiGHS reads "c: x + y + 2 <= 4" as x + y <= 4 (a log warning only): the
    # feasible set grew without a word.
    path = tmp_path / "const.lp"
    path.write_text("maximize\n obj: x + y\nsubject to\n c: x + y + 2 <= 4\n"
                    "bounds\n x <= 5\n y <= 5\nend\n")
    with pytest.raises(ValueError, match=r"const\.lp: malformed LP file: a constant on the "
                                         r"left-hand side of a constraint \(line 4, column "
                                         r"11\)"):
        LinearProgram.from_file(path)
    path.write_text("maximize\n obj: x + y\nsubject to\n c: x + y <= 2\n"
                    "bounds\n x <= 5\n y <= 5\nend\n")
    assert LinearProgram.from_file(path).solve([[1.0, 1.0]])[1][0] == 2.0


@pytest.mark.parametrize("value", ["1e-10", "3e-12"])
def test_mps_tiny_coefficients_are_read_as_written(tmp_path, value):
    # HiGHS's reader dropped entries below 1e-9 without a word (then, since
    # the refusal of ignored entries, the file was called malformed).
    path = tmp_path / "tiny.mps"
    # A row of tiny coefficients only: value * (x + y) <= 4 * value.
    path.write_text("NAME t\nROWS\n N obj\n L r1\nCOLUMNS\n"
                    f"    x obj 1 r1 {value}\n    y obj 1 r1 {value}\nRHS\n"
                    f"    RHS r1 {4 * float(value)!r}\nBOUNDS\n UP BND x 10\n UP BND y 10\n"
                    "ENDATA\n")
    lp = LinearProgram.from_file(path, sense="max")
    assert lp.A_ub.toarray().tolist() == [[float(value), float(value)]]
    assert lp.solve([[1.0, 2.0]])[1][0] == pytest.approx(8.0)  # y = 4, x = 0 (not 10 + 20)
    # A tiny entry next to a large one is kept in the model, and the warning
    # of a LinearProgram given such a matrix says HiGHS will read it as zero.
    path.write_text("NAME t\nROWS\n N obj\n L r1\nCOLUMNS\n    x obj 1 r1 1\n"
                    f"    y obj 1 r1 {value}\nRHS\n    RHS r1 4\nBOUNDS\n UP BND y 3\nENDATA\n")
    with pytest.warns(RuntimeWarning, match=r"HiGHS reads them as zero"):
        mixed = LinearProgram.from_file(path)
    assert mixed.A_ub.toarray().tolist() == [[1.0, float(value)]]


def test_mps_coefficient_below_what_highs_can_read_is_named(tmp_path):
    path = tmp_path / "tinier.mps"
    path.write_text("NAME t\nROWS\n N obj\n L r1\nCOLUMNS\n    x obj 1 r1 1\n"
                    "    y obj 1 r1 1e-13\nRHS\n    RHS r1 4\nBOUNDS\n UP BND y 3\nENDATA\n")
    with pytest.raises(ValueError, match=r"tinier\.mps: coefficients of magnitude below 1e-12, "
                                         r"which HiGHS's reader drops .*; rescale"):
        LinearProgram.from_file(path)


def test_mps_integer_column_without_bounds_is_binary_as_documented(tmp_path):
    # from_file's docstring and the problems guide say so: a writer meaning a
    # general integer gets 0/1 unless it writes bounds. Checked against milp
    # on both readings of the file.
    path = tmp_path / "int.mps"
    head = ["NAME          T", "ROWS", " N  obj", " L  c1", "COLUMNS",
            "    MARKER                 'MARKER'                 'INTORG'",
            "    x         obj       -1.0         c1        1.0",
            "    MARKER                 'MARKER'                 'INTEND'",
            "    y         obj       -1.0         c1        1.0",
            "RHS", "    rhs       c1        10.0"]
    path.write_text("\n".join(head + ["ENDATA"]) + "\n")
    problem = LinearProgram.from_file(path)
    assert problem.bounds[0] == (0.0, 1.0)
    c = np.array([-1.0, 0.0])
    ref = milp(c, constraints=LinearConstraint([[1.0, 1.0]], -np.inf, 10.0),
               integrality=[1, 0], bounds=Bounds([0, 0], [1, np.inf]))
    assert problem.solve([c])[1][0] == pytest.approx(ref.fun) == -1.0
    # With its bounds written, the same column is a general integer.
    path.write_text("\n".join(head + ["BOUNDS", " UP BND       x         7.0", "ENDATA"]) + "\n")
    assert LinearProgram.from_file(path).solve([c])[1][0] == -7.0


def test_lp_double_sided_row_is_refused_naming_the_line_and_the_fix(tmp_path):
    # HiGHS's LP reader refuses "-3 <= x - y <= 0.5" with "expected a number,
    # found `x`" and no line; the message now names the line and how to write
    # the row, and the two-row form it suggests reads as the same polytope.
    path = tmp_path / "ranged.lp"
    head = "minimize\n obj: x + y\nsubject to\n"
    tail = " c2: x + y >= 1\nbounds\n x <= 4\n y <= 4\nend\n"
    path.write_text(head + " c1: -3 <= x - y <= 0.5\n" + tail)
    with pytest.raises(ValueError, match=r"ranged\.lp: line 4, column 12: expected a number.* "
                                         r"The line reads 'c1: -3 <= x - y <= 0\.5'\. .*as two "
                                         r"rows \('x - y >= -3' and 'x - y <= 0\.5'\)"):
        LinearProgram.from_file(path)
    path.write_text(head + " c1: x + 3 >= y\n" + tail)
    with pytest.raises(ValueError, match=r"line 4, column 15: .*move the variables to the "
                                         r"left-hand side"):
        LinearProgram.from_file(path)
    # A form HiGHS names itself gets its line, not a hint about another form.
    path.write_text(head + " c1: b = 1 -> x + y <= 1\n" + tail + "")
    with pytest.raises(ValueError, match=r"indicator constraints are not supported .*The line "
                                         r"reads 'c1: b = 1 -> x \+ y <= 1'\.$"):
        LinearProgram.from_file(path)
    path.write_text(head + " c1: x - y >= -3\n c1b: x - y <= 0.5\n" + tail)
    lp = LinearProgram.from_file(path)
    # min c.w over the box [0, 4]^2 with -3 <= x - y <= 0.5, x + y >= 1 (scipy)
    C = np.array([[1.0, -1.0], [-1.0, 1.0], [1.0, 2.0]])
    for c, z in zip(C, lp.solve(C)[1]):
        ref = milp(c, constraints=[LinearConstraint([[1, -1], [1, 1]], [-3, 1], [0.5, np.inf])],
                   bounds=Bounds([0, 0], [4, 4]))
        assert z == pytest.approx(ref.fun, abs=1e-9)
