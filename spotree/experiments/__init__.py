"""The paper's experiments as configs, a cached parallel runner, tables and figures.

Run them from Python or with ``spotree reproduce``::

    from spotree.experiments import run_experiment
    result = run_experiment("shortest-path", quick=True, out="results", jobs=2)
    print(result["summary"])

New methods (e.g. another estimator) join every experiment through
:func:`register_method`.

Modules import one way: ``_configs`` (methods and grids) <- ``_tables``
(results.csv, summary.md) and ``_figures`` (PNG figures) <- ``_runner``
(runs them and writes everything).
"""

from ._configs import EXPERIMENTS, METHODS, Method, make_grid, parse_seeds, register_method
from ._runner import execute_run, run_experiment, warm_up

__all__ = ["EXPERIMENTS", "METHODS", "Method", "execute_run", "make_grid", "parse_seeds",
           "register_method", "run_experiment", "warm_up"]
