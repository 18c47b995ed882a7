"""The ``spotree`` commands that the README, examples/README.md and the CLI guide
(docs/user_guide/reproducing.rst) show on the example files run as written.

The Python examples of these pages run elsewhere (tests/test_readme.py,
tests/test_docs.py); their shell commands did not, so a command naming a file
that no earlier command wrote went unnoticed. Every ``spotree`` command of a
bash block whose ``--data`` is one of ``examples/`` runs here, in a folder
holding a copy of ``examples/``, in the order of the page (the commands after
a fit read the model it saved). ``spotree reproduce`` is left to
tests/experiments, and commands on files of the reader's own (``--data
sales.csv``) are left out.
"""

import re
import shlex
import shutil
from pathlib import Path

import pytest

from ._helpers import run_in_process

ROOT = Path(__file__).resolve().parents[2]
PAGES = ("README.md", "examples/README.md", "docs/user_guide/reproducing.rst")


def _bash_blocks(text, rst):
    if not rst:
        return re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    blocks = []
    for m in re.finditer(r"^\.\. code-block:: bash\n\n((?:(?: {3}.*)?\n)+)", text, flags=re.M):
        blocks.append("\n".join(line[3:] for line in m.group(1).splitlines()))
    return blocks


def _commands(page):
    """The page's ``spotree`` commands on the example files, as argument lists."""
    text = (ROOT / page).read_text(encoding="utf-8")
    out = []
    for block in _bash_blocks(text, page.endswith(".rst")):
        for line in re.sub(r"\\\n", " ", block).splitlines():
            args = shlex.split(line, comments=True)
            if not args or args[0] != "spotree" or args[1] == "reproduce":
                continue
            data = args[args.index("--data") + 1] if "--data" in args else None
            if data is not None and not data.startswith("examples/"):
                continue  # the reader's own file
            out.append(args[1:])
    return out


def test_the_pages_show_commands_on_the_example_files():
    # The collection itself: a page rewritten so that no command is found
    # would pass the test below without running anything.
    for page in PAGES:
        names = [args[0] for args in _commands(page)]
        assert {"fit", "show", "predict", "evaluate", "compare", "plot"} <= set(names), page


@pytest.mark.parametrize("page", PAGES)
def test_the_pages_commands_run_as_written(page, tmp_path, monkeypatch, capsys):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    for args in _commands(page):
        res = run_in_process(capsys, *args)
        assert res.returncode == 0, (page, " ".join(args), res.stderr)
