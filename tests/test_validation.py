"""The input checks every estimator's fit and predict share (spotree._validation)."""

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from spotree import OptimalSPOTree, SPOBoost, SPOForest, SPOPlusLinear, SPOTree
from spotree._validation import check_features, check_realized_costs, check_same_rows
from spotree.problems import FiniteDecisions

ROADS = FiniteDecisions(np.eye(3))

ESTIMATORS = {
    "SPOTree": lambda problem=None: SPOTree(problem, max_depth=2),
    "OptimalSPOTree": lambda problem=None: OptimalSPOTree(problem, max_depth=1),
    "SPOForest": lambda problem=None: SPOForest(problem, n_estimators=3, random_state=0),
    "SPOBoost": lambda problem=None: SPOBoost(problem, n_estimators=3, random_state=0),
    "SPOPlusLinear": lambda problem=None: SPOPlusLinear(problem, max_iter=2, random_state=0),
}
# The estimators that take category and text columns (OptimalSPOTree refuses them).
WITH_CATEGORIES = ["SPOTree", "SPOForest", "SPOBoost", "SPOPlusLinear"]


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    soil = rng.choice(["dry", "wet", "clay"], n)
    X = pd.DataFrame({"a": rng.normal(size=n), "soil": pd.Categorical(soil)})
    C = np.column_stack([np.where(soil == "dry", 1.0, 3.0), np.full(n, 2.0),
                         2.5 + X["a"].to_numpy()]) + rng.normal(scale=0.1, size=(n, 3))
    return X, C


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@pytest.mark.parametrize("problem", [None, ROADS], ids=["problem=None", "problem"])
def test_one_dimensional_C_is_refused(name, problem):
    # Before: with problem=None a 1-D C silently became a one-option problem
    # (a constant model with zero loss).
    X, C = _data()
    with pytest.raises(ValueError, match=r"C must be a 2-D array of shape \(n_samples, "
                                         r"n_costs\).*1-D array of shape \(60,\)"):
        ESTIMATORS[name](problem).fit(X[["a"]], C[:, 0])
    # A Series has no reshape: the hint is to_frame (it said C.reshape(-1, 1),
    # an AttributeError when followed).
    with pytest.raises(ValueError, match=r"1-D array of shape \(60,\).*pass C\.to_frame\(\)\.$"):
        ESTIMATORS[name](problem).fit(X[["a"]], pd.Series(C[:, 0]))
    assert pd.Series(C[:, 0]).to_frame().shape == (60, 1)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_text_in_a_numpy_object_array_names_the_cell(name):
    X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, "abc"], [6.0, "7.5"]] * 5, dtype=object)
    C = np.random.default_rng(0).uniform(size=(20, 3))
    with pytest.raises(ValueError, match=r"row 2, column 1 is 'abc', not a number.*"
                                         r"pandas DataFrame"):
        ESTIMATORS[name]().fit(X, C)
    # Text spelling a number is the number; None is a missing value.
    X_num = np.array([[1.0, "2"], [None, 4.0]], dtype=object)
    est = SPOTree()
    assert_array_equal(check_features(est, X_num, reset=True),
                       [[1.0, 2.0], [np.nan, 4.0]])



def test_pd_na_complex_and_nested_cells_of_an_object_array_x():
    # pd.NA (the cells of an Int64 frame's to_numpy()) failed with numpy's
    # "float() argument ... not 'NAType'" where None is a missing value; a
    # numpy complex cell lost its imaginary part with only a ComplexWarning;
    # an array in a cell raised "The truth value of an array ... is ambiguous".
    import warnings

    C = np.random.default_rng(0).uniform(size=(4, 3))
    X = pd.DataFrame([[1, 2], [None, 4], [5, None], [7, 8]]).astype("Int64").to_numpy()
    assert X.dtype == object
    assert_array_equal(check_features(SPOTree(), X, reset=True),
                       [[1, 2], [np.nan, 4], [5, np.nan], [7, 8]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for cell in (np.complex128(1 + 2j), 1 + 2j):
            X = np.array([[1.0, 2.0]] * 4, dtype=object)
            X[2, 1] = cell
            with pytest.raises(ValueError, match=r"X holds a complex number at row 2, column 1"):
                SPOTree().fit(X, C)
    X = np.array([[1.0, 2.0]] * 4, dtype=object)
    X[1, 0] = np.array([1.0, 2.0])
    with pytest.raises(TypeError, match=r"X holds ndarray at row 1, column 0, not a number"):
        SPOTree().fit(X, C)
    # (TypeError and this wording, as scikit-learn's check_dtype_object expects.)
    X[1, 0] = {"a": 1}
    with pytest.raises(TypeError, match=r"X holds dict at row 1, column 0, not a number: "
                                        r"float\(\) argument must be a string or a"):
        SPOTree().fit(X, C)

def test_lists_of_strings_name_the_cell_too():
    with pytest.raises(ValueError, match=r"row 0, column 1 is 'x'"):
        SPOTree().fit([[1.0, "x"], [2.0, "3"]], [[1.0, 2.0], [2.0, 1.0]])


@pytest.mark.parametrize("name", WITH_CATEGORIES)
def test_a_numpy_array_at_predict_on_a_category_model_asks_for_a_dataframe(name):
    X, C = _data()
    est = ESTIMATORS[name]().fit(X, C)
    msg = (r"X must be a pandas DataFrame with the columns \['a', 'soil'\]: .* columns "
           r"\['soil'\] hold categories or text")
    with pytest.raises(ValueError, match=msg):
        est.predict(X.to_numpy())
    # Even numbers that look like category codes: an array cannot say which is which.
    codes = np.column_stack([X["a"], X["soil"].cat.codes]).astype(float)
    with pytest.raises(ValueError, match=msg):
        est.predict(codes)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@pytest.mark.parametrize("column, what", [
    (pd.date_range("2020-01-01", periods=60), r"\.dt\.days"),
    (pd.to_timedelta(np.arange(60), unit="s"), r"\.dt\.total_seconds\(\)"),
    (pd.Series([pd.Timestamp("2020-01-01")] * 60, dtype=object), r"\.dt\.days"),
], ids=["datetime", "timedelta", "object-timestamps"])
def test_date_and_duration_columns_are_refused_by_name(name, column, what):
    X, C = _data()
    X["when"] = np.asarray(column) if not isinstance(column, pd.Series) else column.values
    with pytest.raises(ValueError, match=r"Column 'when' of X holds dates, times or "
                                         r"durations .*Convert it to numbers first.*" + what):
        ESTIMATORS[name]().fit(X, C)


def test_numpy_dates_are_refused():
    X = np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[D]").reshape(-1, 1)
    with pytest.raises(ValueError, match="dates, times or durations.*convert them to numbers"):
        SPOTree().fit(X, [[1.0, 2.0], [2.0, 1.0]])


@pytest.mark.parametrize("name", ["SPOTree", "SPOForest", "OptimalSPOTree"])
def test_an_object_column_of_floats_with_a_none_is_numeric_with_a_missing_value(name):
    # Before: one category per value.
    X, C = _data()
    b = X["a"].to_numpy() * 2
    b_obj = pd.Series(list(b), dtype=object)
    b_obj[3] = None
    b[3] = np.nan
    est = ESTIMATORS[name]().fit(pd.DataFrame({"a": X["a"], "b": b_obj}), C)
    assert est.category_values_ is None
    floats = pd.DataFrame({"a": X["a"], "b": b})
    ref = ESTIMATORS[name]().fit(floats, C)
    assert_array_equal(est.predict(floats), ref.predict(floats))
    # At predict, the object column is read the same way.
    assert_array_equal(est.predict(pd.DataFrame({"a": X["a"], "b": b_obj})),
                       ref.predict(floats))


@pytest.mark.parametrize("name", ["SPOPlusLinear", "SPOBoost"])
def test_an_object_column_of_numbers_is_numeric_for_linear_models_too(name):
    X, C = _data()
    b = X["a"].to_numpy() ** 2
    est = ESTIMATORS[name]().fit(pd.DataFrame({"a": X["a"], "b": pd.Series(list(b),
                                                                         dtype=object)}), C)
    floats = pd.DataFrame({"a": X["a"], "b": b})
    ref = ESTIMATORS[name]().fit(floats, C)
    assert est.category_values_ is None
    # Equal up to the rounding of another memory layout.
    assert_allclose(est.predict(floats), ref.predict(floats), rtol=1e-12)
    # A missing value in it is refused, naming what to do.
    b_obj = pd.Series(list(b), dtype=object)
    b_obj[0] = None
    with pytest.raises(ValueError, match="does not support missing values"):
        ESTIMATORS[name]().fit(pd.DataFrame({"a": X["a"], "b": b_obj}), C)


def test_a_text_column_where_numbers_were_fitted_is_named():
    X, C = _data()
    est = SPOTree(max_depth=1).fit(X[["a"]], C)
    with pytest.raises(ValueError, match=r"Column 'a' of X holds text or categories .*was "
                                         r"numeric when the model was fitted"):
        est.predict(pd.DataFrame({"a": ["x"] * 3}))


def test_check_same_rows_and_check_realized_costs_messages():
    with pytest.raises(ValueError, match=r"^X_val and C_val must have the same number of "
                                         r"rows; got 3 and 2\.$"):
        check_same_rows(np.ones((3, 1)), np.ones((2, 4)), ("X_val", "C_val"))
    check_same_rows(2, np.ones((2, 4)))
    with pytest.raises(ValueError, match="X and C must have the same number of rows; got 5 "
                                         "and 2"):
        check_realized_costs(SPOTree(), np.ones((2, 3)), 5)
    with pytest.raises(ValueError, match="SPOTree requires y to be passed"):
        check_realized_costs(SPOTree(), None, 5)
    with pytest.raises(ValueError, match=r"C contains NaN or infinity \(first at row 1, "
                                         r"column 0\)"):
        check_realized_costs(SPOTree(), [[1.0, 2.0], [np.nan, 1.0]], 2)


@pytest.mark.parametrize("name", WITH_CATEGORIES)
def test_predict_names_missing_and_reordered_columns(name):
    X, C = _data()
    est = ESTIMATORS[name]().fit(X, C)
    with pytest.raises(ValueError, match="seen at fit time, yet now missing:\n- a"):
        est.predict(X[["soil"]])
    with pytest.raises(ValueError, match="must be in the same order as they were in fit"):
        est.predict(X[["soil", "a"]])


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_score_checks_C_as_fit_does(name):
    X, C = _data()
    est = ESTIMATORS[name]().fit(X[["a"]], C)
    with pytest.raises(ValueError, match=r"C must be a 2-D array of shape \(n_samples, "
                                         r"n_costs\).*1-D array of shape \(60,\)"):
        est.score(X[["a"]], C[:, 0])
    with pytest.raises(ValueError, match="X and C must have the same number of rows; got 60 "
                                         "and 59"):
        est.score(X[["a"]], C[:-1])
    with pytest.raises(ValueError, match="C has 2 columns but the problem has n_costs=3"):
        est.score(X[["a"]], C[:, :2])


def test_C_without_columns_is_refused_with_problem_none():
    with pytest.raises(ValueError, match="C has no columns: with problem=None each column"):
        SPOTree().fit(np.ones((3, 1)), np.ones((3, 0)))


def test_complex_costs_and_weights_are_refused():
    # numpy casts complex to float with only a ComplexWarning: fit and the
    # metrics ran on the real parts.
    import warnings

    from spotree.metrics import spo_loss

    rng = np.random.default_rng(0)
    X, C = rng.normal(size=(10, 2)), rng.normal(size=(10, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="complex numbers are not real numbers"):
            SPOTree().fit(X, C + 1j)
        with pytest.raises(ValueError, match="complex numbers are not real numbers"):
            spo_loss(C, C + 0j, problem=FiniteDecisions(np.eye(3)))
        with pytest.raises(ValueError, match="sample_weight must be a 1-D array of real "
                                             "numbers"):
            SPOTree().fit(X, C, sample_weight=np.ones(10) + 0j)
        assert SPOTree(max_depth=1).fit(X, C.astype(np.float32)).get_depth() <= 1


def test_costs_and_weights_of_strings_are_refused():
    # numpy turned numeric strings into numbers silently; scikit-learn's
    # check_array(dtype="numeric") refuses arrays of strings or bytes.
    from sklearn.utils import check_array

    from spotree.metrics import spo_loss

    with pytest.raises(ValueError, match="not compatible with arrays of bytes/strings"):
        check_array(np.array([["1", "2"]]), dtype="numeric")
    rng = np.random.default_rng(0)
    X, C = rng.normal(size=(6, 2)), rng.uniform(1, 2, (6, 3))
    for bad in (C.astype(str), C.astype(bytes), C.astype(str).tolist()):
        with pytest.raises(ValueError, match=r"^C must be a numeric 2-D array; it holds "
                                             r"strings \(dtype [<|][US]\d+\), not numbers: "
                                             r"convert them"):
            SPOTree().fit(X, bad)
    with pytest.raises(ValueError, match=r"^C_pred must be a numeric 2-D array; it holds "
                                         r"strings"):
        spo_loss(C, C.astype(str), problem=ROADS)
    with pytest.raises(ValueError, match=r"^sample_weight must be a 1-D array of real numbers; "
                                         r"it holds strings \(dtype <U1\)"):
        SPOTree().fit(X, C, sample_weight=["1"] * 6)
    # A DataFrame's numeric columns, and object arrays (as scikit-learn), read as before.
    want = SPOTree(max_depth=1).fit(X, C).predict(X)
    for ok in (pd.DataFrame(C), C.astype(object)):
        assert_array_equal(SPOTree(max_depth=1).fit(X, ok).predict(X), want)


def test_dates_and_durations_are_refused_as_weights():
    # numpy cast them to float silently: dates became weights of about 1.6e18
    # (nanoseconds since 1970), durations of 1 s weights of 1 (the unit's count).
    from spotree.metrics import spo_loss

    rng = np.random.default_rng(0)
    X, C = rng.normal(size=(3, 2)), rng.uniform(1, 2, (3, 3))
    dates = pd.to_datetime(["2020-01-01", "2021-01-01", "2022-01-01"])
    for bad in (dates, pd.Series(dates), pd.Series(dates.tz_localize("UTC")),
                np.array([1, 2, 3], dtype="m8[s]"), list(np.array(dates))):
        with pytest.raises(ValueError, match=r"^sample_weight must be a 1-D array of real "
                                             r"numbers; it holds dates, times or durations"):
            SPOTree().fit(X, C, sample_weight=bad)
        with pytest.raises(ValueError, match=r"^sample_weight must be .* durations"):
            spo_loss(C, C, problem=ROADS, sample_weight=bad)



def test_dates_and_durations_are_refused_as_costs():
    # As for the weights, numpy cast them to float silently: costs of durations
    # of 1, 2 and 3 days were fitted and solved as 1, 2 and 3, dates as days
    # since 1970.
    from spotree.metrics import spo_loss

    rng = np.random.default_rng(0)
    X = rng.normal(size=(4, 2))
    days = np.arange(1, 13).reshape(4, 3).astype("m8[D]")
    dates = np.datetime64("2020-01-01") + days
    for bad in (days, dates, pd.DataFrame(days), pd.DataFrame(dates)):
        with pytest.raises(ValueError, match=r"^C must be a numeric 2-D array; it holds dates, "
                                             r"times or durations"):
            SPOTree().fit(X, bad)
        with pytest.raises(ValueError, match=r"^C must be .* durations"):
            ROADS.solve(bad)
        with pytest.raises(ValueError, match=r"^C_true must be .* durations"):
            spo_loss(bad, np.ones((4, 3)), problem=ROADS)
    with pytest.raises(ValueError, match=r"^V must be .* durations"):
        FiniteDecisions(days)

def test_a_warning_of_the_oracle_is_shown_once_over_many_solves():
    # Python shows a repeated warning once per place (the "default" action).
    # The complex-number check of every solve's costs used catch_warnings,
    # which resets that record: an oracle's warning came again at every solve,
    # once per node of every tree. Counted against the oracle called alone.
    import warnings

    from spotree.problems import CallableProblem

    def oracle(c):
        warnings.warn("the solver's licence expires soon", RuntimeWarning)
        w = np.zeros_like(c)
        w[np.argmin(c)] = 1.0
        return w

    C = np.random.default_rng(0).uniform(size=(20, 3))
    with warnings.catch_warnings(record=True) as alone:
        warnings.simplefilter("default")
        for c in C:
            oracle(c)
    problem = CallableProblem(oracle, n_costs=3)
    with warnings.catch_warnings(record=True) as solved:
        warnings.simplefilter("default")
        for i in range(len(C)):
            problem.solve(C[i:i + 1])
    assert len(alone) == 1
    assert len(solved) == len(alone)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_costs_as_a_dataframe_fit_the_same_model_as_the_array(name):
    # A DataFrame's to_numpy() is column-major; SPOBoost's sums over it ran
    # in another order, so its predictions on a 3x3 shortest path (120 rows,
    # 5 rounds) differed by 8.5e-14 from the fit on the same costs as an
    # array. The costs are now C-ordered before any estimator sees them.
    from spotree import ShortestPath
    from spotree.datasets import make_shortest_path

    problem = ShortestPath(grid=(3, 3))
    X, C = make_shortest_path(120, grid=(3, 3), degree=4, noise=0.5, random_state=0)
    assert check_realized_costs(SPOTree(), pd.DataFrame(C), len(C)).flags.c_contiguous
    reference = ESTIMATORS[name](problem).fit(X, C).predict(X)
    for costs in (pd.DataFrame(C), np.asfortranarray(C)):
        assert_array_equal(ESTIMATORS[name](problem).fit(X, costs).predict(X), reference)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_sparse_or_ragged_costs_are_named(name):
    # A scipy sparse C failed as "got ndarray that cannot be converted to float
    # (setting an array element with a sequence.)" (numpy wraps it in a 0-d
    # object array), and a ragged list of rows with numpy's "inhomogeneous
    # shape" message, which named no argument.
    import scipy.sparse as sp

    from spotree.metrics import normalized_spo_loss

    X, C = _data()
    X = X[["a"]]  # (OptimalSPOTree refuses the category column)
    for sparse in (sp.csr_matrix(C), sp.csr_array(C)):
        with pytest.raises(ValueError, match=r"C must be a dense 2-D array of shape "
                                             r"\(n_samples, n_costs\); got a scipy sparse "
                                             r"csr_(matrix|array): pass C\.toarray\(\)"):
            ESTIMATORS[name](ROADS).fit(X, sparse)
    ragged = [[1.0, 2.0, 3.0], [1.0, 2.0]] + C[2:].tolist()
    with pytest.raises(ValueError, match=r"C must be a numeric 2-D array of shape "
                                         r"\(n_samples, n_costs\); got list that is not one"):
        ESTIMATORS[name](ROADS).fit(X, ragged)
    model = ESTIMATORS[name](ROADS).fit(X, C)
    with pytest.raises(ValueError, match=r"C must be a dense 2-D array.*pass C\.toarray\(\)"):
        model.score(X, sp.csr_matrix(C))
    with pytest.raises(ValueError, match=r"C_true must be a dense 2-D array; got a scipy "
                                         r"sparse csr_matrix: pass C_true\.toarray\(\)"):
        normalized_spo_loss(sp.csr_matrix(C), C, problem=ROADS)
    # The dense costs as a list of rows, as an array: the same model.
    assert_array_equal(ESTIMATORS[name](ROADS).fit(X, C.tolist()).predict(X), model.predict(X))


def test_validation_costs_as_a_dataframe_score_as_the_array():
    # As for C in fit: SPOBoost's validation_score_ (X_val, C_val) and
    # SPOTree.prune's val_losses differed in the last bits when C_val was a
    # DataFrame (column-major) instead of the same costs as an array.
    from spotree import ShortestPath
    from spotree.datasets import make_shortest_path

    problem = ShortestPath(grid=(3, 3))
    X, C = make_shortest_path(300, grid=(3, 3), degree=4, noise=0.5, random_state=0)
    frame = pd.DataFrame(C[200:])
    boosts = [SPOBoost(problem, n_estimators=10, random_state=0).fit(
        X[:200], C[:200], X_val=X[200:], C_val=costs) for costs in (C[200:], frame)]
    assert_array_equal(boosts[1].validation_score_, boosts[0].validation_score_)
    tree = SPOTree(problem, max_depth=4).fit(X[:200], C[:200])
    assert_array_equal(tree.prune(X[200:], frame).pruning_path_.val_losses,
                       tree.prune(X[200:], C[200:]).pruning_path_.val_losses)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_costs_named_by_the_variables_in_another_order_are_refused(name):
    # Costs are read by position. A frame whose columns are the LP's
    # variable_names in another order (PuLP sorts a model's columns by name)
    # was taken as it is: each cost went to another variable, and the fit, the
    # score and the metrics were silently those of other costs.
    from spotree import LinearProgram
    from spotree.metrics import normalized_spo_loss

    # Send one unit through route a, b or c: the cheapest route is taken.
    lp = LinearProgram(A_eq=[[1, 1, 1]], b_eq=[1], bounds=(0, 1),
                       variable_names=["route_a", "route_b", "route_c"])
    X, C = _data()
    X = X[["a"]]
    named = pd.DataFrame(C, columns=lp.variable_names)
    mixed = named[["route_c", "route_a", "route_b"]]
    model = ESTIMATORS[name](lp).fit(X, named)  # in the problem's order: as the array
    assert_array_equal(model.predict(X), ESTIMATORS[name](lp).fit(X, C).predict(X))
    match = (r"C is a DataFrame whose columns are the problem's variable_names in another "
             r"order; .* Put the columns in the problem's order \(route_a, route_b, "
             r"route_c\): C\[problem\.variable_names\]")
    with pytest.raises(ValueError, match=match):
        ESTIMATORS[name](lp).fit(X, mixed)
    with pytest.raises(ValueError, match=match):
        model.score(X, mixed)
    with pytest.raises(ValueError, match=match):
        lp.solve(mixed)
    with pytest.raises(ValueError, match=r"C_true is a DataFrame whose columns"):
        normalized_spo_loss(mixed, C, problem=lp)
    # Names the problem does not know say nothing of the order: read by position.
    other = pd.DataFrame(C, columns=["x", "y", "z"])
    assert model.score(X, other) == model.score(X, C)


def test_validation_costs_named_in_another_order_are_refused():
    from spotree import LinearProgram

    lp = LinearProgram(A_eq=[[1, 1, 1]], b_eq=[1], bounds=(0, 1),
                       variable_names=["route_a", "route_b", "route_c"])
    X, C = _data()
    X = X[["a"]]
    mixed = pd.DataFrame(C, columns=lp.variable_names)[["route_b", "route_a", "route_c"]]
    match = r"C_val is a DataFrame whose columns are the problem's variable_names"
    with pytest.raises(ValueError, match=match):
        SPOTree(lp, max_depth=2).fit(X, C).prune(X, mixed)
    with pytest.raises(ValueError, match=match):
        SPOBoost(lp, n_estimators=2, random_state=0).fit(X, C, X_val=X, C_val=mixed)


def test_variable_names_are_read_only_for_costs_given_as_a_dataframe():
    # Assignment builds its variable_names on first use (a 1000x1000 problem's
    # million names took 0.5 s and 170 MB), but every solve, fit and score read
    # them to check a DataFrame's column order, arrays included: the first
    # solve built them anyway.
    from spotree import Assignment
    from spotree.metrics import normalized_spo_loss

    problem = Assignment(3)
    rng = np.random.default_rng(0)
    X, C = rng.normal(size=(40, 2)), rng.uniform(size=(40, 9))
    _, z = problem.solve(C)
    # Brute force over the 6 permutations.
    perms = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    assert_allclose(z, [min(sum(c[3 * i + p[i]] for i in range(3)) for p in perms)
                        for c in C])
    tree = SPOTree(problem, max_depth=2).fit(X, C)
    tree.score(X, C)
    normalized_spo_loss(C, tree.predict(X), problem=problem)
    SPOBoost(problem, n_estimators=2, init="mean", n_iter_no_change=None,
             random_state=0).fit(X, C)
    assert "_names" not in vars(problem)
    # A DataFrame is still checked (and builds the names).
    frame = pd.DataFrame(C, columns=problem.variable_names)
    with pytest.raises(ValueError, match="variable_names in another order"):
        problem.solve(frame[frame.columns[::-1]])


def test_pandas_missing_value_in_nullable_costs_is_named_with_its_cell():
    # pd.NA (an Int64 or Float64 column's missing value) is not a float: the
    # costs were refused with numpy's "float() argument must be a string or a
    # real number, not 'NAType'", naming no cell, where NaN and None name it.
    from spotree.metrics import normalized_spo_loss

    rng = np.random.default_rng(0)
    X, C = rng.uniform(size=(12, 2)), rng.uniform(1, 2, size=(12, 3))
    frame = pd.DataFrame(C).astype("Float64")
    frame.iloc[4, 1] = pd.NA
    cell = r"contains NaN or infinity \(first at row 4, column 1\)"
    with pytest.raises(ValueError, match="C " + cell):
        SPOTree(ROADS).fit(X, frame)
    with pytest.raises(ValueError, match="C_true " + cell):
        normalized_spo_loss(frame, C, problem=ROADS)
    # Without a missing value, the same numbers as the float array.
    whole = pd.DataFrame(np.round(C * 10)).astype("Int64")
    assert_array_equal(SPOTree(ROADS, max_depth=2).fit(X, whole).predict(X),
                       SPOTree(ROADS, max_depth=2).fit(X, np.round(C * 10)).predict(X))


def test_complex_problem_data_and_oracle_decisions_are_refused():
    # numpy casts complex to float with only a ComplexWarning: LinearProgram
    # and Knapsack kept the real parts of their constraints (A_ub=[[1, 1j]]
    # became [[1, 0]]) and CallableProblem the real parts of its oracle's
    # decisions, as the costs and weights already refuse them.
    import warnings

    import scipy.sparse as sp

    from spotree import Knapsack, LinearProgram
    from spotree.problems import CallableProblem

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        row = np.array([[1, 1j]])
        for kw, name in [(dict(A_ub=row, b_ub=[1]), "A_ub"),
                         (dict(A_ub=row.tolist(), b_ub=[1]), "A_ub"),
                         (dict(A_ub=[[1, 1]], b_ub=np.array([1 + 1j])), "b_ub"),
                         (dict(A_eq=row.real + 0j, b_eq=[1]), "A_eq"),
                         (dict(A_ub=sp.csr_matrix(row), b_ub=[1]), "A_ub")]:
            with pytest.raises(ValueError, match=f"'{name}' parameter of LinearProgram .*"
                                                 "complex"):
                LinearProgram(bounds=(0, 1), **kw)
        with pytest.raises(ValueError, match="'weights' parameter of Knapsack .*complex"):
            Knapsack(np.array([[3, 4 + 2j]]), [5])
        with pytest.raises(ValueError, match="'capacities' parameter of Knapsack .*complex"):
            Knapsack([[3, 4]], np.array([5 + 0j]))
        problem = CallableProblem(lambda c: np.eye(2)[np.argmin(c)] + 1j, 2)
        with pytest.raises(ValueError, match="<lambda> returned a decision of complex numbers "
                                             "for cost vector 0"):
            problem.solve([[1.0, 2.0]])
        with pytest.raises(ValueError, match="sample_weight must be a 1-D array of real"):
            SPOTree().fit(np.ones((3, 1)), np.ones((3, 2)), sample_weight=1 + 1j)


def test_durations_are_refused_as_problem_data():
    # numpy cast them to float silently, as counts of their own units: task
    # durations in minutes against a capacity of 8 hours became 90, 120, 300
    # against 8, and the knapsack took no task.
    from spotree import Knapsack, LinearProgram

    minutes = np.array([90, 120, 300], dtype="m8[m]")
    hours = np.timedelta64(8, "h")
    with pytest.raises(ValueError, match="'weights' parameter of Knapsack holds dates, times "
                                         "or durations"):
        Knapsack(minutes, 480)
    with pytest.raises(ValueError, match="'capacities' parameter of Knapsack holds dates"):
        Knapsack([90, 120, 300], hours)
    with pytest.raises(ValueError, match="'A_ub' parameter of LinearProgram holds dates"):
        LinearProgram(A_ub=minutes[None], b_ub=[480], bounds=(0, 1))
    with pytest.raises(ValueError, match="'b_ub' parameter of LinearProgram holds dates"):
        LinearProgram(A_ub=[[90, 120, 300]], b_ub=np.array([hours]), bounds=(0, 1))
    with pytest.raises(ValueError, match="'bounds' parameter of LinearProgram has an upper "
                                         "bound that is not a number or None"):
        LinearProgram(A_ub=[[1, 1, 1]], b_ub=[480], bounds=(0, hours))
    # Ragged data still gets the constructors' own message (the dtype checks
    # before the conversion raised numpy's "inhomogeneous shape").
    with pytest.raises(ValueError, match="'capacities' parameter of Knapsack must be an array "
                                         "of numbers"):
        Knapsack([[1, 2], [3, 4]], [[1], [2, 3]])
    with pytest.raises(ValueError, match="'A_ub' parameter of LinearProgram must be a 2-D array "
                                         "of numbers"):
        LinearProgram(A_ub=[[1, 2], [3]], b_ub=[1, 1], bounds=(0, 1))


def test_numpy_complex_cells_of_object_costs_and_weights_are_refused():
    # A Python complex in an object array was refused (float() raises), but
    # numpy's complex128 converts with only a ComplexWarning: its real part
    # was solved as the cost, or weighed as the weight.
    import warnings

    cell = np.complex128(1 + 5j)
    C = np.ones((4, 3)).astype(object)
    C[1, 1] = cell
    sw = np.ones(4).astype(object)
    sw[1] = cell
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="C must be a numeric 2-D array; .*complex"):
            ROADS.solve(C)
        with pytest.raises(ValueError, match="sample_weight must be a 1-D array of real"):
            SPOTree().fit(np.ones((4, 1)), np.ones((4, 3)), sample_weight=sw)
