"""Smoke test of benchmarks/bench_memory.py on a tiny size, in this process (the
benchmark itself runs every measurement in a fresh process and is not part of
the suite)."""

import importlib.util
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "benchmarks", "bench_memory.py")


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_memory", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # Kernels loaded as the rest of the suite has them (the measurement is the test).
    X, C, problem = module.make_data("sp4", 100)
    from spotree import SPOTree

    SPOTree(problem, max_depth=2).fit(X, C)
    return module


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_bench_memory_measures_and_prints_a_row(bench, capsys):
    s = bench.measure("spotree", "sp4", "tree", 300)
    assert s["base"] > 0 and s["fit_peak"] >= s["base"] and s["fit_inc"] >= 0
    assert s["model"] > 0 and s["nodes"] >= 1 and s["leaves"] >= 1
    # X (300 x 5) and C (300 x 24) as float64.
    assert s["data_mb"] == pytest.approx(300 * 29 * 8 / 2 ** 20)
    # (The peer's side is measured alike; a copy stands for it here.)
    c = dict(s, fit_inc=s["fit_inc"] + 1.0)
    bench.header()
    bench.row("sp4", "tree", s, c)
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("sp4") and "spotree" in out[1] and "fit+ <=" in out[1]
    assert "sklearn" in out[2]


def test_bench_memory_process_row_runs_in_processes_in_each_block(bench):
    # measure() enters a context for the warm-up, then one for the measured
    # fit; reusing one parallel_config object for both ran the measured fit on
    # threads (joblib sets the configuration when the object is made and
    # restores the previous one on the first exit): the "loky" rows measured
    # threads.
    from joblib.parallel import get_active_backend

    seen = []
    for _ in range(2):
        with bench.model_context("forest2p"):
            seen.append(type(get_active_backend(prefer="threads")[0]).__name__)
    assert seen == ["LokyBackend", "LokyBackend"]
