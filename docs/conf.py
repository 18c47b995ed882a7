"""Sphinx configuration of spotree's documentation.

Build it with ``python -m sphinx -W -b html docs docs/_build/html`` (needs the
``docs`` extra). Nothing is fetched from the internet: there is no
intersphinx, and the gallery runs its examples on local, synthetic data.
"""

import os
import sys
import warnings

import spotree

HERE = os.path.dirname(os.path.abspath(__file__))

project = "spotree"
author = "the spotree developers"
copyright = "the spotree developers (BSD-3-Clause)"
version = release = spotree.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.doctest",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
# gallery_src holds the gallery's scripts; sphinx-gallery turns them into
# auto_examples/ (and reads GALLERY_HEADER.rst itself).
exclude_patterns = ["_build", "gallery_src", "Thumbs.db", ".DS_Store"]
root_doc = "index"
default_role = "code"  # `x` in prose is inline code, not a cross-reference
pygments_style = "sphinx"

# -- API reference ------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "inherited-members": True}
autodoc_typehints = "none"  # the numpydoc sections say it, in words
autoclass_content = "class"  # __init__ only stores its arguments
autodoc_member_order = "groupwise"

numpydoc_show_class_members = False  # autodoc lists the members instead
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# Members that scikit-learn's BaseEstimator contributes (get_params,
# set_params, metadata routing) follow scikit-learn's documentation and are
# left out of the pages of spotree's estimators.
_SKLEARN_MEMBERS = {"get_params", "set_params", "get_metadata_routing"}


def _skip_foreign_members(app, what, name, obj, skip, options):
    if name in _SKLEARN_MEMBERS or (name.startswith("set_") and name.endswith("_request")):
        return True
    target = getattr(obj, "fget", obj)
    module = getattr(target, "__module__", None) or ""
    if what == "class" and callable(target) and module and not module.startswith("spotree"):
        return True
    return skip


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign_members)


# -- doctest builder (the guide's examples) -----------------------------------
# Docstring examples are run by the test suite (tests/test_docs.py); the
# doctest builder runs the ``.. doctest::`` blocks of the guide pages only.
doctest_test_doctest_blocks = ""
# The setup binds no name a page could use unawares: every page imports what
# its examples use (numpy included), as a reader copying them must.
doctest_global_setup = """
__import__("numpy").set_printoptions(legacy=False)
HAVE_CVXPY = __import__("importlib.util").util.find_spec("cvxpy") is not None
HAVE_NETWORKX = __import__("importlib.util").util.find_spec("networkx") is not None
"""

# -- gallery --------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": [os.path.join(HERE, "gallery_src")],
    "gallery_dirs": [os.path.join(HERE, "auto_examples")],
    "filename_pattern": r"plot_",
    "within_subsection_order": "FileNameSortKey",
    "abort_on_example_error": True,
    "remove_config_comments": True,
    "download_all_examples": False,
    "reset_modules": ("matplotlib",),
    "matplotlib_animations": False,
    "show_signature": False,
}

# Matplotlib draws headless while the examples run.
os.environ.setdefault("MPLBACKEND", "Agg")
warnings.filterwarnings("ignore", category=UserWarning,
                        message="Matplotlib is currently using agg")

# -- HTML -----------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"spotree {release}"
html_static_path = []
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
}
html_show_sourcelink = False
