"""pyproject.toml's lower bounds are the versions tools/min-constraints.txt tests."""

import pathlib
import re
import sys

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = pathlib.Path(__file__).resolve().parents[1]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest itself needs tomli before Python 3.11
    tomllib = pytest.importorskip("tomli")


def _pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _pins():
    """``{name: Version}`` and the ``# python: X.Y`` line of the constraints file."""
    pins, python = {}, None
    for line in (ROOT / "tools" / "min-constraints.txt").read_text().splitlines():
        m = re.fullmatch(r"#\s*python:\s*(\S+)", line.strip())
        if m:
            python = m.group(1)
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[canonicalize_name(name)] = Version(version)
    return pins, python


def _lower_bound(req):
    bounds = [s.version for s in req.specifier if s.operator == ">="]
    return Version(bounds[0]) if bounds else None


def test_lower_bounds_are_the_tested_minimum_versions():
    project = _pyproject()["project"]
    pins, python = _pins()
    assert project["requires-python"] == f">={python}"
    core = [Requirement(r) for r in project["dependencies"]]
    extras = [Requirement(r) for rs in project["optional-dependencies"].values() for r in rs]
    # Every core dependency is pinned; an extra is when the check installs it (the dev
    # extra, the docs extra): not gurobipy, pyepo or pystreed.
    assert {canonicalize_name(r.name) for r in core} <= set(pins)
    checked = set()
    for req in core + extras:
        name, bound = canonicalize_name(req.name), _lower_bound(req)
        if name not in pins or bound is None:
            continue
        pin = pins[name]
        # "numpy>=1.23" is tested at the newest 1.23 patch, "pulp>=3.3.1" at 3.3.1.
        assert pin.release[:len(bound.release)] == bound.release, (req, pin)
        assert req.specifier.contains(pin), (req, pin)
        checked.add(name)
    assert {"highspy", "pandas", "cvxpy", "sphinx-gallery", "pytest"} <= checked


def test_the_check_script_uses_the_constraints():
    script = (ROOT / "tools" / "check_min_versions.sh").read_text()
    assert "-c \"$ROOT/tools/min-constraints.txt\"" in script
    assert "PYTHON:-python" + _pins()[1] in script
