"""Helpers shared by the command-line tests."""

import subprocess

from spotree.cli import main


def run_in_process(capsys, *args):
    """``spotree ARGS`` through :func:`spotree.cli.main` in this process (no start-up).

    Returns a ``subprocess.CompletedProcess`` with the exit code (argparse's
    usage errors included) and what was printed.
    """
    capsys.readouterr()
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:  # argparse usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), code, out, err)


def assert_one_line_error(res, *needles, code=1, prefix="spotree ",
                          absent=(".spotree-", "Traceback")):
    """The command failed with ``code`` and one line on stderr that starts with
    ``prefix``, holds every needle and none of ``absent`` (no traceback, no
    temporary file of an atomic write)."""
    assert res.returncode == code, (res.returncode, res.stdout, res.stderr)
    err = res.stderr.strip()
    assert len(err.splitlines()) == 1 and err.startswith(prefix), err
    for n in needles:
        assert n in err, err
    for a in absent:
        assert a not in err, err
