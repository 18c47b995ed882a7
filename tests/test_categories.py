"""pandas category, object and string columns as categorical features."""

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

from spotree import OptimalSPOTree, SPOForest, SPOTree
from spotree.problems import FiniteDecisions

ROADS = FiniteDecisions(np.eye(2))


def _frame(n=200, seed=0, dtype="category"):
    rng = np.random.default_rng(seed)
    city = rng.choice(["Paris", "Lyon", "Nice", "Lille"], size=n)
    x = rng.uniform(size=n)
    # Road 0 is cheap in Lyon and Nice.
    cheap0 = np.isin(city, ["Lyon", "Nice"])
    C = np.column_stack([np.where(cheap0, 1.0, 3.0), np.full(n, 2.0)])
    C = C + rng.normal(scale=0.1, size=C.shape)
    col = pd.Series(city, dtype=dtype)
    return pd.DataFrame({"city": col, "x": x}), C


@pytest.mark.parametrize("dtype", ["category", "object", "string"])
def test_text_columns_are_categorical_features(dtype):
    X, C = _frame(dtype=dtype)
    est = SPOTree(ROADS, max_depth=2, categorical_splits="subset").fit(X, C)
    assert est.category_values_[0] == ["Lille", "Lyon", "Nice", "Paris"]
    assert est.category_values_[1] is None
    assert list(est.feature_names_in_) == ["city", "x"]
    t = est.tree_
    assert t.feature[0] == 0 and t.categories[0].size > 0
    left = {est.category_values_[0][int(c)] for c in t.categories[0]}
    assert left in ({"Lyon", "Nice"}, {"Lille", "Paris"})
    # A perfect split: every decision right.
    assert est.score(X, C) == pytest.approx(0.0, abs=1e-12)
    # Predicting from a frame with the rows in another order gives the same.
    perm = np.random.default_rng(1).permutation(len(X))
    assert_array_equal(est.predict(X.iloc[perm]), est.predict(X)[perm])


def test_the_same_tree_as_integer_codes_with_categorical_features():
    X, C = _frame()
    est = SPOTree(ROADS, max_depth=2).fit(X, C)
    codes = np.column_stack([X["city"].cat.codes.to_numpy(float), X["x"].to_numpy()])
    ref = SPOTree(ROADS, max_depth=2, categorical_features=[0]).fit(codes, C)
    assert_array_equal(est.tree_.feature, ref.tree_.feature)
    for a, b in zip(est.tree_.categories, ref.tree_.categories):
        assert_array_equal(a, b)
    assert_array_equal(est.predict(X), ref.predict(codes))


def test_unseen_and_missing_categories_follow_the_missing_side():
    X, C = _frame(dtype="object")
    X.loc[:19, "city"] = None
    C[:20] = [1.0, 3.0]
    est = SPOTree(ROADS, max_depth=1).fit(X, C)
    t = est.tree_
    side = t.children_left[0] if t.missing_go_to_left[0] else t.children_right[0]
    new = pd.DataFrame({"city": pd.Series(["Marseille", None, "Lyon"], dtype=object),
                        "x": [0.5, 0.5, 0.5]})
    leaves = est.apply(new)
    assert leaves[0] == side and leaves[1] == side


def test_forest_and_text_columns():
    X, C = _frame(seed=3)
    forest = SPOForest(ROADS, n_estimators=5, max_features=None, min_samples_leaf=5,
                       random_state=0).fit(X, C)
    assert forest.category_values_[0] == ["Lille", "Lyon", "Nice", "Paris"]
    assert forest.score(X, C) == pytest.approx(0.0, abs=1e-9)


def test_numeric_model_rejects_text_columns_at_predict():
    X, C = _frame()
    est = SPOTree(ROADS, max_depth=1).fit(X[["x"]], C)
    with pytest.raises(ValueError):
        est.predict(X[["city"]].rename(columns={"city": "x"}))


def test_optimal_tree_refuses_categorical_columns():
    X, C = _frame()
    with pytest.raises(ValueError, match=r"the columns \['city'\] of X are categorical"):
        OptimalSPOTree(ROADS, max_depth=1).fit(X, C)


def test_save_and_load_keep_the_category_labels(tmp_path):
    import spotree

    X, C = _frame(dtype="object", seed=4)
    for est in (SPOTree(ROADS, max_depth=2),
                SPOForest(ROADS, n_estimators=3, max_features=None, random_state=0)):
        est.fit(X, C)
        path = tmp_path / f"{type(est).__name__}.json"
        est.save(path)
        back = spotree.load(path)
        assert back.category_values_ == est.category_values_
        new = pd.DataFrame({"city": pd.Series(["Nice", "Paris", "Bordeaux", None],
                                              dtype=object), "x": [0.1, 0.2, 0.3, 0.4]})
        assert_array_equal(back.predict(new), est.predict(new))


def test_codes_are_the_positions_of_the_labels_seen_at_fit():
    from spotree._categories import encode_frame

    fit = pd.DataFrame({"c": pd.Series(["b", 1, "a", None, 2.0], dtype=object)})
    coded, labels = encode_frame(fit)
    # Mixed types sort by their type's name, then their text: float, int, str.
    assert labels == [[2.0, 1, "a", "b"]]
    assert_array_equal(coded["c"], [3.0, 1.0, 2.0, np.nan, 0.0])
    new = pd.DataFrame({"c": pd.Series(["a", "zz", None, 1.0, 2], dtype=object)})
    # By value as a dict would look them up (1.0 == 1): unseen and missing are NaN.
    lookup = {v: k for k, v in enumerate(labels[0])}
    expected = [lookup.get(v, np.nan) if v is not None else np.nan for v in new["c"]]
    assert_array_equal(encode_frame(new, labels)[0]["c"], expected)


def test_one_hot_columns_their_names_and_sums_follow_the_codes():
    from spotree._categories import one_hot, one_hot_names, one_hot_sum

    # A numeric column, then one of 3 categories (codes 0, 1, 2; NaN missing).
    cats = [None, ["dry", "wet", "clay"]]
    X = np.array([[0.5, 2.0], [1.5, 0.0], [2.5, np.nan]])
    assert_array_equal(one_hot(X, cats), [[0.5, 0, 0, 1], [1.5, 1, 0, 0], [2.5, 0, 0, 0]])
    assert one_hot_names(["x", "soil"], cats) == ["x", "soil=dry", "soil=wet", "soil=clay"]
    # Per original feature, the total of its columns (by hand: 0.1; 0.2 + 0.3 + 0.4).
    assert_array_equal(one_hot_sum(np.array([0.1, 0.2, 0.3, 0.4]), cats), [0.1, 0.9])


def test_a_category_dtype_keeps_its_own_categories_and_their_order():
    from spotree._categories import encode_frame

    # Unused categories listed, in the dtype's order (not sorted): codes by hand.
    col = pd.Categorical(["b", "a", None, "b"], categories=["z", "b", "a", "c"])
    coded, labels = encode_frame(pd.DataFrame({"c": col}))
    assert labels == [["z", "b", "a", "c"]]
    assert_array_equal(coded["c"], [1.0, 2.0, np.nan, 1.0])


def test_an_unseen_code_of_an_array_is_predicted_as_missing_and_the_array_is_kept():
    # Integer codes marked categorical in a numpy array: code 5 was never
    # seen, so it follows the missing side, as NaN does; the caller's array
    # is not overwritten with that NaN.
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, 3, 120), rng.uniform(size=120)]).astype(float)
    C = np.column_stack([np.where(X[:, 0] == 1, 1.0, 3.0), np.full(120, 2.0)])
    est = SPOTree(ROADS, max_depth=2, categorical_features=[0]).fit(X, C)
    new = np.array([[5.0, 0.3], [1.0, 0.3]])
    kept = new.copy()
    missing = np.array([[np.nan, 0.3], [1.0, 0.3]])
    assert_array_equal(est.predict(new), est.predict(missing))
    assert_array_equal(new, kept)


def test_a_numeric_column_coded_by_value():
    # value_labels / code_by_value (SPOPlusLinear and SPOBoost with
    # categorical_features): codes against a dict of the sorted distinct values.
    from spotree._categories import code_by_value, value_labels

    x = np.array([3.0, -1.0, 3.0, np.nan, 0.5, -1.0])
    labels = value_labels(x)
    assert labels == [-1.0, 0.5, 3.0] and all(type(v) is float for v in labels)
    assert value_labels(np.array([6.0, 0.0, np.nan, 6.0])) == [0, 6]
    assert all(type(v) is int for v in value_labels(np.array([2.0, 1.0])))
    assert value_labels(np.array([np.nan])) == []
    code = {v: float(i) for i, v in enumerate(labels)}
    new = np.array([0.5, 3.0, 7.0, np.nan, -1.0, -5.0, 1.0])
    expected = [code.get(v, np.nan) for v in new]
    assert_array_equal(code_by_value(new, labels), expected)
    assert_array_equal(code_by_value(new, []), np.full(7, np.nan))


def test_numbers_for_a_column_of_text_labels_are_refused_at_predict():
    # Fitted on city names, given their codes: no number is a label, so every
    # row was an unseen category and followed the missing side, silently.
    X, C = _frame(seed=5)
    est = SPOTree(ROADS, max_depth=2, categorical_splits="subset").fit(X, C)
    codes = X.assign(city=X["city"].cat.codes)
    with pytest.raises(ValueError, match=r"Column 'city' of X holds numbers \(dtype int8\)"):
        est.predict(codes)
    # A column with no value present (float NaN) is still taken: missing everywhere,
    # as the same rows with a category unseen at fit.
    gone = X.assign(city=np.nan)
    unseen = X.assign(city=pd.Series(["Bordeaux"] * len(X), dtype=object))
    assert_array_equal(est.apply(gone), est.apply(unseen))
    # Labels that are numbers (a category dtype of ints) still match numbers.
    nums = X.assign(city=X["city"].cat.codes.astype("category"))
    by_num = SPOTree(ROADS, max_depth=2, categorical_splits="subset").fit(nums, C)
    plain = nums.assign(city=nums["city"].astype(np.int64))
    assert_array_equal(by_num.predict(plain), by_num.predict(nums))
