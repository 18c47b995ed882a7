"""spotree.cli: help and usage errors answer without loading the library's heavy parts.

Each case runs ``python -X importtime -m spotree ARGS`` in a fresh interpreter
and reads the modules it imported from the ``-X importtime`` report on stderr.
"""

import os
import pathlib
import subprocess
import sys

import pytest

import spotree.cli

ROOT = pathlib.Path(__file__).resolve().parents[2]

# numpy is here too: alone it takes ~0.1 s, more than the rest of `spotree --help`.
HEAVY = ("sklearn", "numba", "pandas", "scipy", "numpy", "matplotlib")
FORBIDDEN = ("spotree.tree", "spotree.forest", "spotree.boost", "spotree.linear_model",
             "spotree.experiments", "spotree.cli._commands", "spotree.cli._io")


def run_with_importtime(*args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    res = subprocess.run([sys.executable, "-X", "importtime", "-m", "spotree", *args],
                         capture_output=True, text=True, env=env, timeout=120)
    imported, other = set(), []
    for line in res.stderr.splitlines():
        if line.startswith("import time:"):
            name = line.rsplit("|", 1)[1].strip()
            if name != "package":  # the report's header line
                imported.add(name)
        else:
            other.append(line)
    return res, imported, "\n".join(other)


@pytest.mark.parametrize("args, code, needle", [
    (["--help"], 0, "usage: spotree"),
    (["fit", "--help"], 0, "--validation-fraction"),
    (["reproduce", "--help"], 0, "shortest-path"),
    (["predict", "--help"], 0, "usage: spotree predict"),
    (["show", "--help"], 0, "usage: spotree show"),
    (["plot", "--help"], 0, "usage: spotree plot"),
    (["--version"], 0, f"spotree {spotree.__version__}"),
    ([], 2, "usage: spotree"),
    (["fit", "--data", "x.csv"], 2, "the following arguments are required"),
    (["bogus"], 2, "invalid choice: 'bogus'"),
    (["plot", "m.json", "--out", "t.png", "--dpi", "0"], 2, "--dpi"),
    (["reproduce", "shortest-path", "--depths", "0"], 2, "--depths"),
])
def test_help_and_usage_errors_import_nothing_heavy(args, code, needle):
    res, imported, stderr = run_with_importtime(*args)
    assert res.returncode == code, stderr
    assert needle in res.stdout + stderr
    assert "spotree.cli._parser" in imported  # the report was read
    heavy = sorted(m for m in imported
                   if m.split(".")[0] in HEAVY or m.startswith(FORBIDDEN))
    assert heavy == []


# `reproduce`'s method, problem and seed lists are checked against the
# experiments' configs: those load (no runner, no estimator), nothing heavy.
CONFIGS = ("spotree.experiments", "spotree.experiments._configs")


@pytest.mark.parametrize("args, needle", [
    (["reproduce", "shortest-path", "--methods", "BAD"], "unknown method(s) 'BAD'"),
    (["reproduce", "pyepo", "--methods", "SPOT,BAD"], "unknown method(s) 'BAD'"),
    (["reproduce", "shortest-path", "--seeds", "BAD"], "--seeds: must be a count"),
    (["reproduce", "pyepo", "--seeds", "-1"], "--seeds: must name at least one"),
    (["reproduce", "pyepo", "--problems", "BAD"], "unknown problem(s) 'BAD'"),
])
def test_reproduce_list_errors_load_the_configs_only(args, needle):
    res, imported, stderr = run_with_importtime(*args)
    assert res.returncode == 2, stderr
    assert needle in stderr and stderr.startswith("spotree reproduce: error:")
    assert "spotree.experiments._configs" in imported  # the lists were checked
    heavy = sorted(m for m in imported if m.split(".")[0] in HEAVY
                   or (m.startswith(FORBIDDEN) and m not in CONFIGS))
    assert heavy == []


def test_a_command_still_loads_what_it_needs(tmp_path):
    # `show` on a missing file fails inside the command, after loading it.
    res, imported, stderr = run_with_importtime("show", str(tmp_path / "nope.json"))
    assert res.returncode == 1, stderr
    assert stderr.strip().startswith("spotree show: error:") and "nope.json" in stderr
    assert {"spotree.cli._commands", "spotree.cli._io"} <= imported


def test_cli_error_is_exported():
    from spotree.cli._io import CLIError

    assert spotree.cli.CLIError is CLIError
    assert "CLIError" in spotree.cli.__all__
    with pytest.raises(AttributeError, match="no attribute 'CLIErrors'"):
        spotree.cli.CLIErrors  # noqa: B018


def test_traceback_is_taken_after_the_command_too(tmp_path, capsys):
    """The error says "rerun with --traceback"; put after the command (where one adds
    it), it was refused as an unrecognized argument."""
    from spotree.cli import CLIError, main

    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["show", str(bad)]) == 1
    assert "error:" in capsys.readouterr().err
    for argv in (["show", str(bad), "--traceback"], ["--traceback", "show", str(bad)]):
        with pytest.raises(CLIError, match="not a spotree model file"):
            main(argv)
