"""`spotree reproduce shortest-path --quick`, the README's main-job command, end to end."""

import csv
import os
import shutil
import subprocess

import pytest

SPOTREE = shutil.which("spotree")


def test_reproduce_shortest_path_quick_writes_csv_summary_and_figures(tmp_path):
    mpimg = pytest.importorskip("matplotlib.image")
    assert SPOTREE is not None, "the spotree console script is not installed"
    out = tmp_path / "results"
    env = dict(os.environ, MPLBACKEND="Agg")
    res = subprocess.run([SPOTREE, "reproduce", "shortest-path", "--quick", "--out", str(out)],
                         capture_output=True, text=True, env=env, timeout=900)
    assert res.returncode == 0, res.stderr
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
        per_cell[key] = per_cell.get(key, 0) + 1
    assert set(per_cell.values()) == {5}  # five seeds in every cell
    assert all(0.0 <= float(r["normalized_spo_loss"]) < 1.0 for r in rows)
    summary = (out / "summary.md").read_text()
    assert "SPOT vs CART" in summary and "## Figures" in summary
    pngs = sorted(p for p in os.listdir(out) if p.endswith(".png"))
    assert "shortest_path_n200.png" in pngs
    for p in pngs:
        img = mpimg.imread(out / p)
        assert img.ndim == 3 and min(img.shape[:2]) > 100
        assert img[..., :3].std() > 0.05, p
        assert f"]({p})" in summary
    # A second call only reuses the cache.
    again = subprocess.run([SPOTREE, "reproduce", "shortest-path", "--quick", "--out",
                            str(out), "--quiet", "--no-figures"],
                           capture_output=True, text=True, env=env, timeout=900)
    assert again.returncode == 0
    assert f"{len(rows)} runs ({len(rows)} reused from the cache)" in again.stdout
