"""The ``spotree`` command: reproduce the paper; fit, predict, evaluate, compare, show, plot.

The package is split in three: :mod:`._parser` (the argparse interface),
:mod:`._io` (CSV tables through pandas, problem specs, model files, output
paths) and :mod:`._commands` (one function per subcommand, which checks its
options and calls the library). See ``spotree --help``.

Every failure is reported as one line on stderr with a non-zero exit code (2
for usage errors, 1 for the rest, 130 for Ctrl-C), and outputs are written to
a temporary file and renamed into place, so a failed command never leaves a
partial file behind.
"""

from __future__ import annotations

import os
import sys
import warnings

from ._parser import build_parser

__all__ = ["main", "build_parser", "CLIError"]

# The commands and their CSV input (._commands, ._io) import numpy, pandas and,
# through the estimators, scikit-learn and numba: they load only once a command
# runs, so that --help and usage errors answer at once (0.03 s, not 1.3 s).


def __getattr__(name):
    if name == "CLIError":
        from ._io import CLIError

        return CLIError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _one_line_warnings(message, category, filename, lineno, file=None, line=None):
    text = " ".join(str(message).split())
    (file or sys.stderr).write(f"spotree: warning: {text}\n")


def main(argv=None):
    """Entry point of the ``spotree`` command; returns the exit code."""
    os.environ.setdefault("MPLBACKEND", "Agg")  # never open a window
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    prog = f"spotree {args.command}"
    from . import _commands
    from ._io import CLIError

    command = {"reproduce": _commands.reproduce, "fit": _commands.fit,
               "predict": _commands.predict, "evaluate": _commands.evaluate,
               "compare": _commands.compare,
               "show": _commands.show,
               "plot": _commands.plot}[args.command]
    saved = warnings.showwarning
    warnings.showwarning = _one_line_warnings
    try:
        return command(args) or 0
    except KeyboardInterrupt:
        note = (" (finished runs are cached; rerun to resume)"
                if args.command == "reproduce" else "; nothing was written")
        print(f"{prog}: interrupted{note}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. 'spotree show m.json | head'
        # Python would complain again when it flushes stdout at exit.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 0
    except Exception as exc:
        if args.traceback:
            raise
        msg = " ".join(str(exc).split()) or type(exc).__name__
        if not isinstance(exc, (CLIError, ValueError, OSError, ImportError)):
            msg = f"{type(exc).__name__}: {msg} (rerun with --traceback for details)"
        print(f"{prog}: error: {msg}", file=sys.stderr)
        return 1
    finally:
        warnings.showwarning = saved


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
