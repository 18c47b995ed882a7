"""The Yahoo! R6A pipeline on small synthetic logs written in the real format."""

import gzip
import os
import re

import numpy as np
import pytest

from spotree.datasets import load_yahoo_r6, read_yahoo_r6
from spotree.datasets._yahoo import write_synthetic_r6

DAY = 86400
MAY1 = int(np.datetime64("2009-05-01", "s").astype(np.int64))


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    """Six distinct user profiles, seven articles all shown on every line."""
    d = tmp_path_factory.mktemp("r6")
    truth = write_synthetic_r6(d / "ydata-fp-td-clicks-v1_0.2009050x.gz", 6000,
                               n_articles=7, pool_size=7, n_user_profiles=6, errors=3,
                               random_state=1)
    return d, truth


def test_gzip_and_plain_files_parse_to_the_records_written(tmp_path):
    truth = write_synthetic_r6(tmp_path / "a.gz", 300, random_state=3, errors=2)
    with gzip.open(tmp_path / "a.gz", "rt") as fh, open(tmp_path / "b.txt", "w") as out:
        out.write(fh.read())
    for name in ("a.gz", "b.txt"):
        log = read_yahoo_r6(tmp_path / name)
        assert log.n_skipped == 2
        assert log.feature_ids == [1, 2, 3, 4, 5, 6]
        np.testing.assert_array_equal(log.timestamp, truth.timestamp)
        np.testing.assert_array_equal(log.article, truth.article)
        np.testing.assert_array_equal(log.click, truth.click)
        # Column 0 is feature 1, the constant; 2..6 are the user's five features.
        np.testing.assert_array_equal(log.user[:, 0], 1.0)
        # Stored as float32: exactly the float32 nearest to each 6-decimal value.
        np.testing.assert_array_equal(log.user[:, 1:], truth.user.astype(np.float32))
        for a, f in truth.article_features.items():
            if a in log.article_features:
                np.testing.assert_allclose(log.article_features[a][1:], f, atol=5e-7)


def test_directory_reads_every_file(tmp_path):
    write_synthetic_r6(tmp_path / "day1.gz", 50, random_state=0)
    write_synthetic_r6(tmp_path / "day2", 70, random_state=1)
    assert read_yahoo_r6(tmp_path).timestamp.size == 120
    assert read_yahoo_r6(tmp_path, max_lines=30).timestamp.size == 30
    assert read_yahoo_r6(tmp_path, max_lines=0).timestamp.size == 0
    for bad in (-1, 1.5, "10", True):
        # -1 read nothing and 1.5 read two lines, silently; "10" raised a TypeError.
        with pytest.raises(ValueError, match="max_lines must be an int >= 0"):
            read_yahoo_r6(tmp_path, max_lines=bad)


def test_pipeline_matches_brute_force_on_test_days(log_dir):
    d, truth = log_dir
    out = load_yahoo_r6(d, n_user_clusters=6, n_article_clusters=7, min_records=1,
                        min_article_coverage=0.0, random_state=0)
    assert out.feature_names == ["user_2", "user_3", "user_4", "user_5", "user_6"]
    day = (truth.timestamp - MAY1) // DAY
    pool, test = day < 5, (day >= 5) & (day < 10)
    assert out.n_records["train"] + out.n_records["val"] == pool.sum()
    assert abs(out.n_records["train"] - out.n_records["val"]) <= 1
    assert out.n_records["test"] == test.sum()
    assert out.n_records["skipped"] == 3
    # Six distinct profiles into six clusters: each cluster is one profile, and
    # its mean features are the profile itself.
    profiles = np.unique(truth.user.astype(np.float32), axis=0)
    np.testing.assert_array_equal(np.sort(out.user_centers, axis=0),
                                  np.sort(profiles, axis=0))
    # Brute force: click rate per (profile, article type) over the test days.
    ucl = out.user_clusterer.predict(truth.user.astype(np.float32))
    acl = np.array([out.article_type_of[a] for a in truth.article])
    assert len(set(out.article_type_of.values())) == 7
    for row, u in enumerate(out.cluster_test):
        sel = test & (ucl == u)
        np.testing.assert_array_equal(out.X_test[row], truth.user[sel][0].astype(np.float32))
        assert out.sample_weight_test[row] == sel.sum()
        for col, k in enumerate(out.article_types):
            cell = sel & (acl == k)
            assert out.record_counts_test[row, col] == cell.sum()
            assert out.C_test[row, col] == pytest.approx(truth.click[cell].mean())
    assert out.C_test.shape == (6, 7)
    # Train and validation together hold every pool record.
    total = out.sample_weight_train.sum() + out.sample_weight_val.sum()
    assert total == pool.sum()


def test_filters_drop_rare_article_types_and_thin_user_clusters(log_dir):
    d, truth = log_dir
    out = load_yahoo_r6(d, n_user_clusters=6, n_article_clusters=7, min_records=40,
                        min_article_coverage=0.5, random_state=0)
    ucl = out.user_clusterer.predict(truth.user.astype(np.float32))
    acl = np.array([out.article_type_of[a] for a in truth.article])
    day = (truth.timestamp - MAY1) // DAY
    test = (day >= 5) & (day < 10)
    counts = np.array([[np.sum(test & (ucl == u) & (acl == k)) for k in out.article_types]
                       for u in range(6)])
    expected = np.flatnonzero((counts >= 40).all(axis=1))
    np.testing.assert_array_equal(out.cluster_test, expected)
    assert (out.record_counts_train >= 40).all() and (out.record_counts_val >= 40).all()
    # An article type is kept iff at least half the training clusters have 40 records of it.
    assert np.array_equal(out.article_types,
                          np.flatnonzero(out.article_coverage >= 0.5))
    strict = load_yahoo_r6(d, n_user_clusters=6, n_article_clusters=7, min_records=10**6,
                           min_article_coverage=0.0, random_state=0)
    assert strict.X_train.shape[0] == 0 and strict.X_test.shape[0] == 0


def test_validation_fraction_sets_the_validation_share(log_dir):
    """Only the default 0.5 was run, under which training and validation swapped
    would go unseen: a quarter of the pool records validate here, the rest train."""
    d, truth = log_dir
    pool = int(((truth.timestamp - MAY1) // DAY < 5).sum())
    out = load_yahoo_r6(d, n_user_clusters=6, n_article_clusters=7, min_records=1,
                        min_article_coverage=0.0, validation_fraction=0.25, random_state=0)
    assert out.n_records["val"] == round(0.25 * pool)
    assert out.n_records["train"] == pool - round(0.25 * pool)
    assert out.sample_weight_val.sum() == out.n_records["val"]
    assert out.sample_weight_train.sum() == out.n_records["train"]


def test_min_records_keeps_a_count_equal_to_it(log_dir):
    """At least min_records: a count equal to it keeps its user cluster and counts
    towards its article type's coverage. The training counts come from a run that
    keeps every cluster and type (same seed, so the same split and clusters)."""
    d, _ = log_dir
    kw = dict(n_user_clusters=6, n_article_clusters=7, random_state=0)
    full = load_yahoo_r6(d, min_records=1, min_article_coverage=0.0, **kw)
    assert full.cluster_train.tolist() == list(range(6)) and full.article_types.size == 7
    counts = full.record_counts_train

    def expected(m, at_least):
        hit = counts >= m if at_least else counts > m
        kept = np.flatnonzero(hit.mean(axis=0) >= 0.5)
        return kept, np.flatnonzero(hit[:, kept].all(axis=1))

    # A threshold that a count meets exactly and where "more than" would differ.
    m = next(int(v) for v in np.unique(counts) if v > 1 and any(
        not np.array_equal(a, b) for a, b in zip(expected(v, True), expected(v, False))))
    out = load_yahoo_r6(d, min_records=m, min_article_coverage=0.5, **kw)
    np.testing.assert_allclose(out.article_coverage, (counts >= m).mean(axis=0))
    kept, rows = expected(m, True)
    np.testing.assert_array_equal(out.article_types, kept)
    np.testing.assert_array_equal(out.cluster_train, rows)
    np.testing.assert_array_equal(out.record_counts_train, counts[np.ix_(rows, kept)])


def test_same_seed_same_pairs_and_split_changes_with_seed(log_dir):
    d, _ = log_dir
    kw = dict(n_user_clusters=6, n_article_clusters=7, min_records=1,
              min_article_coverage=0.0)
    a, b = load_yahoo_r6(d, random_state=5, **kw), load_yahoo_r6(d, random_state=5, **kw)
    np.testing.assert_array_equal(a.C_train, b.C_train)
    np.testing.assert_array_equal(a.sample_weight_val, b.sample_weight_val)


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_user_clusters=10**5), "n_user_clusters"),
    (dict(n_user_clusters=6, n_article_clusters=50), "n_article_clusters"),
    (dict(train_dates=("2010-01-01", "2010-01-02")), "train_dates"),
    # May 6 in both: its records trained and tested the models (a silent leak).
    (dict(train_dates=("2009-05-01", "2009-05-06")), "overlap; they must be disjoint"),
    (dict(test_dates=("2009-05-03", "2009-05-04")), "overlap"),
    (dict(validation_fraction=1.5), "validation_fraction"),
    (dict(min_records=-1), "min_records"),
    (dict(min_article_coverage="0.5"), r"min_article_coverage must be in \[0, 1\]"),
    (dict(validation_fraction="0.5"), r"validation_fraction must be in \(0, 1\)"),
    (dict(max_lines=-1), "max_lines must be an int >= 0; got -1"),
    (dict(max_lines=1.5), "max_lines must be an int >= 0; got 1.5"),
    (dict(max_lines="10"), "max_lines must be an int >= 0"),
    (dict(verbose="no"), "verbose must be a bool"),
])
def test_bad_arguments_are_named(log_dir, kwargs, match):
    d, _ = log_dir
    with pytest.raises(ValueError, match=match):
        load_yahoo_r6(d, **kwargs)


def test_missing_data_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="not found"):
        load_yahoo_r6(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match="no log files"):
        load_yahoo_r6(tmp_path)


def test_a_truncated_or_corrupt_gzip_file_is_named(tmp_path):
    """An interrupted download raised a bare EOFError (the CLI printed no file name)."""
    write_synthetic_r6(tmp_path / "full.gz", 400, random_state=0)
    raw = (tmp_path / "full.gz").read_bytes()
    (tmp_path / "cut.gz").write_bytes(raw[:len(raw) // 2])
    bad = bytearray(raw)
    bad[len(raw) // 2:len(raw) // 2 + 40] = bytes(40)  # zeros in the deflate stream
    (tmp_path / "bad.gz").write_bytes(bytes(bad))
    for name in ("cut.gz", "bad.gz"):
        with pytest.raises(ValueError, match=f"{name}: the gzip file is truncated or corrupt"):
            read_yahoo_r6(tmp_path / name)
    # Stopping early within the intact part is no error.
    assert read_yahoo_r6(tmp_path / "cut.gz", max_lines=5).timestamp.size == 5


def test_a_malformed_first_line_does_not_reject_the_rest(tmp_path):
    """The feature ids were taken from the first line even when it was then skipped:
    a truncated first line made every later line 'malformed' (0 records kept)."""
    truth = write_synthetic_r6(tmp_path / "log.txt", 150, random_state=4)
    lines = (tmp_path / "log.txt").read_text().splitlines(keepends=True)
    t, a = lines[0].split()[:2]
    # A first line cut short after two user features: no article section, skipped.
    (tmp_path / "cut.txt").write_text(f"{t} {a} 0 |user 2:0.5 3:0.5\n" + "".join(lines))
    log = read_yahoo_r6(tmp_path / "cut.txt")
    assert log.n_skipped == 1 and log.feature_ids == [1, 2, 3, 4, 5, 6]
    np.testing.assert_array_equal(log.timestamp, truth.timestamp)
    np.testing.assert_array_equal(log.article, truth.article)
    np.testing.assert_array_equal(log.user[:, 1:], truth.user.astype(np.float32))


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e39", "-4e38"])
def test_a_non_finite_feature_value_skips_its_line(tmp_path, value):
    """One user value "2:nan" was kept: feature 2's range over the data became nan,
    so load_yahoo_r6 dropped the column user_2 as if it were constant. "2:1e39" is
    finite but beyond float32, the user features' storage: it was kept as inf."""
    truth = write_synthetic_r6(tmp_path / "log.txt", 400, n_user_profiles=40, random_state=2)
    lines = (tmp_path / "log.txt").read_text().splitlines(keepends=True)
    lines[7] = re.sub(r"\|user 2:[0-9.]+ ", f"|user 2:{value} ", lines[7], count=1)
    assert f"|user 2:{value} 3:" in lines[7]
    (tmp_path / "bad.txt").write_text("".join(lines))
    log = read_yahoo_r6(tmp_path / "bad.txt")
    keep = np.arange(400) != 7
    assert log.n_skipped == 1
    np.testing.assert_array_equal(log.timestamp, truth.timestamp[keep])
    np.testing.assert_array_equal(log.user[:, 1:], truth.user[keep].astype(np.float32))
    data = load_yahoo_r6(tmp_path / "bad.txt", n_user_clusters=10, n_article_clusters=3,
                         min_records=1)
    assert data.feature_names == ["user_2", "user_3", "user_4", "user_5", "user_6"]


def test_a_file_with_no_log_record_is_named(tmp_path):
    """An HTML page saved instead of a log, a README in the log folder, an archive
    not unpacked or an empty download were read as lines that are all malformed:
    read_yahoo_r6 returned 0 records (n_skipped 1) without a word, and
    load_yahoo_r6 then said only that no record fell within the dates."""
    html = tmp_path / "ydata-fp-td-clicks-v1_0.20090501"
    html.write_text("<!DOCTYPE html>\n<html><body>Sign in to Webscope</body></html>\n")
    empty = tmp_path / "empty.gz"
    empty.write_bytes(b"")
    tarball = tmp_path / "R6.tgz"
    tarball.write_bytes(gzip.compress(b"R6/ydata\x00" + bytes(500)))
    for path, what in ((html, "none of its 2 lines"), (empty, "it is empty"),
                       (tarball, "none of its 1 line")):
        with pytest.raises(ValueError, match=re.escape(f"{path}: ") + f".*{what}"):
            read_yahoo_r6(path)
        with pytest.raises(ValueError, match=re.escape(str(path))):
            load_yahoo_r6(path, n_user_clusters=2, n_article_clusters=2, min_records=1)
    # A README next to the daily logs: named, not counted among the malformed lines.
    logs = tmp_path / "logs"
    logs.mkdir()
    write_synthetic_r6(logs / "day1.gz", 50, random_state=0)
    (logs / "README.txt").write_text("Yahoo! Front Page Today Module\n\nUser click log\n")
    with pytest.raises(ValueError, match=r"README\.txt: .*none of its 3 lines"):
        read_yahoo_r6(logs)
    # Reading stopped by max_lines before a file's records is no error.
    (logs / "README.txt").unlink()
    (tmp_path / "two").mkdir()
    write_synthetic_r6(tmp_path / "two" / "a.gz", 20, random_state=0)
    (tmp_path / "two" / "b.txt").write_text("garbage\n")
    assert read_yahoo_r6(tmp_path / "two", max_lines=20).timestamp.size == 20
    # A file with some malformed lines and some records reads as before.
    write_synthetic_r6(tmp_path / "some.txt", 30, random_state=1, errors=2)
    assert read_yahoo_r6(tmp_path / "some.txt").n_skipped == 2


def test_an_id_or_timestamp_beyond_int64_skips_its_line(tmp_path):
    """A timestamp or article id of 20 digits (a corrupted line) stopped the whole read
    with a bare "OverflowError: int too big to convert", naming no file or line; such a
    line is malformed, skipped and counted like the others."""
    truth = write_synthetic_r6(tmp_path / "log.txt", 60, random_state=5)
    lines = (tmp_path / "log.txt").read_text().splitlines(keepends=True)
    big = "9" * 20
    lines[3] = big + " " + lines[3].split(" ", 1)[1]
    shown = lines[8].split()[1]
    lines[8] = lines[8].replace(shown, big)  # displayed and listed: both huge
    assert f"|{big} " in lines[8]
    (tmp_path / "bad.txt").write_text("".join(lines))
    log = read_yahoo_r6(tmp_path / "bad.txt")
    keep = ~np.isin(np.arange(60), [3, 8])
    assert log.n_skipped == 2
    np.testing.assert_array_equal(log.timestamp, truth.timestamp[keep])
    np.testing.assert_array_equal(log.article, truth.article[keep])


def test_data_that_is_not_a_path_or_a_list_of_files(tmp_path):
    """A bytes path failed with "expected str, bytes or os.PathLike object, not int" (its
    bytes were taken for a list of files), None and 5 with "object is not iterable", and
    a directory inside a list was "log file not found" although it exists."""
    write_synthetic_r6(tmp_path / "day1.gz", 40, random_state=0)
    assert read_yahoo_r6(os.fsencode(tmp_path)).timestamp.size == 40
    assert read_yahoo_r6(os.fsencode(tmp_path / "day1.gz")).timestamp.size == 40
    for bad in (None, 5, [tmp_path / "day1.gz", 7]):
        with pytest.raises(TypeError, match="data must be a path .* or a list of log files"):
            read_yahoo_r6(bad)
    with pytest.raises(ValueError, match=re.escape(f"data: {tmp_path} is a directory")):
        read_yahoo_r6([tmp_path])
