"""spotree._schema: bounded JSON reading and accessors whose errors name the key."""

import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spotree import _schema
from spotree._schema import SchemaError

# JSON values of every type, including the ones that look like others.
JUNK = [None, True, False, "abc", "1", [], {}, [1, 2], {"a": 1}, 1.5, float("nan"),
        float("inf"), -float("inf"), 10 ** 30, -(10 ** 30), 2 ** 63, 1e20, -1]


# ------------------------------------------------------------------ files
def test_read_json_file_refuses_non_paths_before_opening_anything(tmp_path):
    # 0, 1 and 2 are open descriptors in every process: a path check that came
    # after open() would read stdin here.
    for bad in (0, 1, 2, 3, 3.0, None, ["f.json"]):
        with pytest.raises(TypeError, match="The 'path' argument of spotree.load must be a "
                                            "str or os.PathLike"):
            _schema.read_json_file(bad, max_bytes=100, what="x")


def test_read_json_file_size_cap(tmp_path):
    path = tmp_path / "a.json"
    path.write_text(json.dumps({"k": list(range(100))}))
    size = path.stat().st_size
    assert _schema.read_json_file(path, max_bytes=size, what="x")["k"][99] == 99
    with pytest.raises(ValueError, match=rf"is {size} bytes, larger than the {size - 1}-byte "
                                         "limit of spotree.load; if you trust the file, pass "
                                         "a larger max_bytes"):
        _schema.read_json_file(path, max_bytes=size - 1, what="x")
    for bad in (0, -5):
        with pytest.raises(ValueError, match="'max_bytes'"):
            _schema.read_json_file(path, max_bytes=bad, what="x")
    for bad in (1.5, "10", True):
        with pytest.raises(TypeError, match="'max_bytes'"):
            _schema.read_json_file(path, max_bytes=bad, what="x")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_read_json_file_caps_files_whose_size_is_unknown(tmp_path):
    # A pipe reports size 0, and this one never ends (like /dev/zero): reading
    # must stop one byte past the limit instead of waiting for the end.
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    done = threading.Event()
    result = {}

    def feed():
        with open(fifo, "wb") as fh:
            try:
                fh.write(b"[" + b"1," * 10_000)
                fh.flush()
                done.wait(30)
            except BrokenPipeError:
                pass

    def read():
        try:
            _schema.read_json_file(fifo, max_bytes=1000, what="x")
        except ValueError as exc:
            result["error"] = str(exc)

    writer, reader = threading.Thread(target=feed), threading.Thread(target=read)
    writer.start()
    reader.start()
    reader.join(timeout=20)
    stuck = reader.is_alive()
    done.set()
    writer.join(timeout=30)
    reader.join(timeout=30)
    assert not stuck, "read_json_file waited for the end of an endless stream"
    assert "more than 1000 bytes, larger than the 1000-byte limit" in result["error"]


@pytest.mark.parametrize("content, match", [
    (b"\xff\xfe\x00garbage", "not a model file \\(not UTF-8 text\\)"),
    (b"{\n \"a\": 1\n \"b\": 2}", "invalid JSON at line 3, column 2"),
    (b"[" * 200_000 + b"]" * 200_000, "nested more than 100 levels deep"),
    # Python 3.13's parser reads this one (3.11's stops near 1,000 levels).
    (b"{\"a\": " * 5000 + b"1" + b"}" * 5000, "nested more than 100 levels deep"),
    (b"[" * 101 + b"]" * 101, "nested more than 100 levels deep"),
    (b"[" + b"9" * 5000 + b"]", "not a model file \\(.*digits"),
    # json keeps the last of two values for one key without a word.
    (b'{"a": {"trees": [], "trees": [1]}}', "not a model file \\(the key 'trees' appears twice"),
])
def test_read_json_file_reports_bad_content_as_value_error(tmp_path, content, match):
    path = tmp_path / "a.json"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=match):
        _schema.read_json_file(path, max_bytes=10 ** 7, what="model file")


def test_read_json_file_counts_nesting_outside_strings_only(tmp_path):
    # Brackets, quotes and backslashes inside strings (keys too) are not
    # nesting; the depth is counted on the text, the reference here on the
    # parsed values, by recursion.
    tricky = ["[[[{{", "]]]}}", 'a\\"[', "\\", '\\"', '"]', "\u00e9[\n"]

    def nest(k):
        v = tricky[0]
        for i in range(k):
            t = tricky[i % len(tricky)]
            v = [t, v] if i % 2 else {t: v, "x": t}
        return v

    def depth(v):
        if not isinstance(v, (list, dict)):
            return 0
        return 1 + max(map(depth, v.values() if isinstance(v, dict) else v))

    path = tmp_path / "a.json"
    for k in (100, 101):
        for ascii_only in (True, False):
            doc = nest(k)
            assert depth(doc) == k
            path.write_text(json.dumps(doc, ensure_ascii=ascii_only), encoding="utf-8")
            if k <= _schema.MAX_JSON_DEPTH:
                assert _schema.read_json_file(path, max_bytes=10 ** 6, what="x") == doc
            else:
                with pytest.raises(ValueError, match="nested more than 100 levels deep"):
                    _schema.read_json_file(path, max_bytes=10 ** 6, what="x")


def test_read_json_file_accepts_a_byte_order_mark(tmp_path):
    path = tmp_path / "a.json"
    path.write_bytes(b"\xef\xbb\xbf[1]")
    assert _schema.read_json_file(path, max_bytes=100, what="x") == [1]


# ---------------------------------------------------------------- scalars
def test_integer_accepts_only_json_ints_in_range():
    assert _schema.integer(5, "k", low=1) == 5
    assert _schema.integer(10 ** 30, "k") == 10 ** 30
    for bad in [v for v in JUNK if not (type(v) is int and v >= 1)] + [0, 2.0]:
        with pytest.raises(SchemaError, match=r"^a\.b must be an int >= 1; got "):
            _schema.integer(bad, "a.b", low=1)


def test_real_accepts_finite_numbers_and_nan_on_request():
    assert _schema.real(2, "k") == 2.0 and type(_schema.real(2, "k")) is float
    assert np.isnan(_schema.real(float("nan"), "k", allow_nan=True))
    assert _schema.real(-0.5, "k", high=0.0) == -0.5
    for bad in (None, True, "1", [], float("nan"), float("inf"), 10 ** 400):
        with pytest.raises(SchemaError, match=r"^x\[2\] must be a finite number; got "):
            _schema.real(bad, "x[2]")
    with pytest.raises(SchemaError, match="must be a finite number <= 0.0 or NaN; got 0.5"):
        _schema.real(0.5, "k", high=0.0, allow_nan=True)


def test_string_and_choices():
    assert _schema.string("min", "s", choices=("min", "max")) == "min"
    with pytest.raises(SchemaError, match="^s must be one of 'min', 'max'; got 'mni'"):
        _schema.string("mni", "s", choices=("min", "max"))
    with pytest.raises(SchemaError, match="^s must be a str; got 3"):
        _schema.string(3, "s")


def test_keys():
    with pytest.raises(SchemaError, match=r"^doc\.b is missing\."):
        _schema.check_keys({"a": 1}, "doc", required=("a", "b"))
    with pytest.raises(SchemaError, match=r"^doc\.zz is not a known key; expected keys: a, b"):
        _schema.check_keys({"a": 1, "zz": 2}, "doc", required=("a",), optional=("b",))
    with pytest.raises(SchemaError, match=r"^top is missing"):
        _schema.member({}, "top", "")
    with pytest.raises(SchemaError, match="^doc must be an object; got a list of 0 entries"):
        _schema.mapping([], "doc")


# ----------------------------------------------------------------- arrays
def test_int_array_names_the_first_bad_entry():
    np.testing.assert_array_equal(_schema.int_array([1, -1, 3], "a", low=-1, high=3),
                                  [1, -1, 3])
    cases = [([1, 2.0], r"a\[1\] must be an int in \[-1, 9\]; got 2\.0"),
             ([1, True], r"a\[1\] must be an int in \[-1, 9\]; got true"),
             ([10 ** 30], r"a\[0\] must be an int in \[-1, 9\]; got an int with 31 digits"),
             ([3, -2], r"a\[1\] must be an int in \[-1, 9\]; got -2"),
             ("abc", r"a must be a list of ints; got 'abc'")]
    for value, match in cases:
        with pytest.raises(SchemaError, match="^" + match):
            _schema.int_array(value, "a", low=-1, high=9)
    with pytest.raises(SchemaError, match=r"a\[0\] must be an int that fits in 64 bits"):
        _schema.int_array([2 ** 63], "a")
    with pytest.raises(SchemaError, match=r"^a must have 4 entries \(one per node\); got 3"):
        _schema.int_array([1, 2, 3], "a", length=4, per="node")


def test_real_array_and_matrix_name_the_first_bad_entry():
    np.testing.assert_array_equal(_schema.real_array([1, 2.5], "v"), [1.0, 2.5])
    for bad, i in (([1.0, float("nan")], 1), ([float("inf")], 0), (["1.0"], 0),
                   ([1.0, None], 1), ([[1.0]], 0), ([10 ** 400], 0)):
        with pytest.raises(SchemaError, match=rf"^v\[{i}\] must be a finite number"):
            _schema.real_array(bad, "v")
    with pytest.raises(SchemaError, match=r"^v\[1\] must be a finite number >= 0.0; got -1"):
        _schema.real_array([0.0, -1.0], "v", low=0.0)
    assert _schema.real_array([1.0, float("inf")], "v", allow_inf=True)[1] == np.inf
    for bad in (float("nan"), -float("inf")):
        with pytest.raises(SchemaError, match=r"^v\[0\] must be a finite number or inf; got"):
            _schema.real_array([bad], "v", allow_inf=True)
    m = _schema.real_matrix([[1, 2], [3, 4.5]], "m", rows=2, cols=2)
    assert m.dtype == np.float64 and m.shape == (2, 2)
    cases = [([[1, 2], [3]], r"m\[1\] must have 2 entries; got 1"),
             ([[1, 2]], r"m must have 2 rows \(one per node\); got 1"),
             ([[1, 2], "ab"], r"m\[1\] must be a list of 2 finite numbers"),
             ([[1, 2], [3, float("nan")]], r"m\[1\]\[1\] must be a finite number; got nan"),
             ([[1, 2], [3, [4]]], r"m\[1\]\[1\] must be a finite number; got a list"),
             ([[1, 10 ** 400], [3, 4]], r"m\[0\]\[1\] must be a finite number")]
    for value, match in cases:
        with pytest.raises(SchemaError, match="^" + match):
            _schema.real_matrix(value, "m", rows=2, cols=2)


def test_real_lists_and_string_list():
    out = _schema.real_lists([[], [1, 2], []], "c", length=3)
    assert [a.tolist() for a in out] == [[], [1.0, 2.0], []]
    with pytest.raises(SchemaError, match=r"^c\[1\]\[0\] must be a finite number; got nan"):
        _schema.real_lists([[], [float("nan"), 1]], "c", length=2)
    assert _schema.string_list(["a", "b"], "n", length=2) == ["a", "b"]
    with pytest.raises(SchemaError, match=r"^n\[1\] must be a str; got 1"):
        _schema.string_list(["a", 1], "n")


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                    lambda kids: st.lists(kids) | st.dictionaries(st.text(), kids),
                    max_leaves=20))
def test_accessors_raise_only_schema_errors(value):
    """Whatever JSON value they get, the accessors return or raise SchemaError."""
    calls = [lambda: _schema.integer(value, "k", low=0),
             lambda: _schema.real(value, "k"),
             lambda: _schema.string(value, "k"),
             lambda: _schema.int_array(value, "k", low=-1, high=5),
             lambda: _schema.real_array(value, "k", low=0.0),
             lambda: _schema.real_matrix(value, "k", rows=2, cols=2),
             lambda: _schema.real_lists(value, "k", length=2),
             lambda: _schema.string_list(value, "k"),
             lambda: _schema.mapping(value, "k")]
    for call in calls:
        try:
            call()
        except SchemaError as exc:
            assert str(exc).startswith("k")
