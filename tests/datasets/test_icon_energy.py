"""The ICON energy knapsack loader: on a small synthetic file written here (layout,
split, standardization, malformed files) and on the real file where it is present."""

import gc
import os
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.utils import shuffle

from spotree.datasets import ICON_ENERGY_CAPACITIES, load_icon_energy


def _write(path, n_train_days=700, n_test_days=100, seed=0, **override):
    """A file in the benchmark's layout: 9 columns per (day, period) row, column 0 the
    day id, 1-4 calendar values constant within a day, 5-8 per-period forecasts."""
    rng = np.random.default_rng(seed)
    parts = {}
    for name, days, first in (("train", n_train_days, 0), ("test", n_test_days, n_train_days)):
        day = np.repeat(np.arange(first, first + days), 48)
        cal = np.repeat(rng.integers(0, 50, size=(days, 4)), 48, axis=0)
        fc = rng.normal(100, 30, size=(days * 48, 4))
        parts[f"X_1g{name}"] = np.column_stack([day, cal, fc]).astype(float)
        parts[f"y_{name}"] = rng.uniform(0, 500, size=days * 48)
    parts["weights"] = np.tile([3, 5, 7], 16)
    parts.update(override)
    np.savez(path, **parts)
    return parts


def test_day_layout_and_values(tmp_path):
    parts = _write(tmp_path / "Data.npz")
    data = load_icon_energy(tmp_path)  # a folder holding Data.npz
    rows = np.concatenate([parts["X_1gtrain"], parts["X_1gtest"]])
    y = np.concatenate([parts["y_train"], parts["y_test"]])
    n_days = 800
    assert data.X.shape == (n_days, 196) and data.C.shape == (n_days, 48)
    assert data.X_items.shape == (n_days, 48, 8)
    assert len(data.feature_names) == 196 and len(data.item_feature_names) == 8
    assert data.capacities == ICON_ENERGY_CAPACITIES == (60, 120, 180)
    assert_array_equal(data.weights, parts["weights"])
    # Hand loop over days and periods, from the file's rows.
    for i in (0, 5, 699, 700, 799):
        day_rows = rows[rows[:, 0] == i]
        assert_array_equal(data.X[i, :4], day_rows[0, 1:5])
        for t in (0, 17, 47):
            assert_array_equal(data.X[i, 4 + 4 * t: 8 + 4 * t], day_rows[t, 5:9])
            assert_array_equal(data.X_items[i, t], day_rows[t, 1:9])
        assert_array_equal(data.C[i], y[rows[:, 0] == i])
    assert data.feature_names[4 + 4 * 17 + 2] == "price_forecast_17"


@pytest.mark.parametrize("seed", [0, 3])
def test_split_is_the_benchmarks_shuffle(tmp_path, seed):
    _write(tmp_path / "Data.npz")
    data = load_icon_energy(tmp_path / "Data.npz", random_state=seed)
    # The benchmark shuffles the day arrays themselves with sklearn's shuffle.
    C_all = load_icon_energy(tmp_path / "Data.npz").C
    _, C_shuffled = shuffle(np.arange(800), C_all, random_state=seed)
    assert_array_equal(data.C_train, C_shuffled[:550])
    assert_array_equal(data.C_val, C_shuffled[550:650])
    assert_array_equal(data.C_test, C_shuffled[650:])
    assert (len(data.train), len(data.validation), len(data.test)) == (550, 100, 150)
    assert sorted(np.concatenate([data.train, data.validation, data.test])) == list(range(800))
    assert_array_equal(data.X_test, data.X[data.test])


def test_standardize_uses_the_training_part(tmp_path):
    parts = _write(tmp_path / "Data.npz")
    raw = load_icon_energy(tmp_path)
    std = load_icon_energy(tmp_path, standardize=True)
    fit = parts["X_1gtrain"][:, 1:]
    mu, sd = fit.mean(axis=0), fit.std(axis=0)
    assert_allclose(std.X_items, (raw.X_items - mu) / sd)
    assert_allclose(std.X_items[:700].reshape(-1, 8).mean(axis=0), 0, atol=1e-12)
    assert_allclose(std.X[:, 4:8], (raw.X[:, 4:8] - mu[4:]) / sd[4:])
    assert_array_equal(std.C, raw.C)


@pytest.mark.parametrize("flag", ["no", "False", 0, None])
def test_standardize_must_be_a_bool(tmp_path, flag):
    # Taken by its truth: "no" (or "False" from a config) standardized the
    # features without a word, and 0 / None passed for False.
    _write(tmp_path / "Data.npz")
    with pytest.raises(ValueError, match=f"standardize must be a bool .*; got {flag!r}"):
        load_icon_energy(tmp_path, standardize=flag)
    assert_array_equal(load_icon_energy(tmp_path, standardize=np.True_).X_items,
                       load_icon_energy(tmp_path, standardize=True).X_items)


def test_standardize_leaves_a_constant_column_finite(tmp_path):
    """A feature constant over the training part (no holiday in it) is centred, not
    divided by its zero spread: as scikit-learn's StandardScaler, which the benchmark
    uses, does. Divided by 0 it made the whole column NaN."""
    from sklearn.preprocessing import StandardScaler

    parts = _write(tmp_path / "Data.npz")
    parts["X_1gtrain"][:, 1] = 0.0
    parts["X_1gtest"][:, 1] = np.repeat(np.arange(100) % 2, 48)
    np.savez(tmp_path / "Data.npz", **parts)
    std = load_icon_energy(tmp_path, standardize=True)
    rows = np.concatenate([parts["X_1gtrain"], parts["X_1gtest"]])[:, 1:]
    want = StandardScaler().fit(parts["X_1gtrain"][:, 1:]).transform(rows)
    assert np.isfinite(std.X).all()
    assert_allclose(std.X_items.reshape(-1, 8), want, rtol=1e-12, atol=1e-12)
    assert_array_equal(std.X[700:, 0], np.arange(100) % 2)


@pytest.mark.parametrize("override, match", [
    ({"weights": np.ones(47)}, "weights must be 48 positive"),
    ({"weights": np.r_[0.0, np.ones(47)]}, r"weights must be 48 positive numbers; "
                                           r"weights\[0\] is 0"),
    ({"weights": np.r_[np.ones(5), -3.0, np.ones(42)]}, r"weights\[5\] is -3"),
    ({"y_test": np.zeros(10)}, "y_test must have one value per row"),
    ({"X_1gtrain": np.zeros((49, 9))}, "X_1gtrain must have 9 columns and a multiple of 48"),
    ({"y_train": np.full(700 * 48, np.nan)}, "y_train holds NaN"),
    ({"y_train": np.array(["a"] * (700 * 48))}, "y_train holds"),
    # Taken with a ComplexWarning, the imaginary parts dropped.
    ({"y_train": np.full(700 * 48, 300 + 40j)}, "y_train holds complex128, not real numbers"),
])
def test_malformed_file(tmp_path, override, match):
    _write(tmp_path / "Data.npz", **override)
    with pytest.raises(ValueError, match=match):
        load_icon_energy(tmp_path / "Data.npz")


def test_missing_array_calendar_and_too_few_days(tmp_path):
    parts = _write(tmp_path / "Data.npz")
    del parts["weights"]
    np.savez(tmp_path / "a.npz", **parts)
    with pytest.raises(ValueError, match=r"arrays \['weights'\] are missing"):
        load_icon_energy(tmp_path / "a.npz")
    parts = _write(tmp_path / "b.npz")
    parts["X_1gtrain"][5, 2] += 1  # day 0's day-of-week changes in period 5
    np.savez(tmp_path / "b.npz", **parts)
    with pytest.raises(ValueError, match="calendar columns .* change within day 0"):
        load_icon_energy(tmp_path / "b.npz")
    _write(tmp_path / "c.npz", n_train_days=600, n_test_days=50)
    with pytest.raises(ValueError, match="650 days, too few"):
        load_icon_energy(tmp_path / "c.npz")


def test_not_a_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no ICON energy file"):
        load_icon_energy(tmp_path)
    (tmp_path / "x.npz").write_text("hello")
    with pytest.raises(ValueError, match="not a readable .npz"):
        load_icon_energy(tmp_path / "x.npz")
    np.save(tmp_path / "y.npy", np.zeros(3))
    with pytest.raises(ValueError, match="single array"):
        load_icon_energy(tmp_path / "y.npy")


def test_a_damaged_archive_is_refused_and_its_file_closed(tmp_path):
    # np.load(path) left its handle open on a damaged archive: a
    # ResourceWarning when collected (and a file Windows cannot delete).
    _write(tmp_path / "Data.npz", n_train_days=2, n_test_days=1)
    (tmp_path / "d.npz").write_bytes((tmp_path / "Data.npz").read_bytes()[:100])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        with pytest.raises(ValueError, match="d.npz.*not a readable .npz archive"):
            load_icon_energy(tmp_path / "d.npz")
        gc.collect()
    assert not [str(w.message) for w in caught if w.category is ResourceWarning]


def test_real_file(icon_energy_file):
    data = load_icon_energy(icon_energy_file, random_state=0)
    assert data.X.shape == (789, 196) and data.C.shape == (789, 48)
    assert (len(data.train), len(data.validation), len(data.test)) == (550, 100, 139)
    assert sorted(np.unique(data.weights).tolist()) == [3, 5, 7]
    assert data.weights.sum() == 240 and (data.C >= 0).all()
    with np.load(icon_energy_file) as z:
        first = z["X_1gtrain"][:48]
        assert_array_equal(data.X[0, :4], first[0, 1:5])
        assert_array_equal(data.X[0, 4:], first[:, 5:9].ravel())
        assert_array_equal(data.C[-1], z["y_test"][-48:])


def test_a_text_file_is_not_called_pickled_data(tmp_path):
    """numpy calls any non-zip file "pickled data" and suggests allow_pickle=True."""
    cases = {"page.npz": "<!DOCTYPE html><html>", "lfs.npz": "version https://git-lfs.github"
             ".com/spec/v1\noid sha256:7b51\nsize 3031300\n", "empty.npz": ""}
    expected = {"page.npz": "starts with b'<!DOCTYPE html><', not a zip archive",
                "lfs.npz": "a Git LFS pointer", "empty.npz": "it is empty"}
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(ValueError) as info:
            load_icon_energy(tmp_path / name)
        assert expected[name] in str(info.value) and "pickle" not in str(info.value)


def test_a_bytes_path_and_a_non_path(tmp_path):
    # A bytes path is path-like (os.fspath keeps it); its folder failed joining "Data.npz":
    # "Can't mix strings and bytes in path components". None said only "expected str,
    # bytes or os.PathLike object, not NoneType".
    _write(tmp_path / "Data.npz")
    want = load_icon_energy(str(tmp_path))
    for p in (os.fsencode(tmp_path), os.fsencode(tmp_path / "Data.npz")):
        assert_array_equal(load_icon_energy(p).C, want.C)
    for bad in (None, 123):
        with pytest.raises(TypeError, match="path must be a str or path-like"):
            load_icon_energy(bad)
