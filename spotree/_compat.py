"""Optional dependencies, imported in one place.

Each ``*_INSTALLED`` flag says whether an optional package can be imported,
without importing it (matplotlib and dask are slow to import).
:func:`import_optional` imports one on demand and, when it is missing, raises
an ImportError that names the pip extra providing it.
"""

from __future__ import annotations

import importlib
import importlib.util

__all__ = [
    "MATPLOTLIB_INSTALLED",
    "DASK_INSTALLED",
    "YAML_INSTALLED",
    "PANDAS_INSTALLED",
    "GUROBI_INSTALLED",
    "CVXPY_INSTALLED",
    "PYEPO_INSTALLED",
    "TORCH_INSTALLED",
    "NETWORKX_INSTALLED",
    "import_optional",
]


def _installed(name):
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


MATPLOTLIB_INSTALLED = _installed("matplotlib")
DASK_INSTALLED = _installed("dask") and _installed("distributed")
YAML_INSTALLED = _installed("yaml")
PANDAS_INSTALLED = _installed("pandas")
GUROBI_INSTALLED = _installed("gurobipy")
CVXPY_INSTALLED = _installed("cvxpy")
PYEPO_INSTALLED = _installed("pyepo")
TORCH_INSTALLED = _installed("torch")
NETWORKX_INSTALLED = _installed("networkx")

# module name -> (pip extra, package name shown to the user)
_EXTRAS = {
    "matplotlib": ("plot", "matplotlib"),
    "matplotlib.pyplot": ("plot", "matplotlib"),
    "dask": ("dask", "dask[distributed]"),
    "distributed": ("dask", "dask[distributed]"),
    "dask.distributed": ("dask", "dask[distributed]"),
    "yaml": ("yaml", "pyyaml"),
    "gurobipy": ("gurobi", "gurobipy"),
    "cvxpy": ("cvxpy", "cvxpy"),
    "pyepo": ("pyepo", "pyepo"),
    "torch": (None, "torch"),
    "networkx": ("networkx", "networkx"),
    "pandas": (None, "pandas"),
}


def import_optional(name, purpose=None):
    """Import the optional module ``name`` or raise a helpful ImportError.

    Parameters
    ----------
    name : str
        Module to import, e.g. ``"matplotlib.pyplot"``.
    purpose : str, default=None
        What needs it, for the error message (e.g. ``"plot_tree"``).

    Returns
    -------
    module

    Raises
    ------
    ImportError
        ``"plot_tree requires matplotlib, which is not installed: pip install
        spotree[plot]"``.
    """
    try:
        return importlib.import_module(name)
    except ImportError:
        extra, package = _EXTRAS.get(name, (None, name.split(".")[0]))
        what = purpose or "this feature"
        hint = f"pip install spotree[{extra}]" if extra else f"pip install {package}"
        raise ImportError(f"{what} requires {package}, which is not installed: {hint}") from None
