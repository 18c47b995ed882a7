"""`spotree reproduce shortest-path --quick --out DIR`, the README's main job, end to end."""

import csv
import os
import subprocess
import sys

import numpy as np
import pytest

from spotree.datasets import make_shortest_path
from spotree.problems import ShortestPath

# No venv on PATH: `python -m spotree` must work without an activated environment.
ENV = dict(os.environ, MPLBACKEND="Agg", PATH=os.pathsep.join(["/usr/bin", "/bin"]))


def spotree(*args):
    return subprocess.run([sys.executable, "-m", "spotree", *map(str, args)],
                          capture_output=True, text=True, env=ENV, timeout=900)


def random_prediction_loss(degree, noise, n=1000, draws=5):
    """Normalized SPO loss of uniform random cost predictions, computed here from the
    oracle's decisions (the bar any learned model must clear by far)."""
    sp = ShortestPath((4, 4))
    out = []
    for s in range(draws):
        _, C = make_shortest_path(n, degree=degree, noise=noise, random_state=500 + s)
        W, _ = sp.solve(np.random.default_rng(s).uniform(size=C.shape))
        z = np.min(C @ sp.vertices().T, axis=1)  # brute force over the 20 paths
        out.append((np.einsum("ij,ij->i", C, W) - z).sum() / z.sum())
    return float(np.mean(out))


def test_reproduce_shortest_path_quick_writes_csv_summary_and_figures(tmp_path):
    mpimg = pytest.importorskip("matplotlib.image")
    res = spotree("reproduce", "shortest-path", "--quick", "--out", tmp_path / "results")
    assert res.returncode == 0, res.stderr
    out = tmp_path / "results" / "shortest-path"
    assert "runs" in res.stderr  # progress is reported on stderr
    with open(out / "results.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    methods = {r["method"] for r in rows}
    assert {"SPOT", "CART"} <= methods
    assert {r["n_train"] for r in rows} == {"200"}
    assert {r["depth"] for r in rows if r["method"] == "SPOT"} == {"1", "2", "3", ""}
    per_cell = {}
    for r in rows:
        key = (r["method"], r["degree"], r["noise"], r["depth"])
        per_cell.setdefault(key, []).append(float(r["normalized_spo_loss"]))
    assert {len(v) for v in per_cell.values()} == {5}  # five seeds in every cell
    for deg, noise in {(r["degree"], r["noise"]) for r in rows}:
        bar = random_prediction_loss(int(deg), float(noise))
        cells = {k: np.mean(v) for k, v in per_cell.items() if k[1:3] == (deg, noise)}
        assert all(0.0 <= m < 0.5 * bar for m in cells.values()), (deg, noise, bar, cells)
        # The paper's finding, on the quick grid: SPOT's decisions beat CART's.
        spot = np.mean([v for k, v in cells.items() if k[0] == "SPOT"])
        cart = np.mean([v for k, v in cells.items() if k[0] == "CART"])
        assert spot < cart, (deg, noise, spot, cart)
    summary = (out / "summary.md").read_text()
    assert "SPOT vs CART" in summary and "## Figures" in summary
    assert "Compilation is not included" in summary
    pngs = sorted(p for p in os.listdir(out) if p.endswith(".png"))
    assert "shortest_path_n200.png" in pngs
    for p in pngs:
        img = mpimg.imread(out / p)
        assert img.ndim == 3 and min(img.shape[:2]) > 100
        assert img[..., :3].std() > 0.05, p
        assert f"]({p})" in summary
    # A second call only reuses the cache.
    again = spotree("reproduce", "shortest-path", "--quick", "--out", tmp_path / "results",
                    "--quiet", "--no-figures")
    assert again.returncode == 0
    assert f"{len(rows)} runs ({len(rows)} reused from the cache)" in again.stdout
