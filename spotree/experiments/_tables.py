"""Result tables: the per-run CSV and the markdown summary."""

from __future__ import annotations

import csv
import math
import os
from collections import OrderedDict

import numpy as np

from ._configs import ENERGY_METHODS, PYEPO_METHODS, PYEPO_PROBLEMS, depth_label

__all__ = ["write_csv", "read_csv", "summary_markdown", "improvement_table", "pyepo_cells",
           "pyepo_tables", "energy_cells", "energy_tables"]

_FIRST = ("experiment", "method", "problem", "n_train", "degree", "noise", "constraint_set",
          "depth", "capacity", "scaling", "seed", "relative_regret", "normalized_spo_loss",
          "bayes_floor", "click_probability", "optimal_click_probability",
          "n_leaves", "fitted_depth", "fit_time", "val_normalized_spo_loss", "max_features",
          "search_status", "wrong_decisions", "root_threshold", "decision_boundaries")

#: The paper's % improvement of greedy SPOT over CART (n = 200, averaged over
#: the four degree/noise settings), section 5.1.
PAPER_IMPROVEMENT_N200 = {"1": 26.7, "2": 26.8, "3": 23.1, "unrestricted": 23.6}
#: SPO Forest over CART Forest, n = 200, section 5.1.
PAPER_FOREST_IMPROVEMENT_N200 = 20.5
#: News: % improvement in click probability of a depth-2 SPOT over CART at
#: depths 2, 4, 6 and unrestricted, section 5.2.
PAPER_NEWS_DEPTH2_OVER_CART = {"2": 4.3, "4": 1.6, "6": 0.05, "unrestricted": 0.17}


def _cell(v):
    if v is None:
        return ""
    if isinstance(v, (list, tuple)):
        return " ".join(str(x) for x in v)
    if isinstance(v, float):
        return repr(v)
    return str(v)


def write_csv(rows, path):
    """Write one row per run (atomically); returns the path."""
    from .._atomic import atomic_write

    cols = [c for c in _FIRST if any(c in r for r in rows)]
    cols += sorted({k for r in rows for k in r} - set(cols) - {"key"}) + ["key"]

    def writer(fh):
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(cols)
        for r in rows:
            w.writerow([_cell(r.get(c)) for c in cols])

    atomic_write(path, writer)
    return os.fspath(path)


def read_csv(path):
    """Rows of a ``results.csv`` as dicts of strings."""
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _num(v):
    try:
        f = float(v)
    except (TypeError, ValueError):
        return math.nan
    return f


def _group(rows, keys):
    out = OrderedDict()
    for r in rows:
        out.setdefault(tuple(r.get(k) for k in keys), []).append(r)
    return out


def _stats(rows, value):
    v = np.array([_num(r.get(value)) for r in rows], dtype=float)
    v = v[~np.isnan(v)]
    if not v.size:
        return math.nan, math.nan, 0
    return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0, int(v.size)


def _paper_pct(table, key):
    """The paper's % improvement at ``key``, or "-" where the paper reports none
    (it printed "+nan%" for a depth the paper did not run)."""
    v = table.get(key)
    return "-" if v is None else f"+{v}%"


def _fmt(mean, std=None, digits=4):
    if math.isnan(mean):
        return "-"
    return f"{mean:.{digits}f}" if std is None else f"{mean:.{digits}f} ± {std:.{digits}f}"


def _pct(a, b):
    """% improvement of a over b when lower is better: (b - a) / b."""
    if math.isnan(a) or math.isnan(b) or b == 0:
        return math.nan
    return 100.0 * (b - a) / b


def improvement_table(rows, better="SPOT", worse="CART", value="normalized_spo_loss",
                      setting_keys=("degree", "noise")):
    """% improvement of ``better`` over ``worse`` per depth, averaged over settings.

    For each setting and depth the improvement is ``(mean_worse - mean_better)
    / mean_worse`` of the mean test loss over seeds; the table averages it over
    the settings, as the paper does.

    Returns
    -------
    dict of depth label -> (mean improvement %, per-setting improvements, wins)
        ``wins`` counts the settings where ``better`` has the lower mean.
    """
    out = OrderedDict()
    by_depth = _group(rows, ("depth",))
    for (d,), rs in by_depth.items():
        label = depth_label(d)
        imps, wins = [], 0
        for _, srs in _group(rs, setting_keys).items():
            a = _stats([r for r in srs if r["method"] == better], value)[0]
            b = _stats([r for r in srs if r["method"] == worse], value)[0]
            if not (math.isnan(a) or math.isnan(b)):
                imps.append(_pct(a, b))
                wins += a < b
        if imps:
            out[label] = (float(np.mean(imps)), imps, wins)
    return out


def _methods(rows):
    return list(OrderedDict.fromkeys(r["method"] for r in rows))


def _depth_order(rows):
    labels = OrderedDict.fromkeys(depth_label(r.get("depth")) for r in rows)
    nums = sorted((lbl for lbl in labels if lbl != "unrestricted"), key=int)
    return nums + (["unrestricted"] if "unrestricted" in labels else [])


def _header(meta):
    what = ("Test losses are normalized SPO losses (the paper's normalized extra travel "
            "time; lower is better)")
    # Which standard deviation: with 3 to 10 seeds, ddof = 1 is sqrt(n / (n - 1)) = 1.05
    # to 1.22 times the ddof = 0 one, and the summary did not say which it printed.
    sample = "sample standard deviation (ddof = 1; 0 for a single run)"
    spread = f"mean ± {sample} over seeds"
    if meta["experiment"] == "news":
        # Not travel times, and its runs are constraint sets, not seeds.
        what = ("Test click probabilities (higher is better) and normalized SPO losses "
                "(lower is better)")
        spread = f"mean ± {sample} over constraint sets"
    elif meta["experiment"] == "illustrative":
        # Its table lists every run: no mean or standard deviation.
        spread = "one row per run"
    elif meta["experiment"] == "pyepo":
        what = ("Test losses are normalized regrets (PyEPO's name for the normalized SPO "
                "loss: total regret over total optimal value; lower is better)")
    elif meta["experiment"] == "energy":
        what = ("Test losses are the benchmark's relative regret (mean over test days of "
                "(z* - c.w) / z*, in percent) and the normalized regret (total regret over "
                "total optimal value); lower is better")
    lines = [f"# spotree reproduce {meta['experiment']}" + (" --quick" if meta["quick"] else ""),
             "",
             f"{meta['n_runs']} runs ({meta['n_cached']} reused from the cache). "
             f"{what}; {spread}.", ""]
    if meta.get("errors"):
        lines += [f"**{len(meta['errors'])} runs failed** and are missing from the tables; "
                  f"first error: `{meta['errors'][0]}`.", ""]
    for note in meta.get("notes") or ():
        lines += [f"**Note:** {note}", ""]
    return lines


def _per_setting_table(rows, methods, value="normalized_spo_loss", digits=4):
    depths = _depth_order(rows)
    cols = ["depth"] + methods
    has_pair = "SPOT" in methods and "CART" in methods
    if has_pair:
        # The sign needs saying: next to a click-probability table "+x%" reads as higher.
        cols += ["SPOT vs CART (% lower loss)", "leaves SPOT / CART", "fit s SPOT / CART"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for d in depths:
        at = [r for r in rows if depth_label(r.get("depth")) == d]
        cells = [d]
        for m in methods:
            mean, std, n = _stats([r for r in at if r["method"] == m], value)
            cells.append(_fmt(mean, std, digits) if n else "")
        if has_pair:
            s = [r for r in at if r["method"] == "SPOT"]
            c = [r for r in at if r["method"] == "CART"]
            imp = _pct(_stats(s, value)[0], _stats(c, value)[0])
            cells.append("" if math.isnan(imp) else f"{imp:+.1f}%")
            cells.append(f"{_fmt(_stats(s, 'n_leaves')[0], digits=1)} / "
                         f"{_fmt(_stats(c, 'n_leaves')[0], digits=1)}")
            cells.append(f"{_fmt(_stats(s, 'fit_time')[0], digits=3)} / "
                         f"{_fmt(_stats(c, 'fit_time')[0], digits=3)}")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _fit_time_table(rows):
    lines = ["| method | runs | mean fit s | max fit s | mean leaves |", "|---|---|---|---|---|"]
    for m in _methods(rows):
        rs = [r for r in rows if r["method"] == m]
        t = np.array([_num(r.get("fit_time")) for r in rs])
        leaves = _stats(rs, "n_leaves")[0]
        lines.append(f"| {m} | {len(rs)} | {np.nanmean(t):.3f} | {np.nanmax(t):.3f} | "
                     f"{_fmt(leaves, digits=1)} |")
    return lines


def _search_notes(rows):
    """A line per optimal-tree method whose searches stopped before proving optimality."""
    lines = []
    for m in _methods(rows):
        st = [r.get("search_status") for r in rows if r["method"] == m
              and r.get("search_status") not in (None, "")]
        cut = sum(s != "optimal" for s in st)
        if cut:
            lines += [f"**Note:** {m}: {cut} of {len(st)} trees stopped at the time limit (or "
                      "another solver status) before the search proved them optimal; their "
                      "losses are those of the best tree found (see search_status in "
                      "results.csv).", ""]
    return lines


def _shortest_path_summary(rows):
    lines = _search_notes(rows)
    for (n,), rs in _group(rows, ("n_train",)).items():
        lines += [f"## n = {n}", ""]
        imp = improvement_table(rs)
        if imp:
            lines += ["% improvement of greedy SPOT over CART in mean test normalized SPO loss, "
                      "averaged over the degree/noise settings (positive: SPOT better):", ""]
            head = "| depth | SPOT vs CART | settings where SPOT < CART |"
            sep = "|---|---|---|"
            if int(n) == 200:
                head, sep = head + " paper |", sep + "---|"
            lines += [head, sep]
            for d, (m, per, wins) in imp.items():
                cell = f"| {d} | {m:+.1f}% | {wins}/{len(per)} |"
                if int(n) == 200:
                    cell += f" {_paper_pct(PAPER_IMPROVEMENT_N200, d)} |"
                lines.append(cell)
            lines.append("")
        fimp = improvement_table(rs, "SPO Forest", "CART Forest")
        if fimp:
            m, per, wins = next(iter(fimp.values()))
            paper = (f" (paper: +{PAPER_FOREST_IMPROVEMENT_N200}%)" if int(n) == 200 else "")
            lines += [f"SPO Forest vs CART Forest: {m:+.1f}%{paper}; SPO Forest better in "
                      f"{wins}/{len(per)} settings.", ""]
        methods = _methods(rs)
        for (deg, noise), srs in _group(rs, ("degree", "noise")).items():
            lines += [f"### degree {deg}, noise {noise}", ""]
            lines += _per_setting_table(srs, methods) + [""]
    return lines


def _illustrative_summary(rows):
    # One row per run: with several seeds (--seeds), a seed column tells them apart.
    seeded = len({str(r.get("seed")) for r in rows}) > 1
    lines = ["True decision boundary: x = (0.1 + sqrt(1.75)) / 5 = 0.2846 (the paper rounds it to "
             "0.28); road 2 is cheaper below it, road 1 above.", "",
             "| method | depth | " + ("seed | " if seeded else "") + "test normalized SPO "
             "loss | wrong decisions | root split | learned decision boundaries | leaves |",
             "|---|---|---|---|---|---|---|" + ("---|" if seeded else "")]
    for r in rows:
        rt = r.get("root_threshold")
        lines.append(
            f"| {r['method']} | {depth_label(r['depth'])} | "
            + (f"{r.get('seed', '')} | " if seeded else "") +
            f"{_num(r['normalized_spo_loss']):.4f} | "
            f"{100 * _num(r['wrong_decisions']):.1f}% | "
            f"{'-' if rt in (None, '') else f'x <= {_num(rt):.3f}'} | "
            f"{r.get('decision_boundaries', '')} | {r.get('n_leaves', '')} |")
    return lines + [""]


def _news_summary(rows, meta):
    src = ("the Yahoo! R6A log (" + meta["data"] + ")" if meta.get("data") not in
           (None, "synthetic") else "**synthetic `make_news` data** (no --data given; this is "
           "not the paper's Yahoo! data, so the numbers are not comparable to the paper's)")
    lines = _search_notes(rows) + [f"Data: {src}.", "",
             "Test average click probability (weighted by record counts; higher is better), "
             "mean ± std over constraint sets:", ""]
    methods = _methods(rows)
    depths = _depth_order(rows)
    lines += ["| depth | " + " | ".join(methods) + " |", "|---|" + "---|" * len(methods)]
    for d in depths:
        cells = [d]
        for m in methods:
            mean, std, n = _stats([r for r in rows if r["method"] == m
                                   and depth_label(r.get("depth")) == d], "click_probability")
            cells.append(_fmt(mean, std, 5) if n else "")
        lines.append("| " + " | ".join(cells) + " |")
    opt = _stats(rows, "optimal_click_probability")[0]
    lines += ["", f"Perfect-information click probability: {opt:.5f}.", ""]
    spot2 = _stats([r for r in rows if r["method"] == "SPOT"
                    and depth_label(r.get("depth")) == "2"], "click_probability")[0]
    if not math.isnan(spot2):
        lines += ["% improvement in click probability of SPOT at depth 2 over CART at each "
                  "depth:", "", "| CART depth | improvement | paper |", "|---|---|---|"]
        for d in depths:
            c = _stats([r for r in rows if r["method"] == "CART"
                        and depth_label(r.get("depth")) == d], "click_probability")[0]
            if not math.isnan(c):
                lines.append(f"| {d} | {100 * (spot2 - c) / c:+.2f}% | "
                             f"{_paper_pct(PAPER_NEWS_DEPTH2_OVER_CART, d)} |")
        lines.append("")
    lines += ["Test normalized SPO loss:", ""] + _per_setting_table(rows, methods) + [""]
    return lines



def _order(values, known=()):
    """Distinct values: those of ``known`` first in its order, then numbers ascending."""
    seen = list(OrderedDict.fromkeys(values))
    first = [k for k in known if k in seen]
    def key(v):
        f = _num(v)
        return (1, 0.0, str(v)) if math.isnan(f) else (0, f, str(v))

    return first + sorted((v for v in seen if v not in first), key=key)


def _floor(rows):
    """Mean and std over seeds of the Bayes floor of a cell's rows (one value per seed:
    every method of a seed is scored on the same test rows)."""
    per_seed = OrderedDict()
    for r in rows:
        v = _num(r.get("bayes_floor"))
        if not math.isnan(v):
            per_seed.setdefault(r.get("seed"), v)
    return _stats([{"v": v} for v in per_seed.values()], "v")


def _excess(regret, floor):
    """% of the mean regret above the mean Bayes floor (nan where the floor is 0)."""
    if math.isnan(regret) or math.isnan(floor) or floor <= 0:
        return math.nan
    return 100.0 * (regret / floor - 1.0)


def pyepo_cells(rows):
    """Mean test normalized regret, Bayes floor and fit time per (problem, n_train,
    noise, degree, method).

    Returns
    -------
    list of dict
        Keys ``problem, n_train, noise, degree, method, n_seeds, regret`` (mean
        over the seeds), ``regret_std`` (sample standard deviation; 0 for one
        seed), ``floor`` and ``floor_std`` (the Bayes floor of the same test
        rows; nan for rows without one), ``excess`` (% of the mean regret above
        the mean floor; nan where the floor is 0) and ``fit_time`` (mean
        seconds), in table order.
    """
    out = []
    groups = _group(rows, ("problem", "n_train", "noise", "degree", "method"))
    for p in _order((k[0] for k in groups), PYEPO_PROBLEMS):
        for n in _order(k[1] for k in groups if k[0] == p):
            for e in _order(k[2] for k in groups if k[:2] == (p, n)):
                for d in _order(k[3] for k in groups if k[:3] == (p, n, e)):
                    for m in _order((k[4] for k in groups if k[:4] == (p, n, e, d)),
                                    PYEPO_METHODS):
                        rs = groups[(p, n, e, d, m)]
                        mean, std, k = _stats(rs, "normalized_spo_loss")
                        floor, floor_std, _ = _floor(rs)
                        out.append({"problem": p, "n_train": n, "noise": e, "degree": d,
                                    "method": m, "n_seeds": k, "regret": mean,
                                    "regret_std": std, "floor": floor, "floor_std": floor_std,
                                    "excess": _excess(mean, floor),
                                    "fit_time": _stats(rs, "fit_time")[0]})
    return out


def pyepo_tables(rows):
    """Markdown lines: one table per problem, n_train and noise; a row per method
    with the mean ± std of the test normalized regret, its % excess over the Bayes
    floor and the mean fit seconds per degree; the floor's own row first."""
    cells = pyepo_cells(rows)
    lines = []
    for (p, n, e), cs in _group(cells, ("problem", "n_train", "noise")).items():
        degrees = _order(c["degree"] for c in cs)
        by = {(c["method"], c["degree"]): c for c in cs}
        floors = {}
        for c in cs:
            if not math.isnan(c["floor"]):
                floors.setdefault(c["degree"], c)
        title = f"### {p}, n_train = {n}"
        if e not in (None, ""):
            title += f", noise {_num(e):g}"
        lines += [title, ""]
        cols = (["method"] + [f"regret deg {d}" for d in degrees]
                + [f"excess deg {d}" for d in degrees]
                + [f"fit s deg {d}" for d in degrees])
        lines += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        if floors:
            got = [floors.get(d) for d in degrees]
            lines.append("| Bayes floor | " + " | ".join(
                [_fmt(c["floor"], c["floor_std"]) if c else "" for c in got]
                + ["0%" if c else "" for c in got] + ["" for _ in got]) + " |")
        for m in _order((c["method"] for c in cs), PYEPO_METHODS):
            got = [by.get((m, d)) for d in degrees]
            lines.append("| " + " | ".join(
                [m] + [_fmt(c["regret"], c["regret_std"]) if c else "" for c in got]
                + ["" if not c or math.isnan(c["excess"]) else f"{c['excess']:+.1f}%"
                   for c in got]
                + [_fmt(c["fit_time"], digits=3) if c else "" for c in got]) + " |")
        lines.append("")
    return lines


def _pyepo_summary(rows):
    methods = _order((r["method"] for r in rows), PYEPO_METHODS)
    problems = _order((r["problem"] for r in rows), PYEPO_PROBLEMS)
    noises = ", ".join(f"{_num(e):g}" for e in _order(r.get("noise") for r in rows))
    lines = ["Data: PyEPO's generators (`make_pyepo_shortest_path`, `make_pyepo_knapsack`; "
             "the same draws as PyEPO's `genData` with `seed`), noise half-width "
             f"{noises or '-'}, 5 features; each seed draws n_train + 1000 rows, the last "
             "1000 test. Forests and the tree hold out the first 20% of the training rows to "
             "tune or prune.", "",
             "**Bayes floor**: the regret of deciding with the true conditional mean "
             "E[c | x] of the test rows, which the generators define (for the knapsack, "
             "whose values are rounded up after the noise, the exact mean of the rounded "
             "values). The objective is linear in c, so no model has lower expected regret; "
             "*excess* is a method's mean regret over the mean floor, minus 1 (blank where "
             "the floor is 0: without noise the mean is the cost itself).", "",
             "Problems:", ""]
    lines += [f"- **{p}**: {PYEPO_PROBLEMS.get(p, '')}" for p in problems] + [""]
    lines += ["Methods:", ""]
    lines += [f"- **{m}**: {PYEPO_METHODS[m].description if m in PYEPO_METHODS else ''}"
              for m in methods] + [""]
    lines += ["## Test normalized regret and fit time", "",
              "Cells: mean ± std over seeds of the test normalized regret, its excess over "
              "the Bayes floor, and mean fit seconds, per method and degree of the cost "
              "model.", ""]
    return lines + pyepo_tables(rows)


def energy_cells(rows):
    """Mean and std over seeds per (scaling, capacity, method) of the relative regret
    (%), the normalized regret and the fit time, in table order."""
    out = []
    groups = _group(rows, ("scaling", "capacity", "method"))
    for sc in _order((k[0] for k in groups), ("raw", "standardized")):
        for cap in _order(k[1] for k in groups if k[0] == sc):
            for m in _order((k[2] for k in groups if k[:2] == (sc, cap)), ENERGY_METHODS):
                rs = groups[(sc, cap, m)]
                rel, rel_std, k = _stats(rs, "relative_regret")
                norm, norm_std, _ = _stats(rs, "normalized_spo_loss")
                out.append({"scaling": sc, "capacity": cap, "method": m, "n_seeds": k,
                            "relative_regret": rel, "relative_regret_std": rel_std,
                            "normalized_regret": norm, "normalized_regret_std": norm_std,
                            "fit_time": _stats(rs, "fit_time")[0]})
    return out


def energy_tables(rows):
    """Markdown lines: per feature scaling, a row per method with the mean ± std over
    seeds of the relative regret (%) and of the normalized regret per capacity, and
    the mean fit seconds; then, with both scalings, how far standardizing moves each
    method against its seed-to-seed spread."""
    cells = energy_cells(rows)
    lines = []
    for (sc,), cs in _group(cells, ("scaling",)).items():
        caps = _order(c["capacity"] for c in cs)
        by = {(c["method"], c["capacity"]): c for c in cs}
        lines += [f"### {sc} features", ""]
        cols = (["method"] + [f"relative regret % cap {_num(c):g}" for c in caps]
                + [f"normalized regret cap {_num(c):g}" for c in caps] + ["fit s"])
        lines += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for m in _order((c["method"] for c in cs), ENERGY_METHODS):
            got = [by.get((m, cap)) for cap in caps]
            fit = [c["fit_time"] for c in got if c]
            lines.append("| " + " | ".join(
                [m] + [_fmt(c["relative_regret"], c["relative_regret_std"], 2) if c else ""
                       for c in got]
                + [_fmt(c["normalized_regret"], c["normalized_regret_std"], 4) if c else ""
                   for c in got]
                + [_fmt(float(np.mean(fit)), digits=2) if fit else ""]) + " |")
        lines.append("")
    by = {(c["scaling"], c["method"], c["capacity"]): c for c in cells}
    pairs = [(m, cap) for (sc, m, cap) in by if sc == "raw" and ("standardized", m, cap) in by]
    if pairs:
        caps = _order(cap for _, cap in pairs)
        lines += ["### standardized minus raw", "",
                  "Change of the mean relative regret (percentage points) when the features "
                  "are standardized, and the larger of the two seed-to-seed standard "
                  "deviations; *moved* marks a change larger than that spread.", ""]
        cols = ["method"] + [f"cap {_num(c):g}" for c in caps]
        lines += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for m in _order((m for m, _ in pairs), ENERGY_METHODS):
            cells_m = []
            for cap in caps:
                a, b = by.get(("raw", m, cap)), by.get(("standardized", m, cap))
                if not (a and b):
                    cells_m.append("")
                    continue
                diff = b["relative_regret"] - a["relative_regret"]
                if min(a["n_seeds"], b["n_seeds"]) < 2:
                    # One seed has no spread (its std prints as 0): every change was
                    # "moved", however small.
                    cells_m.append(f"{diff:+.2f} (one seed: no spread)")
                    continue
                spread = max(a["relative_regret_std"], b["relative_regret_std"])
                flag = " moved" if abs(diff) > spread else ""
                cells_m.append(f"{diff:+.2f} (spread {spread:.2f}){flag}")
            lines.append("| " + " | ".join([m] + cells_m) + " |")
        lines.append("")
    return lines


def _energy_summary(rows, meta):
    methods = _order((r["method"] for r in rows), ENERGY_METHODS)
    lines = [f"Data: the ICON energy knapsack of the decision-focused learning benchmark "
             f"(`{meta.get('data')}`, read by `spotree.datasets.load_icon_energy`): one "
             "instance per day, 48 half-hour items of weights 3, 5 and 7, the 789 days "
             "shuffled with the seed as the benchmark does, 550 train / 100 validation / "
             "139 test; day-level features (4 calendar columns + 48 periods x 4 forecasts "
             "= 196). The pruned tree grows on the training days and prunes on the "
             "validation days; every other method fits on both (650 days). Standardized "
             "features use the statistics of the file's training part, as the benchmark "
             "prepares its data.", "", "Methods:", ""]
    lines += [f"- **{m}**: {ENERGY_METHODS[m].description if m in ENERGY_METHODS else ''}"
              for m in methods] + [""]
    lines += ["## Test regret", "",
              "Cells: mean ± std over seeds (day shuffles).", ""]
    return lines + energy_tables(rows)


def _fit_time_note(meta):
    text = ("Seconds per run (forests: all max_features candidates). Compilation is not "
            "included: before its first timed fit of a method, each process fits the method "
            "once on a few rows, which compiles the numba kernels or loads them from numba's "
            "cache")
    n = meta.get("n_warmups", 0)
    if n:
        text += (f" ({meta['warmup_seconds']:.1f} s in {n} warm-up fit{'s' * (n > 1)} "
                 "in this invocation).")
    else:
        text += "." if meta.get("n_fitted") else " (no runs were fitted in this invocation)."
    return text


def summary_markdown(experiment, rows, meta, figures=None):
    """The markdown summary of an experiment's rows.

    ``figures`` maps the file name of each figure (next to summary.md) to its
    caption.
    """
    lines = _header(meta)
    if experiment == "shortest-path":
        lines += _shortest_path_summary(rows)
    elif experiment == "illustrative":
        lines += _illustrative_summary(rows)
    elif experiment == "pyepo":
        lines += _pyepo_summary(rows)
    elif experiment == "energy":
        lines += _energy_summary(rows, meta)
    else:
        lines += _news_summary(rows, meta)
    lines += ["## Fit times", "", _fit_time_note(meta), ""]
    lines += _fit_time_table(rows) + [""]
    if figures:
        lines += ["## Figures", ""]
        for f, caption in figures.items():
            lines += [f"![{f}]({f})", "", caption, ""]
    return "\n".join(lines).rstrip() + "\n"
