"""The paper's experiments as configs, a cached parallel runner, tables and figures.

Run them from Python or with ``spotree reproduce``::

    from spotree.experiments import run_experiment
    result = run_experiment("shortest-path", quick=True, out="results", jobs=2)
    print(result["summary"])

New methods (e.g. another estimator) join every experiment through
:func:`register_method`; methods whose estimator is not importable are skipped
and listed in the summary.
"""

from ._configs import EXPERIMENTS, METHODS, Method, make_grid, parse_seeds, register_method
from ._runner import execute_run, run_experiment

__all__ = ["EXPERIMENTS", "METHODS", "Method", "execute_run", "make_grid", "parse_seeds",
           "register_method", "run_experiment"]
