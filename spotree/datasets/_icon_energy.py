"""The ICON energy-price knapsack of the decision-focused learning benchmark (real data).

Mandi et al., "Decision-Focused Learning: Foundations, State of the Art,
Benchmark and Future Opportunities" (JAIR 80, 2024), turn Irish electricity
prices (SEMO, 2011-2013, released for the ICON challenge on forecasting and
scheduling) into a knapsack: one instance per day, 48 half-hour items whose
values derive from the day's prices, fixed item weights (3, 5 or 7), and a
capacity of 60, 120 or 180. The data file is not shipped with spotree; see
:func:`load_icon_energy` for where to get it.
"""

from __future__ import annotations

import os
import zipfile

import numpy as np
from sklearn.utils import Bunch, shuffle

from ._generators import _check_bool, _check_random_state

__all__ = ["load_icon_energy", "ICON_ENERGY_CAPACITIES"]

#: The benchmark's capacities: 25%, 50% and 75% of the total item weight (240).
ICON_ENERGY_CAPACITIES = (60, 120, 180)

_PERIODS = 48
_CALENDAR = ("holiday", "day_of_week", "week_of_year", "month")
_FORECASTS = ("wind_forecast", "load_forecast", "price_forecast", "co2_intensity")
_KEYS = ("X_1gtrain", "X_1gtest", "y_train", "y_test", "weights")
_SPLIT = (550, 100)  # train, validation; the remaining days test


def _bad(path, what):
    return ValueError(f"{path} is not the ICON energy knapsack file (Data.npz of the "
                      f"PredOpt benchmarks): {what}.")


def _read(path):
    """The five arrays of the file, checked."""
    if os.path.isdir(path):
        path = os.path.join(path, "Data.npz")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"path: no ICON energy file at {path!r}; expected Data.npz "
                                f"or a folder holding it (see load_icon_energy's docstring "
                                f"for where to get it).")
    with open(path, "rb") as fh:
        head = fh.read(32)
    # np.load calls any other file "pickled data" and suggests allow_pickle=True:
    # wrong advice for the usual culprits, a saved HTML page or a Git LFS pointer.
    if not head.startswith((b"PK", b"\x93NUMPY")):
        what = ("it is empty" if not head else
                "it is a Git LFS pointer, not the data (fetch it with 'git lfs pull')"
                if head.startswith(b"version https://git-lfs") else
                f"it starts with {head[:16]!r}, not a zip archive's signature (an HTML "
                "page saved instead of the file?)")
        raise _bad(path, f"not a readable .npz archive: {what}")
    # Opened here: np.load(path) leaves its own handle open when the archive
    # is damaged (a ResourceWarning, and a file Windows cannot delete).
    with open(path, "rb") as fh:
        try:
            z = np.load(fh, allow_pickle=False)
        except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
            raise _bad(path, f"not a readable .npz archive ({exc})") from None
        if not isinstance(z, np.lib.npyio.NpzFile):
            raise _bad(path, "it holds a single array, not an .npz archive of named arrays")
        with z:
            missing = [k for k in _KEYS if k not in z.files]
            if missing:
                raise _bad(path, f"arrays {missing} are missing (it has {sorted(z.files)})")
            try:
                arrays = {k: np.asarray(z[k]) for k in _KEYS}
            except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
                raise _bad(path, f"an array cannot be read ({exc})") from None
    for k in _KEYS:
        # Not np.number: complex values passed, their imaginary parts dropped.
        if not (np.issubdtype(arrays[k].dtype, np.integer)
                or np.issubdtype(arrays[k].dtype, np.floating)):
            raise _bad(path, f"{k} holds {arrays[k].dtype}, not real numbers")
        arrays[k] = arrays[k].astype(np.float64)
        if not np.isfinite(arrays[k]).all():
            raise _bad(path, f"{k} holds NaN or infinity")
    w = arrays["weights"]
    if w.shape != (_PERIODS,):
        raise _bad(path, f"weights must be {_PERIODS} positive numbers; got shape {w.shape}")
    if (w <= 0).any():
        # Not the shape, which is right: the message named only the shape.
        k = int(np.flatnonzero(w <= 0)[0])
        raise _bad(path, f"weights must be {_PERIODS} positive numbers; weights[{k}] is "
                         f"{w[k]:g}")
    for part in ("train", "test"):
        X, y = arrays[f"X_1g{part}"], arrays[f"y_{part}"]
        if X.ndim != 2 or X.shape[1] != 9 or X.shape[0] % _PERIODS:
            raise _bad(path, f"X_1g{part} must have 9 columns and a multiple of 48 rows; "
                             f"got shape {X.shape}")
        if y.shape != (X.shape[0],):
            raise _bad(path, f"y_{part} must have one value per row of X_1g{part} "
                             f"({X.shape[0]}); got shape {y.shape}")
    return path, arrays


def load_icon_energy(path, *, random_state=0, standardize=False):
    """The ICON energy knapsack as day instances, with the benchmark's day split.

    Each day is one instance of a 0/1 knapsack over its 48 half-hour periods:
    item ``j`` is worth ``C[i, j]`` on day ``i`` and weighs ``weights[j]``; a
    decision takes items of total weight at most the capacity (60, 120 or
    180, :data:`ICON_ENERGY_CAPACITIES`) and maximizes their value. Use with
    ``Knapsack(weights, capacity)``.

    **Where to get the file.** ``Knapsack/Trainer/Data.npz`` of the public
    GitHub repository PredOpt/predopt-benchmarks (the code of Mandi et al.,
    JAIR 80:1623-1701, 2024). The repository is under the MIT licence
    (copyright 2021 PredOpt-Benchmarks) and states no separate data licence;
    the prices underneath are Irish Single Electricity Market (SEMO) data of
    2011-2013, released for the ICON challenge (CSPLib prob059), under their
    own terms of use. spotree ships no copy.

    **Features.** The file holds one row per day and period with 8 features:
    4 calendar columns (holiday flag, day of week, week of year, month: the
    same in every period of a day) and 4 forecasts per period (wind
    production, system load, day-ahead price, CO2 intensity). Day-level
    features ``X`` flatten them: the 4 calendar columns, then the 4
    forecasts of period 0, of period 1, ..., of period 47 (196 columns).
    ``X_items`` keeps the benchmark's own layout, one row of 8 features per
    item.

    **Split.** As the benchmark: the file's 789 days, in order, shuffled with
    ``sklearn.utils.shuffle(..., random_state=random_state)``; the first 550
    train, the next 100 validate, the last 139 test.

    Parameters
    ----------
    path : str or path-like
        ``Data.npz``, or a folder holding it.
    random_state : int, default=0
        The benchmark's ``seed`` of the day shuffle.
    standardize : bool, default=False
        Standardize the 8 features as the benchmark does: mean 0 and standard
        deviation 1 over the rows of the file's training part (its first 552
        days), before the day-level features are built.

    Returns
    -------
    data : sklearn.utils.Bunch
        - ``X``: ndarray (789, 196), day-level features, days in file order;
        - ``X_items``: ndarray (789, 48, 8), per-item features;
        - ``C``: ndarray (789, 48), item values;
        - ``weights``: ndarray (48,), item weights;
        - ``capacities``: tuple ``(60, 120, 180)``;
        - ``feature_names``: list of 196 str; ``item_feature_names``: list of 8 str;
        - ``train``, ``validation``, ``test``: ndarray of int, day indices of the
          split (550, 100 and 139 days);
        - ``X_train``, ``C_train``, ``X_val``, ``C_val``, ``X_test``, ``C_test``:
          the day-level rows of each part.

    Raises
    ------
    FileNotFoundError
        When ``path`` names no file.
    ValueError
        When the file is not the benchmark's (missing arrays, wrong shapes,
        text, NaN, calendar columns that change within a day).

    Examples
    --------
    With the file downloaded to ``Data.npz``::

        from spotree import SPOForest
        from spotree.problems import Knapsack
        from spotree.datasets import load_icon_energy

        data = load_icon_energy("Data.npz", random_state=0)
        problem = Knapsack(data.weights, 120)
        model = SPOForest(problem).fit(data.X_train, data.C_train)
    """
    rng = _check_random_state(random_state)
    standardize = _check_bool(standardize, "standardize")
    try:
        # fsdecode: a bytes path failed joining "Data.npz" ("Can't mix strings and bytes").
        path = os.fsdecode(os.fspath(path))
    except TypeError:
        raise TypeError(f"path must be a str or path-like naming Data.npz or its folder; "
                        f"got {path!r:.80}.") from None
    path, arrays = _read(path)
    raw = np.concatenate([arrays["X_1gtrain"], arrays["X_1gtest"]])[:, 1:]
    C = np.concatenate([arrays["y_train"], arrays["y_test"]]).reshape(-1, _PERIODS)
    if standardize:
        fit = arrays["X_1gtrain"][:, 1:]
        scale = fit.std(axis=0)
        raw = (raw - fit.mean(axis=0)) / np.where(scale > 0, scale, 1.0)
    items = raw.reshape(-1, _PERIODS, raw.shape[1])
    n_days = items.shape[0]
    calendar = items[:, :, :len(_CALENDAR)]
    changing = np.flatnonzero((calendar != calendar[:, :1]).any(axis=(1, 2)))
    if changing.size:
        raise _bad(path, f"the calendar columns (1-4) change within day {int(changing[0])}; "
                         f"they must be the same in all 48 periods of a day")
    if n_days <= sum(_SPLIT):
        raise _bad(path, f"it has {n_days} days, too few for the benchmark's split "
                         f"({_SPLIT[0]} train + {_SPLIT[1]} validation + test)")
    X = np.column_stack([calendar[:, 0, :],
                         items[:, :, len(_CALENDAR):].reshape(n_days, -1)])
    order = shuffle(np.arange(n_days), random_state=rng)
    a, b = _SPLIT[0], sum(_SPLIT)
    train, val, test = order[:a], order[a:b], order[b:]
    names = list(_CALENDAR) + [f"{f}_{t:02d}" for t in range(_PERIODS) for f in _FORECASTS]
    return Bunch(X=X, X_items=items, C=C, weights=arrays["weights"],
                 capacities=ICON_ENERGY_CAPACITIES, feature_names=names,
                 item_feature_names=list(_CALENDAR + _FORECASTS), train=train,
                 validation=val, test=test, X_train=X[train], C_train=C[train],
                 X_val=X[val], C_val=C[val], X_test=X[test], C_test=C[test])
