"""The README's Python examples run as written."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _python_blocks():
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_has_quickstart():
    blocks = _python_blocks()
    assert blocks, "README.md has no python example"
    assert len(blocks[0].strip().splitlines()) <= 15


def test_readme_python_blocks_run(capsys):
    for block in _python_blocks():
        namespace = {}
        exec(compile(block, "README.md", "exec"), namespace)
    out = capsys.readouterr().out
    # The quickstart prints the test loss and the number of leaves.
    loss = float(out.splitlines()[0])
    assert 0.0 <= loss < 0.2
    assert out.splitlines()[1].endswith("leaves")


def test_readme_commands_match_ci():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'pip install -e ".[dev]" && python -m pytest' in readme
    assert "python -m pytest" in ci and '".[dev]"' in ci
    assert "spotree reproduce shortest-path --quick" in readme
