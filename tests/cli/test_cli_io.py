"""spotree.cli._io: CSV tables through pandas, output paths, checks that name the cell."""

import csv
import os
import re
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from spotree.cli._io import (CLIError, check_input_file, check_output_dir, check_output_file,
                             check_summable, numeric_matrix, read_table, select_columns)


def write(path, text):
    path.write_text(text)
    return path


def load(path):
    df = read_table(path)
    return df, numeric_matrix(df, list(df.columns), path)


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 30), st.integers(1, 6)),
              elements=st.floats(-1e300, 1e300, allow_nan=False)))
def test_round_trip_of_any_finite_table(tmp_path_factory, A):
    """Written with the csv module (repr of each float), read back bit for bit."""
    path = tmp_path_factory.mktemp("rt") / "t.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow([f"col {j}" for j in range(A.shape[1])])
        w.writerows([[repr(float(v)) for v in row] for row in A])
    df, M = load(path)
    assert list(df.columns) == [f"col {j}" for j in range(A.shape[1])]
    np.testing.assert_array_equal(M, A)


def test_floats_that_pandas_default_parser_rounds_wrongly_are_read_exactly(tmp_path):
    # Before pandas 3.1, read_csv's default parser read these one unit in the
    # last place off (pandas 1.5.3 to 3.0.6: 2.2517997595648356e+16 as
    # 2.251799759564836e+16); Python's float() is the reference.
    text = "a\n2.2517997595648356e+16\n0.1\n1.7976931348623157e+308\n"
    df, M = load(write(tmp_path / "f.csv", text))
    expected = [float(v) for v in text.split()[1:]]
    assert M[:, 0].tolist() == expected


def test_quotes_spaces_blank_lines_and_bom(tmp_path):
    text = '\ufeff"a, b", c\n\n1.5, 2\n   \n"3",4e2\n'
    df, M = load(write(tmp_path / "q.csv", text))
    assert list(df.columns) == ["a, b", "c"]
    np.testing.assert_array_equal(M, [[1.5, 2.0], [3.0, 400.0]])


def bad_cell_message(tmp_path, text, column):
    path = write(tmp_path / "bad.csv", text)
    df = read_table(path)
    with pytest.raises(CLIError) as info:
        numeric_matrix(df, [column], path)
    return str(info.value)


@pytest.mark.parametrize("cell, what", [
    ("abc", "'abc' is not a number"), ("", "empty cell"), ("nan", "not a finite number"),
    ("NaN", "not a finite number"), ("inf", "not a finite number"),
    ("-Infinity", "not a finite number"), ("1,5", None), ("1e999", "not a finite number"),
])
def test_the_first_bad_cell_is_named_by_line_and_column(tmp_path, cell, what):
    # Blank lines and a quoted multi-line header field: the line number must be the
    # file's line, counted independently here.
    lines = ['"first\nname",cost', "1,2", "", "3,4", "5,6", "7,8"]
    bad_line_index = 4  # "5,6": the 6th physical line of the file (1-based)
    cells = lines[bad_line_index].split(",")
    cells[1] = f'"{cell}"' if "," in cell else cell
    lines[bad_line_index] = ",".join(cells)
    text = "\n".join(lines) + "\n"
    physical = text[:text.index(lines[bad_line_index] + "\n")].count("\n") + 1
    msg = bad_cell_message(tmp_path, text, "cost")
    assert f"bad.csv, line {physical}, column 'cost'" in msg
    assert what is None or what in msg
    if what is None:  # a decimal comma is text
        assert "'1,5' is not a number" in msg


def test_text_anywhere_in_a_long_column_is_found(tmp_path):
    n = 5000
    vals = [str(i * 0.5) for i in range(n)]
    vals[3777] = "12..5"
    text = "c\n" + "\n".join(vals) + "\n"
    msg = bad_cell_message(tmp_path, text, "c")
    assert "line 3779, column 'c': '12..5' is not a number" in msg


@pytest.mark.parametrize("text, needle", [
    ("", "is empty"), ("\n \n", "is empty"), ("a,b\n", "header but no data rows"),
    ("a,b,a\n1,2,3\n", "duplicate column names: 'a'"),
    (" a,a \n1,2\n", "duplicate column names: 'a'"),
    ("a,b\n1,2\n3,4,5\n", "line 3: 3 fields but the header has 2"),
    # Every row one field longer than the header: pandas would take the first
    # column as the index, or drop the last one.
    ("a,b\n1,2,3\n4,5,6\n", "line 2: 3 fields but the header has 2"),
])
def test_malformed_tables(tmp_path, text, needle):
    path = write(tmp_path / "m.csv", text)
    with pytest.raises(CLIError, match=needle.replace("(", r"\(")):
        read_table(path)


def test_a_short_row_names_the_missing_column(tmp_path):
    assert "line 3, column 'c': missing (the line has 2 fields, the header 3)" in \
        bad_cell_message(tmp_path, "a,b,c\n1,2,3\n4,5\n", "c")


def test_a_trailing_comma_is_not_a_field(tmp_path):
    _, M = load(write(tmp_path / "t.csv", "a,b\n1,2,\n3,4,\n"))
    np.testing.assert_array_equal(M, [[1, 2], [3, 4]])


def test_not_text(tmp_path):
    path = tmp_path / "b.csv"
    path.write_bytes(b"a,b\n1,\xff\xfe\n")
    with pytest.raises(CLIError, match="not a text CSV file"):
        read_table(path)


def test_select_columns_by_name_and_pattern_in_file_order():
    cols = ["x2", "c1", "x10", "x1", "c0"]
    assert select_columns("x*", cols, "--features", "f.csv") == ["x2", "x10", "x1"]
    assert select_columns("x1, x?", cols, "--features", "f.csv") == ["x1", "x2"]
    with pytest.raises(CLIError, match=r"--costs: no column 'd\*' in f.csv \(columns: x2, "):
        select_columns("d*", cols, "--costs", "f.csv")
    with pytest.raises(CLIError, match="names no columns"):
        select_columns(" , ", cols, "--costs", "f.csv")
    # An item that adds no column (a repeated name, a pattern already covered) was
    # dropped silently; --costs c0,c0 then failed on the count, naming no column.
    for spec, item in (("c0,c0", "c0"), ("x*,x1", "x1"), ("x10, x1?", "x1?")):
        with pytest.raises(CLIError, match=rf"--costs: '{re.escape(item)}' selects only "
                                           r"column\(s\) already selected"):
            select_columns(spec, cols, "--costs", "f.csv")


def test_check_summable_names_the_column_whose_sum_overflows():
    C = np.ones((10, 3))
    C[:, 1] = 1e307  # 10 x 1e307 = 1e308: finite
    check_summable(C, ["a", "b", "c"], "f.csv")
    C[:, 2] = 1e308  # 10 x 1e308 overflows
    with pytest.raises(CLIError, match="f.csv, column 'c': the costs are too large"):
        check_summable(C, ["a", "b", "c"], "f.csv")
    C[:, 2] = -1e307
    # Weights do not push it over: a weighted mean is the same with the weights
    # scaled, and the library takes them in units of a power of two (weights of
    # 1e308 on costs of 1 were refused as "costs too large to average").
    check_summable(C, ["a", "b", "c"], "f.csv", sample_weight=np.full(10, 100.0))
    check_summable(np.ones((10, 3)), ["a", "b", "c"], "f.csv",
                   sample_weight=np.full(10, 1e308))
    C[:, 2] = 1e308
    with pytest.raises(CLIError, match="column 'c'"):  # the costs themselves still do
        check_summable(C, ["a", "b", "c"], "f.csv", sample_weight=np.full(10, 100.0))


def test_input_and_output_paths(tmp_path):
    with pytest.raises(CLIError, match="data file not found: .*nope.csv"):
        check_input_file(tmp_path / "nope.csv", "data file")
    with pytest.raises(CLIError, match="is a directory, not a file"):
        check_input_file(tmp_path, "model file")
    with pytest.raises(CLIError, match=r"--out .* is a directory, not a file"):
        check_output_file(tmp_path, "--out")
    # Missing folders are fine (created when the file is written), and nothing is made now.
    check_output_file(tmp_path / "a" / "b" / "m.json", "--model")
    write(tmp_path / "f", "x")
    with pytest.raises(CLIError, match="is not a directory"):
        check_output_file(tmp_path / "f" / "m.json", "--model")
    with pytest.raises(CLIError, match="exists and is not a directory"):
        check_output_dir(tmp_path / "f", "--out")
    check_output_dir(tmp_path / "new" / "dir", "--out")
    assert sorted(os.listdir(tmp_path)) == ["f"]


@pytest.mark.skipif(not (sys.platform.startswith("linux") and os.path.isdir("/proc")),
                    reason="needs /proc")
def test_a_folder_that_takes_no_files_is_named():
    with pytest.raises(CLIError, match=r"--out /proc/x.csv: cannot create files in /proc"):
        check_output_file("/proc/x.csv", "--out")
    # Folders to create under it: os.access says yes (always, to root), a probe says no.
    # It was an OSError that named neither the option nor the folder.
    with pytest.raises(CLIError, match=r"--out /proc/x/y: cannot create folders in /proc"):
        check_output_dir("/proc/x/y", "--out")
    with pytest.raises(CLIError, match=r"--model /proc/a/m.json: cannot create folders in /proc"):
        check_output_file("/proc/a/m.json", "--model")


def test_pandas_is_what_reads_the_table(tmp_path, monkeypatch):
    """The reader is pandas.read_csv (the fast C parser), not a Python loop."""
    calls = []
    real = pd.read_csv

    def spy(*a, **k):
        calls.append(k.get("engine", "c"))
        return real(*a, **k)

    monkeypatch.setattr(pd, "read_csv", spy)
    read_table(write(tmp_path / "t.csv", "a\n1\n"))
    assert calls == ["c"]


@pytest.mark.parametrize("cells, line, text", [
    (["True", "False", "True"], 2, "True"),       # a column of booleans
    (["True", "", "FALSE"], 2, "True"),           # booleans and an empty cell
    (["", "true", "False"], 2, ""),               # the empty cell comes first
])
def test_the_text_true_and_false_is_not_a_number(tmp_path, cells, line, text):
    """pandas reads True/False as booleans, which passed as costs 1 and 0."""
    rows = "\n".join(f"{k},{c}" for k, c in enumerate(cells))
    msg = bad_cell_message(tmp_path, f"x,c\n{rows}\n", "c")
    assert f"line {line}, column 'c'" in msg
    assert (f"'{text}' is not a number" if text else "empty cell") in msg


def test_a_line_of_bare_commas_is_a_row_when_lines_are_counted(tmp_path):
    """pandas reads ",," as a row of empty cells; the line count skipped it, so the
    error named the next line and its cell ("line 4, column 'c': 1 is not a finite
    number")."""
    msg = bad_cell_message(tmp_path, "x,c\n0.1,1\n,\n  \n0.3,1\n", "c")
    assert "line 3, column 'c': empty cell" in msg
    # A later bad cell, after that row and a blank line (which pandas skips).
    msg = bad_cell_message(tmp_path, "x,c\n0.1,1\n,2\n\n0.3,abc\n", "c")
    assert "line 5, column 'c': 'abc' is not a number" in msg


def test_a_column_name_with_pattern_characters_names_that_column():
    """"cost[0]" was read as a pattern only: it matched "cost0", never itself."""
    cols = ["cost[0]", "cost[1]", "cost0", "what?"]
    assert select_columns("cost[0],what?", cols, "--costs", "f.csv") == ["cost[0]", "what?"]
    assert select_columns("cost[[]*", cols, "--costs", "f.csv") == ["cost[0]", "cost[1]"]
    assert select_columns("cost[0-9]", cols, "--costs", "f.csv") == ["cost0"]


@pytest.fixture(scope="module")
def saved_tree(tmp_path_factory):
    """A small tree saved as ``spotree fit`` saves it: with its CSV column names."""
    from spotree import SPOTree
    from spotree.cli._io import save_model
    from spotree.problems import FiniteDecisions

    rng = np.random.RandomState(0)
    X = pd.DataFrame(rng.uniform(size=(40, 2)), columns=["a", "b"])
    C = rng.uniform(size=(40, 3))
    model = SPOTree(FiniteDecisions(np.eye(3)), max_depth=1).fit(X, C)
    path = tmp_path_factory.mktemp("model") / "m.json"
    save_model(model, path, {"features": ["a", "b"], "costs": ["p", "q", "r"],
                             "weights": None})
    return path


@pytest.mark.parametrize("columns, needle", [
    (["a", "b"], "'columns' must be an object"),
    ({"features": ["a"], "costs": ["p", "q", "r"]}, "columns.features must be a list of 2 "
                                                    "column names (the model has 2 features)"),
    ({"features": "ab"}, "columns.features must be a list of 2 column names; got 'ab'"),
    ({"features": [1, 2]}, "columns.features must be a list of 2 column names; got [1, 2]"),
    ({"features": ["b", "a"]}, "are not the features the model was fitted with (['a', 'b'])"),
    ({"costs": ["p", "q"]}, "columns.costs must be a list of 3 column names (the model has 3 "
                            "costs); got 2"),
    ({"costs": ["p", "p", "r"]}, "columns.costs names a column twice"),
    ({"weights": 3}, "columns.weights must be a column name or null; got 3"),
])
def test_a_malformed_columns_entry_of_a_model_file_is_named(tmp_path, saved_tree, columns,
                                                            needle):
    """The CSV column names stored with a model were used unchecked: 'predict' then failed
    with pandas' "Shape of passed values is (20, 48), indices imply (20, 4)", an
    AttributeError ('list' object has no attribute 'get') or a TypeError, none naming
    the file or the key."""
    import json

    from spotree.cli._io import load_model

    doc = json.loads(saved_tree.read_text())
    doc["columns"] = columns
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(CLIError) as info:
        load_model(path)
    assert str(path) in str(info.value) and needle in str(info.value)


def test_the_columns_entry_of_a_model_file_as_fit_writes_it(saved_tree):
    from spotree.cli._io import load_model

    _, columns = load_model(saved_tree)
    assert columns == {"features": ["a", "b"], "costs": ["p", "q", "r"], "weights": None}


def test_a_model_file_over_the_size_limit_says_what_a_command_user_can_do(saved_tree,
                                                                          monkeypatch):
    """The commands passed on load's "if you trust the file, pass a larger max_bytes",
    an argument that no command has."""
    import spotree.tree._persist as persist
    from spotree.cli._io import load_model

    size = os.path.getsize(saved_tree)
    monkeypatch.setattr(persist, "MAX_BYTES", size - 1)
    with pytest.raises(CLIError) as info:
        load_model(saved_tree)
    msg = str(info.value)
    assert msg.startswith(f"{saved_tree} is {size} bytes, larger than the {size - 1}-byte "
                          "limit of the spotree commands"), msg
    assert "spotree.load(path, max_bytes=" in msg and "pass a larger" not in msg
    monkeypatch.setattr(persist, "MAX_BYTES", size)
    assert load_model(saved_tree)[0].n_features_in_ == 2


def test_the_columns_entry_of_a_model_file_saved_with_a_bom(tmp_path, saved_tree):
    """spotree.load reads a model file that starts with a UTF-8 byte order mark (as
    Notepad saves it), but the CLI then reread the file without decoding the mark, so
    the columns were dropped without a word: predict wrote pred_c0... instead of the
    fitted cost names, and evaluate said the model names no cost columns."""
    from spotree.cli._io import load_model

    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + saved_tree.read_bytes())
    _, columns = load_model(path)
    assert columns == {"features": ["a", "b"], "costs": ["p", "q", "r"], "weights": None}


@pytest.mark.parametrize("labels, cells", [
    (["10", "20", "30"], ["10", "30", "", "20"]),        # ids: pandas reads int64 / float64
    (["True", "False", "maybe"], ["True", "False", "False", ""]),  # pandas reads booleans
    (["true", "false", "maybe"], ["true", "", "false", "true"]),   # ... whatever the case
])
def test_category_labels_that_look_like_numbers_or_booleans_are_labels(tmp_path, labels,
                                                                      cells):
    """A model fitted in Python on a categorical column of ids ('10', '20', '30') could not
    predict from a CSV file whose column held only such ids: pandas read numbers, and
    'spotree predict' failed with "the model was fitted with text (categories) in this
    column; here it holds numbers". The same for labels True / False. The cells are now
    read as the file writes them; the decisions are those of the model on the labels."""
    from spotree import SPOTree
    from spotree.cli._io import feature_frame
    from spotree.problems import FiniteDecisions

    rng = np.random.RandomState(0)
    kind = rng.choice(labels, 90)
    X = pd.DataFrame({"kind": pd.Series(kind, dtype=object), "x": rng.uniform(size=90)})
    C = np.column_stack([np.where(kind == labels[0], 1.0, 3.0) + rng.uniform(size=90),
                         np.where(kind == labels[1], 1.0, 3.0) + rng.uniform(size=90)])
    model = SPOTree(FiniteDecisions(np.eye(2)), max_depth=2).fit(X, C)
    assert model.category_values_[0] == sorted(labels)
    path = write(tmp_path / "new.csv", "kind,x\n" + "".join(
        f"{c},{0.1 * k}\n" for k, c in enumerate(cells)))
    df = read_table(path)
    got = feature_frame(df, ["kind", "x"], path, model.category_values_, fitted=True)
    expected = [c or None for c in cells]
    assert got["kind"].tolist() == expected
    ref = pd.DataFrame({"kind": pd.Series(expected, dtype=object),
                        "x": [0.1 * k for k in range(len(cells))]})
    np.testing.assert_array_equal(model.predict_decision(got), model.predict_decision(ref))


@pytest.mark.parametrize("cells", [["True", "False", "True"], ["true", "", "FALSE"],
                                   ["False", "False", ""]])
def test_the_text_true_and_false_in_a_feature_column_is_a_category(tmp_path, cells):
    """A feature column of the text True / False is text, so categorical (README: "a
    column whose every non-empty cell is text is a categorical feature"), but pandas
    read booleans and the column became the numbers 1.0 / 0.0 (cost columns already
    refuse them as numbers). Its labels are now kept as the file writes them."""
    from spotree.cli._io import feature_frame

    path = write(tmp_path / "d.csv", "flag,x\n" + "".join(f"{c},{k}\n"
                                                         for k, c in enumerate(cells)))
    got = feature_frame(read_table(path), ["flag", "x"], path)
    assert got["flag"].tolist() == [c or None for c in cells]
    assert got["x"].tolist() == [0.0, 1.0, 2.0]
