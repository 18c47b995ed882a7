"""The experiment figures: what each panel draws, read back from the matplotlib Figure."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from spotree.experiments import _figures  # noqa: E402


def _illustrative_records(losses):
    """Hand-made illustrative rows: ``losses[(method, depth)]`` lists one loss per seed.

    Each run's predicted costs are constant, equal to its seed, so a panel shows which
    seed it drew."""
    x = np.linspace(0, 1, 11)
    rows = []
    for (method, depth), vals in losses.items():
        for seed, loss in vals:
            C = np.full((x.size, 2), float(seed))
            C[:, 1] += 1.0
            rows.append(dict(method=method, depth=depth, seed=seed, normalized_spo_loss=loss,
                             _extra={"x": x, "C_pred": C,
                                     "W_pred": np.tile([1.0, 0.0], (x.size, 1))}))
    return rows


def _legend_lines(ax):
    """{legend label: its data line} (an errorbar's handle holds the line first)."""
    handles, labels = ax.get_legend_handles_labels()
    return {lab: getattr(h, "lines", [h])[0] for h, lab in zip(handles, labels)}


def test_illustrative_panel_d_draws_the_mean_over_seeds_and_panels_a_c_name_their_seed():
    # Panel (d) joined every seed's point in record order (a zigzag through the runs);
    # (a)-(c) drew the first record's seed without saying which.
    losses = {("SPOT", 1): [(3, 0.0), (1, 0.02)], ("SPOT", 2): [(3, 0.01), (1, 0.03)],
              ("CART", 1): [(3, 0.3), (1, 0.5)], ("CART", 4): [(3, 0.1), (1, 0.2)]}
    fig = _figures._illustrative_figure(_illustrative_records(losses))
    a, b, c, d = fig.axes[:4]
    assert [ax.get_title() for ax in (a, b, c)] == [
        "(a) SPOT (depth 1), seed 1", "(b) CART (depth 1), seed 1", "(c) CART (depth 4), seed 1"]
    # The drawn seed's predictions: seed 1's constant cost 1 (seed 3's would be 3).
    ys = [np.asarray(ln.get_ydata(), float) for ln in a.get_lines()]
    assert any(y.size == 11 and np.allclose(y, 1.0) for y in ys)
    assert not any(y.size == 11 and np.allclose(y, 3.0) for y in ys)
    assert "mean over 2 seeds" in d.get_title()
    lines = _legend_lines(d)
    assert set(lines) == {"SPOT", "CART"}
    # The means by hand: SPOT 0.01 at depth 1, 0.02 at depth 2; CART 0.4, 0.15.
    np.testing.assert_allclose(np.asarray(lines["SPOT"].get_xdata(), float), [1, 2])
    np.testing.assert_allclose(np.asarray(lines["SPOT"].get_ydata(), float), [0.01, 0.02])
    np.testing.assert_allclose(np.asarray(lines["CART"].get_xdata(), float), [1, 4])
    np.testing.assert_allclose(np.asarray(lines["CART"].get_ydata(), float), [0.4, 0.15])
    # Error bars of one standard deviation: CART at depth 1 spans 0.4 -+ 0.1414.
    segs = [s for coll in d.collections for s in coll.get_segments()]
    spans = sorted((round(float(s[0][1]), 4), round(float(s[1][1]), 4)) for s in segs)
    assert (round(0.4 - np.std([0.3, 0.5], ddof=1), 4),
            round(0.4 + np.std([0.3, 0.5], ddof=1), 4)) in spans


def test_illustrative_with_one_seed_keeps_the_paper_titles():
    losses = {("SPOT", 1): [(0, 0.0)], ("CART", 1): [(0, 0.3)], ("CART", 4): [(0, 0.1)]}
    fig = _figures._illustrative_figure(_illustrative_records(losses))
    assert [ax.get_title() for ax in fig.axes[:4]] == [
        "(a) SPOT (depth 1)", "(b) CART (depth 1)", "(c) CART (depth 4)",
        "(d) SPOT vs CART loss"]
    lines = _legend_lines(fig.axes[3])
    np.testing.assert_allclose(np.asarray(lines["CART"].get_ydata(), float), [0.3, 0.1])


def test_the_leaves_caption_names_every_method_the_leaves_figure_draws(monkeypatch):
    # The leaves figure draws SPOT Optimal's trees too (the full grid runs it), but its
    # caption named only "the pruned SPOT and CART trees".
    figs = {}
    monkeypatch.setattr(_figures, "_save", lambda fig, out, name, tight=True:
                        figs.setdefault(name, fig) and name)
    rows = [dict(method=m, depth=d, seed=s, n_train=200, degree=2, noise=0.0,
                 normalized_spo_loss=0.1 + 0.01 * s, n_leaves=2 + s)
            for m in ("SPOT", "CART", "SPOT Optimal", "SPO Forest") for d in (1, 2)
            for s in (0, 1)]
    _figures._shortest_path(rows, None)
    legend = [t.get_text() for t in figs["shortest_path_n200_leaves.png"].legends[0].texts]
    assert legend == ["SPOT", "CART", "SPOT Optimal"]
    for n in (200, 10000):
        caption = _figures.CAPTIONS[f"shortest_path_n{n}_leaves.png"]
        assert "SPOT Optimal" in caption and "SPOT," in caption and "CART" in caption
