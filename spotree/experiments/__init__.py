"""The paper's experiments as configs, a cached parallel runner, tables and figures.

Run them from Python or with ``spotree reproduce``::

    from spotree.experiments import run_experiment
    result = run_experiment("shortest-path", quick=True, out="results", jobs=2)
    print(result["summary"])

``run_experiment("pyepo", ...)`` compares SPOBoost, SPOForest, SPOTree and SPO+
with two-stage methods (and PyEPO's own SPO+ and PFYL where installed) on PyEPO's
shortest path and knapsack benchmarks, next to the Bayes floor;
``run_experiment("energy", data=path, ...)`` compares them on the ICON energy
knapsack (real data).

New methods (e.g. another estimator) join the paper's experiments
(shortest-path, illustrative, news) through :func:`register_method`, and the
PyEPO comparison through :func:`register_pyepo_method` (the energy
comparison's are the entries of ``ENERGY_METHODS``).

Modules import one way: ``_configs`` (methods and grids) <- ``_tables``
(results.csv, summary.md), ``_figures`` (PNG figures), ``_pyepo`` and
``_energy`` (one run of the PyEPO and energy comparisons) <- ``_runner`` (runs
them and writes everything).
"""

import importlib
from typing import TYPE_CHECKING

from ._configs import (ENERGY_METHODS, EXPERIMENTS, METHODS, PYEPO_METHODS, PYEPO_PROBLEMS,
                       Method, PyEPOMethod, make_grid, parse_seeds, pyepo_available,
                       register_method, register_pyepo_method)

if TYPE_CHECKING:
    from ._runner import execute_run, run_experiment, warm_up

# The runner loads on first use (PEP 562): it imports numpy and the
# estimators, which the configs alone (what `spotree reproduce` checks its
# arguments against) do not need.
_RUNNER = ("execute_run", "run_experiment", "warm_up")

__all__ = ["ENERGY_METHODS", "EXPERIMENTS", "METHODS", "Method", "PYEPO_METHODS",
           "PYEPO_PROBLEMS", "PyEPOMethod", "execute_run", "make_grid", "parse_seeds",
           "pyepo_available", "register_method", "register_pyepo_method", "run_experiment",
           "warm_up"]


def __getattr__(name):
    if name in _RUNNER:
        value = getattr(importlib.import_module("._runner", __name__), name)
        globals()[name] = value  # later lookups skip __getattr__
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    # The public names (the runner's before it loads), not this file's imports.
    return sorted(set(__all__) | {n for n in globals() if n.startswith("__")})
