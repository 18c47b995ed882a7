"""The paper's figures from an experiment's records, saved as PNG files."""

from __future__ import annotations

import os

import numpy as np

from .._atomic import atomic_write
from ._configs import depth_label

__all__ = ["draw", "CAPTIONS", "TRUE_BOUNDARY"]

#: Where the two roads of the illustrative example cost the same: 5x + 1.9 = (5x + 0.4)^2.
TRUE_BOUNDARY = (0.1 + np.sqrt(1.75)) / 5

#: Captions of the figures, by file name (shown in summary.md).
CAPTIONS = {
    "illustrative.png": (
        "Paper figure 2. (a)-(c): predicted costs of road 1 (solid) and road 2 (dashed) of "
        "SPOT (blue) and CART (orange) against the true costs (grey); the grey dotted line is "
        "the true decision boundary x = 0.2846 (0.28 in the paper), the coloured dashed "
        "lines the learned ones (a tree that always picks the same road has none; the "
        "paper draws it at x = 0); with several seeds, of the lowest seed, named in the "
        "titles. (d): test normalized SPO loss against training depth (with several seeds: "
        "mean over the seeds, bars ± one standard deviation)."),
    "news.png": (
        "Paper figure 6. Test average click probability (higher is better) of each method "
        "and training depth over the constraint sets."),
}
for _n in (200, 10000):
    CAPTIONS[f"shortest_path_n{_n}.png"] = (
        f"Paper figure {3 if _n == 200 else 4}. Test normalized SPO loss (normalized extra "
        f"travel time) over the seeds, n = {_n}, by training depth; one panel per degree and "
        "noise. Forests have unrestricted depth.")
    CAPTIONS[f"shortest_path_n{_n}_leaves.png"] = (
        f"{'Paper figure 5. ' if _n == 10000 else ''}Number of leaves of the pruned SPOT, "
        f"CART and (where run) SPOT Optimal trees of the n = {_n} runs, by training depth.")


CAPTIONS["pyepo.png"] = (
    "Test normalized regret (mean over the seeds; bars: ± one standard deviation) by degree "
    "of the cost model, one line per method, and the Bayes floor (dashed); one panel per "
    "problem, training size and noise.")
CAPTIONS["energy.png"] = (
    "ICON energy knapsack: test relative regret (%, mean over the seeds; bars: ± one "
    "standard deviation) of each method per capacity; one panel per feature scaling.")


def _figure(figsize):
    from .._compat import import_optional

    # A bare Figure with the Agg canvas: no pyplot state, safe on servers.
    mfig = import_optional("matplotlib.figure", purpose="drawing the result figures")
    return mfig.Figure(figsize=figsize)


def _save(fig, out, name, tight=True):
    path = os.path.join(out, name)
    if tight:
        fig.tight_layout()
    atomic_write(path, lambda fh: fig.savefig(fh, format="png", dpi=110), mode="wb")
    return path


def _grid_of_settings(rows, value, methods, ylabel, out, name, title):
    from ..plotting import method_patches, plot_by_depth

    settings = sorted({(r["degree"], r["noise"]) for r in rows})
    degrees = sorted({d for d, _ in settings})
    noises = sorted({n for _, n in settings})
    fig = _figure((5.2 * len(noises), 3.7 * len(degrees)))
    depths = sorted({depth_label(r["depth"]) for r in rows},
                    key=lambda d: (d == "unrestricted", int(d) if d != "unrestricted" else 0))
    for i, deg in enumerate(degrees):
        for j, noise in enumerate(noises):
            ax = fig.add_subplot(len(degrees), len(noises), i * len(noises) + j + 1)
            sub = [r for r in rows if r["degree"] == deg and r["noise"] == noise]
            plot_by_depth(sub, value=value, methods=methods, depths=depths, ax=ax,
                          ylabel=ylabel, title=f"degree {deg}, noise {noise}", legend=False)
    present = [m for m in methods if any(r["method"] == m for r in rows)]
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    # One legend for all panels, under the title, so it never hides a box.
    fig.legend(handles=method_patches(present, methods), loc="upper center",
               ncol=len(present), frameon=False, bbox_to_anchor=(0.5, 0.955), fontsize=9)
    return _save(fig, out, name, tight=False)


def _shortest_path(records, out):
    files = {}
    methods = list(dict.fromkeys(r["method"] for r in records))
    for n in sorted({r["n_train"] for r in records}):
        rows = [r for r in records if r["n_train"] == n]
        name = f"shortest_path_n{n}.png"
        files[name] = _grid_of_settings(rows, "normalized_spo_loss", methods,
                                        "test normalized SPO loss", out, name,
                                        f"Shortest path, n = {n}")
        trees = [r for r in rows if r.get("n_leaves") not in (None, "")
                 and r["method"] in ("SPOT", "CART", "SPOT Optimal")]
        if trees:
            name = f"shortest_path_n{n}_leaves.png"
            files[name] = _grid_of_settings(trees, "n_leaves",
                                            [m for m in methods if m in ("SPOT", "CART",
                                                                         "SPOT Optimal")],
                                            "leaves", out, name,
                                            f"Leaves of the pruned trees, n = {n}")
    return files


def _illustrative_figure(records):
    """Paper figure 2 as a Figure: (a)-(c) one seed's trees, (d) the loss over the seeds."""
    from ..plotting import METHOD_COLORS, plot_predicted_costs

    seeds = sorted({r.get("seed") for r in records},
                   key=lambda s: (not isinstance(s, (int, np.integer)),
                                  int(s) if isinstance(s, (int, np.integer)) else 0, str(s)))
    several = len(seeds) > 1

    def find(method, depth):
        # The lowest seed run for (method, depth): with several seeds, (a)-(c) draw one
        # run each, and their titles name its seed.
        for seed in seeds:
            for r in records:
                if r["method"] == method and r["depth"] == depth and r.get("seed") == seed:
                    return r
        return None

    panels = [("SPOT", 1, "(a) SPOT (depth 1)"), ("CART", 1, "(b) CART (depth 1)"),
              ("CART", 4, "(c) CART (depth 4)")]
    fig = _figure((10.5, 8.0))
    for i, (m, d, title) in enumerate(panels):
        ax = fig.add_subplot(2, 2, i + 1)
        r = find(m, d)
        if r is None:
            ax.set_axis_off()
            ax.set_title(f"{title}: not run")
            continue
        if several:
            title += f", seed {r.get('seed')}"
        x = np.asarray(r["_extra"]["x"])
        C_true = np.column_stack([5 * x + 1.9, (5 * x + 0.4) ** 2])
        plot_predicted_costs(None, x, C_true, C_pred=r["_extra"]["C_pred"],
                             W_pred=r["_extra"]["W_pred"], true_boundary=TRUE_BOUNDARY, ax=ax,
                             label=m, color=METHOD_COLORS.get(m, "C0"),
                             cost_names=["road 1", "road 2"], title=title)
    ax = fig.add_subplot(2, 2, 4)
    for m in dict.fromkeys(r["method"] for r in records):
        # One point per depth: the mean over the seeds, bars one standard deviation
        # (joining every seed's point drew a zigzag through the runs).
        rs = [r for r in records if r["method"] == m and r["depth"] is not None]
        depths = sorted({r["depth"] for r in rs})
        vals = [np.array([float(r["normalized_spo_loss"]) for r in rs if r["depth"] == d])
                for d in depths]
        mean = [v.mean() for v in vals]
        std = [v.std(ddof=1) if v.size > 1 else 0.0 for v in vals]
        ax.errorbar(depths, mean, yerr=std if several else None, marker="o", capsize=3,
                    color=METHOD_COLORS.get(m, "C0"), label=m)
    ax.set_xlabel("training depth")
    ax.set_xticks(sorted({r["depth"] for r in records if r["depth"] is not None}))
    ax.set_ylabel("test normalized SPO loss" + (" (mean ± std)" if several else ""))
    ax.set_title("(d) SPOT vs CART loss" + (f", mean over {len(seeds)} seeds" if several
                                             else ""))
    ax.legend(frameon=False)
    ax.grid(alpha=0.3)
    return fig


def _illustrative(records, out):
    return {"illustrative.png": _save(_illustrative_figure(records), out, "illustrative.png")}


def _news(records, out):
    from ..plotting import plot_by_depth

    fig = _figure((8.0, 4.2))
    ax = fig.add_subplot(1, 1, 1)
    methods = list(dict.fromkeys(r["method"] for r in records))
    plot_by_depth(records, value="click_probability", methods=methods, ax=ax,
                  ylabel="test average click probability",
                  title="News recommendation: constraint sets")
    return {"news.png": _save(fig, out, "news.png")}


def _pyepo(records, out):
    from ..plotting import METHOD_COLORS
    from ._configs import PYEPO_METHODS, PYEPO_PROBLEMS

    problems = [p for p in PYEPO_PROBLEMS if any(r["problem"] == p for r in records)]
    # One panel per problem (rows) and training size and noise (columns).
    sizes = sorted({(r["n_train"], r.get("noise")) for r in records},
                   key=lambda t: (t[0], -1.0 if t[1] is None else float(t[1])))
    methods = [m for m in PYEPO_METHODS if any(r["method"] == m for r in records)]
    methods += sorted({r["method"] for r in records} - set(methods))
    fig = _figure((4.6 * len(sizes) + 1.8, 3.6 * len(problems)))
    palette = ("#1f77b4", "#6baed6", "#2ca02c", "#9467bd", "#ff7f0e", "#fdae6b", "#d62728",
               "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
    handles = {}
    for i, p in enumerate(problems):
        for j, (n, noise) in enumerate(sizes):
            ax = fig.add_subplot(len(problems), len(sizes), i * len(sizes) + j + 1)
            panel = [r for r in records if r["problem"] == p and r["n_train"] == n
                     and r.get("noise") == noise]
            for k, m in enumerate(methods):
                rs = [r for r in panel if r["method"] == m]
                degrees = sorted({r["degree"] for r in rs})
                if not degrees:
                    continue
                vals = [np.array([r["normalized_spo_loss"] for r in rs if r["degree"] == d])
                        for d in degrees]
                mean = [v.mean() for v in vals]
                std = [v.std(ddof=1) if v.size > 1 else 0.0 for v in vals]
                color = METHOD_COLORS.get(m, palette[k % len(palette)])
                handles[m] = ax.errorbar(degrees, mean, yerr=std, marker="o", ms=4,
                                         capsize=2, lw=1.4, color=color, label=m)
            floor = {}
            for r in panel:
                if r.get("bayes_floor") is not None:
                    floor.setdefault(r["degree"], {})[r["seed"]] = r["bayes_floor"]
            if floor:
                degs = sorted(floor)
                handles["Bayes floor"] = ax.plot(
                    degs, [np.mean(list(floor[d].values())) for d in degs], ls="--",
                    color="black", lw=1.2, label="Bayes floor")[0]
            title = f"{p}, n_train = {n}" + ("" if noise is None else f", noise {noise:g}")
            ax.set_title(title, fontsize=10)
            ax.set_xlabel("degree")
            ax.set_xticks(sorted({r["degree"] for r in panel}))
            ax.set_ylabel("test normalized regret")
            ax.grid(alpha=0.3)
    methods = methods + ["Bayes floor"]
    fig.tight_layout(rect=(0, 0, 1 - 1.7 / (4.6 * len(sizes) + 1.8), 1))
    fig.legend([handles[m] for m in methods if m in handles],
               [m for m in methods if m in handles], loc="center right", frameon=False,
               fontsize=9)
    return {"pyepo.png": _save(fig, out, "pyepo.png", tight=False)}


def _energy(records, out):
    from ..plotting import METHOD_COLORS
    from ._configs import ENERGY_METHODS

    scalings = [s for s in ("raw", "standardized") if any(r["scaling"] == s for r in records)]
    methods = [m for m in ENERGY_METHODS if any(r["method"] == m for r in records)]
    caps = sorted({r["capacity"] for r in records})
    palette = ("#1f77b4", "#2ca02c", "#6baed6", "#9467bd", "#ff7f0e", "#fdae6b", "#d62728")
    fig = _figure((5.0 * len(scalings) + 1.8, 3.8))
    width = 0.8 / max(1, len(methods))
    for j, sc in enumerate(scalings):
        ax = fig.add_subplot(1, len(scalings), j + 1)
        for k, m in enumerate(methods):
            vals = [np.array([r["relative_regret"] for r in records if r["scaling"] == sc
                              and r["method"] == m and r["capacity"] == c]) for c in caps]
            x = np.arange(len(caps)) + (k - (len(methods) - 1) / 2) * width
            mean = [v.mean() if v.size else np.nan for v in vals]
            std = [v.std(ddof=1) if v.size > 1 else 0.0 for v in vals]
            ax.bar(x, mean, width, yerr=std, capsize=2, label=m,
                   color=METHOD_COLORS.get(m, palette[k % len(palette)]))
        ax.set_xticks(np.arange(len(caps)))
        ax.set_xticklabels([f"{c:g}" for c in caps])
        ax.set_xlabel("capacity")
        ax.set_ylabel("test relative regret (%)")
        ax.set_title(f"{sc} features", fontsize=10)
        ax.grid(alpha=0.3, axis="y")
    handles, labels = fig.axes[0].get_legend_handles_labels()
    fig.tight_layout(rect=(0, 0, 1 - 1.7 / (5.0 * len(scalings) + 1.8), 1))
    fig.legend(handles, labels, loc="center right", frameon=False, fontsize=9)
    return {"energy.png": _save(fig, out, "energy.png", tight=False)}


def draw(experiment, records, out):
    """Draw an experiment's figures into ``out``; returns {file name: path}."""
    if experiment == "shortest-path":
        return _shortest_path(records, out)
    if experiment == "illustrative":
        return _illustrative(records, out)
    if experiment == "pyepo":
        return _pyepo(records, out)
    if experiment == "energy":
        return _energy(records, out)
    return _news(records, out)
