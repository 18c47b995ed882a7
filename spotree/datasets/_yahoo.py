"""The Yahoo! Front Page Today Module (R6A) click log, as the paper preprocessed it.

The licensed data (Yahoo! Webscope R6A, ``ydata-fp-td-clicks-v1_0.2009050*``) is
not shipped with spotree. A licensed user points :func:`load_yahoo_r6` at the
directory holding the daily files (plain or gzip) and gets the paper's
feature-cost pairs (appendix C); ``spotree reproduce news --data DIR`` does the
same from the command line.

Log format, one line per displayed article::

    <timestamp> <displayed_article_id> <click> |user 2:0.01 3:0.00 ... 1:1.0 \
        |<article_id> 2:0.30 ... 1:1.0 |<article_id> ...

(one line; the backslash only wraps it here)

``timestamp`` is in UTC seconds, ``click`` is 0 or 1, the ``|user`` section holds
the user's features as ``id:value`` pairs and each ``|<article_id>`` section the
features of one candidate article (the displayed one among them). In R6A the
features are the 5 conjoint-analysis coordinates plus feature 1, the constant
1; features that are constant over the data are dropped.
"""

from __future__ import annotations

import gzip
import math
import numbers
import os
import zlib
from array import array

import numpy as np
from sklearn.utils import Bunch

from ._generators import _check_bool, _check_int, _check_random_state

__all__ = ["read_yahoo_r6", "load_yahoo_r6"]

_GZIP_MAGIC = b"\x1f\x8b"
_INT64_MIN, _INT64_MAX = -2**63, 2**63 - 1
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _open_text(path):
    with open(path, "rb") as fh:
        magic = fh.read(2)
    if magic == _GZIP_MAGIC:
        return gzip.open(path, "rt", encoding="ascii", errors="replace")
    return open(path, encoding="ascii", errors="replace")


def _lines(path):
    """The lines of a log file; a truncated or corrupt gzip file is an error naming it."""
    try:
        with _open_text(path) as fh:
            yield from fh
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        # An interrupted download: say which file, not just "EOFError".
        raise ValueError(f"{path}: the gzip file is truncated or corrupt ({exc}); download "
                         "it again.") from None


def _not_paths(data):
    return TypeError(f"data must be a path (a log file or a directory of them) or a list of "
                     f"log files; got {data!r:.80}.")


def _list_files(data):
    if isinstance(data, (str, bytes, os.PathLike)):
        # fsdecode: bytes were taken for a list of files (failing on an int).
        data = os.fsdecode(os.fspath(data))
        if os.path.isdir(data):
            files = sorted(os.path.join(data, f) for f in os.listdir(data)
                           if not f.startswith(".")
                           and os.path.isfile(os.path.join(data, f)))
            if not files:
                raise FileNotFoundError(f"no log files in the directory {data}")
            return files
        if not os.path.isfile(data):
            raise FileNotFoundError(f"Yahoo! R6 log file or directory not found: {data}")
        return [data]
    try:
        files = [os.fsdecode(os.fspath(f)) for f in data]
    except TypeError:  # None, 5 or [path, 7]: "not iterable", "expected str, ..."
        raise _not_paths(data) from None
    for f in files:
        if os.path.isdir(f):
            raise ValueError(f"data: {f} is a directory; in a list, name the log files (or "
                             "pass the directory alone).")
        if not os.path.isfile(f):
            raise FileNotFoundError(f"Yahoo! R6 log file not found: {f}")
    if not files:
        raise ValueError("data must name at least one log file.")
    return files


def _parse_features(tokens):
    """``["2:0.1", "1:1.0"]`` -> (ids tuple sorted, values list) or None if malformed."""
    pairs = []
    for tok in tokens:
        k, sep, v = tok.partition(":")
        if not sep:
            return None
        value = float(v)
        if not (math.isfinite(value) and abs(value) <= _FLOAT32_MAX):
            # A malformed value: kept, one "2:nan" made the feature's range nan over
            # the data, and the whole column was dropped as if constant. Beyond
            # float32 (the user features' storage) a finite value was stored as inf.
            return None
        pairs.append((int(k), value))
    pairs.sort()
    return tuple(p[0] for p in pairs), [p[1] for p in pairs]


def _not_a_log(path, n_lines):
    what = ("it is empty" if not n_lines else
            f"none of its {n_lines} line{'s' if n_lines > 1 else ''} is a log record "
            "('<timestamp> <article id> <click> |user <id>:<value> ... |<article id> ...')")
    raise ValueError(f"{path}: not an R6A click-log file: {what}; download it again, or "
                     "move a file that is not a log (a README, an HTML page, an archive "
                     "not unpacked) out of the folder.")


def read_yahoo_r6(data, *, max_lines=None):
    """Parse R6A click-log files into flat arrays.

    Malformed lines (a wrong number of fields, a user section whose feature
    ids differ from the first valid line's, a displayed article whose features
    are never listed, a feature value that is not a finite number) are
    skipped and counted; the real log has a few. A file read to its end
    without a single record (empty, or not a log at all) is an error.

    Parameters
    ----------
    data : str, path-like or list of them
        A log file, a list of log files, or a directory whose (non-hidden)
        files are all log files. Gzip files are recognized by their content.
    max_lines : int, default=None
        Stop after this many lines in total (for a quick look at big files).

    Returns
    -------
    Bunch with
        timestamp : ndarray of int64, shape (n,)
            UTC seconds of each record.
        article : ndarray of int64, shape (n,)
            The displayed article's id.
        click : ndarray of int8, shape (n,)
            1 where the displayed article was clicked, else 0.
        user : ndarray of float32, shape (n, p)
            User features, columns in increasing feature id.
        feature_ids : list of int
            The feature id of each column of ``user``.
        article_features : dict of int -> ndarray of shape (p_article,)
            Features of every article seen (first listing wins).
        article_feature_ids : list of int
            The feature id of each entry of the vectors in ``article_features``.
        n_skipped : int
            Number of malformed lines skipped.
    """
    if max_lines is not None:
        # -1 read nothing, 1.5 read two lines, "10" failed comparing an int and a str.
        max_lines = _check_int(max_lines, "max_lines", 0)
    # Typed buffers, not lists: the real log has 45 million records. User
    # features are stored as float32 (the files give 6 decimals).
    ts, art, clk, usr = array("q"), array("q"), array("b"), array("f")
    article_features = {}
    feature_ids = article_ids = None
    n_skipped = n_lines = 0
    for path in _list_files(data):
        kept_before, lines_before, stopped = len(ts), n_lines, False
        for line in _lines(path):
            if max_lines is not None and n_lines >= max_lines:
                stopped = True
                break
            n_lines += 1
            try:
                # Article sections are only parsed for a not-yet-seen article.
                sections = line.split("|", 2)
                head = sections[0].split()
                if len(head) != 3 or len(sections) < 2:
                    raise ValueError
                t, a, c = int(head[0]), int(head[1]), int(head[2])
                # Beyond int64 the typed buffers raised OverflowError and the read stopped.
                if c not in (0, 1) or not (_INT64_MIN <= t <= _INT64_MAX
                                           and _INT64_MIN <= a <= _INT64_MAX):
                    raise ValueError
                utoks = sections[1].split()
                if not utoks or utoks[0] != "user":
                    raise ValueError
                ids, vals = _parse_features(utoks[1:])
                if feature_ids is not None and ids != feature_ids:
                    raise ValueError
                new_article = None
                if a not in article_features:
                    for sec in (sections[2].split("|") if len(sections) > 2 else ()):
                        toks = sec.split()
                        if toks and int(toks[0]) == a:
                            aids, avals = _parse_features(toks[1:])
                            if article_ids is None or aids == article_ids:
                                new_article = (aids, np.asarray(avals))
                            break
                    if new_article is None:
                        raise ValueError
            except (ValueError, TypeError, IndexError):
                n_skipped += 1
                continue
            # Only a line kept fixes the feature ids: a malformed first line (a
            # truncated user section) would otherwise reject every later line.
            if feature_ids is None:
                feature_ids = ids
            if new_article is not None:
                if article_ids is None:
                    article_ids = new_article[0]
                article_features[a] = new_article[1]
            ts.append(t)
            art.append(a)
            clk.append(c)
            usr.extend(vals)
        if not stopped and len(ts) == kept_before:
            # An HTML page, a README or an archive read as lines that were all
            # "malformed": 0 records and no word of which file was not a log.
            _not_a_log(path, n_lines - lines_before)
        if max_lines is not None and n_lines >= max_lines:
            break
    p = len(feature_ids) if feature_ids else 0
    # frombuffer shares the buffers' memory instead of copying it.
    return Bunch(
        timestamp=np.frombuffer(ts, dtype=np.int64) if ts else np.empty(0, np.int64),
        article=np.frombuffer(art, dtype=np.int64) if art else np.empty(0, np.int64),
        click=np.frombuffer(clk, dtype=np.int8) if clk else np.empty(0, np.int8),
        user=(np.frombuffer(usr, dtype=np.float32).reshape(-1, p) if p and usr
              else np.empty((0, p), np.float32)),
        feature_ids=list(feature_ids or []),
        article_features=article_features,
        article_feature_ids=list(article_ids or []),
        n_skipped=n_skipped,
    )


def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _day_range(dates, name):
    try:
        lo, hi = (np.datetime64(d, "D") for d in dates)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair of dates like ('2009-05-01', "
                         f"'2009-05-05'); got {dates!r}.") from None
    if hi < lo:
        raise ValueError(f"{name} must be (first day, last day) in order; got {dates!r}.")
    return lo, hi


def _aggregate(users, articles, clicks, n_users, n_articles):
    """Record and click counts per (user cluster, article cluster)."""
    key = users * n_articles + articles
    size = n_users * n_articles
    counts = np.bincount(key, minlength=size).reshape(n_users, n_articles)
    hits = np.bincount(key, weights=clicks, minlength=size).reshape(n_users, n_articles)
    return counts, hits


def load_yahoo_r6(data, *, n_user_clusters=10000, n_article_clusters=7, min_records=50,
                  min_article_coverage=0.5, train_dates=("2009-05-01", "2009-05-05"),
                  test_dates=("2009-05-06", "2009-05-10"), validation_fraction=0.5,
                  random_state=0, max_lines=None, verbose=False):
    """The paper's news-recommendation feature-cost pairs from the R6A log (appendix C).

    1. Records dated (UTC) within ``train_dates`` are split at random into
       training and validation (``validation_fraction`` of them, 50% in the
       paper); records within ``test_dates`` form the test set.
    2. Users are clustered by k-means on their features over the training
       and validation records (``n_user_clusters``; k-means on the distinct
       feature vectors weighted by their record counts, mini-batch k-means
       beyond 20,000 distinct vectors), and the articles displayed in those
       records into ``n_article_clusters`` "article types" by k-means on
       their features. Test records are
       assigned to the nearest centres. A user cluster's features ``x`` are
       the mean user features of its training and validation records.
    3. In each set, a user cluster's costs ``p`` are its click rates per
       article type and its sample weight is its number of records.
       Article types are dropped when fewer than ``min_article_coverage`` of
       the training user clusters have ``min_records`` records of them (the
       paper dropped one of 7); then, in each set, user clusters with fewer
       than ``min_records`` records of any kept type are dropped.

    Parameters
    ----------
    data : str, path-like or list of them
        Directory of R6A daily log files (plain or gzip), or the files.
    n_user_clusters : int, default=10000
    n_article_clusters : int, default=7
    min_records : int, default=50
    min_article_coverage : float in [0, 1], default=0.5
    train_dates, test_dates : pair of str
        First and last day (inclusive, UTC).
    validation_fraction : float in (0, 1), default=0.5
    random_state : int, RandomState instance or None, default=0
        Seeds the train/validation split and both k-means.
    max_lines : int, default=None
        Read at most this many lines (a quick look at the real data).
    verbose : bool, default=False
        Print progress to stderr.

    Returns
    -------
    Bunch with
        X_train, X_val, X_test : ndarray of shape (n_*, p)
            Mean user features of each kept user cluster.
        C_train, C_val, C_test : ndarray of shape (n_*, n_article_types)
            Click rates per kept article type, in [0, 1] (a maximization).
        sample_weight_train, sample_weight_val, sample_weight_test : ndarray
            Number of records behind each row.
        cluster_train, cluster_val, cluster_test : ndarray of int
            The user cluster of each row.
        record_counts_train, record_counts_val, record_counts_test : ndarray
            Records behind each click rate, shape like ``C_*``.
        article_types : ndarray of int
            The article clusters kept (columns of ``C_*``).
        feature_names : list of str
            ``"user_<id>"`` for each column of ``X_*``.
        n_records : dict
            Records per set before filtering, and ``"skipped"`` lines.
        user_clusterer, article_clusterer : fitted k-means estimators
            On the user features ``user_feature_columns`` and the article
            features ``article_feature_columns`` (feature ids).
        article_type_of : dict of int -> int
            The article type (cluster) of every displayed article id.
    """
    import sys

    from sklearn.cluster import KMeans, MiniBatchKMeans

    for name, v, low in (("n_user_clusters", n_user_clusters, 1),
                         ("n_article_clusters", n_article_clusters, 1),
                         ("min_records", min_records, 0)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < low:
            raise ValueError(f"{name} must be an int >= {low}; got {v!r}.")
    # Text failed with "'<=' not supported between 'float' and 'str'", naming nothing.
    if not (_is_real(min_article_coverage) and 0.0 <= min_article_coverage <= 1.0):
        raise ValueError(f"min_article_coverage must be in [0, 1]; got "
                         f"{min_article_coverage!r}.")
    if not (_is_real(validation_fraction) and 0.0 < validation_fraction < 1.0):
        raise ValueError(f"validation_fraction must be in (0, 1); got "
                         f"{validation_fraction!r}.")
    if max_lines is not None:
        max_lines = _check_int(max_lines, "max_lines", 0)
    verbose = _check_bool(verbose, "verbose")  # the string "no" printed progress
    # Before the log is read (45 million records): no draw is made until the split.
    rng = _check_random_state(random_state)
    train_lo, train_hi = _day_range(train_dates, "train_dates")
    test_lo, test_hi = _day_range(test_dates, "test_dates")
    if train_lo <= test_hi and test_lo <= train_hi:  # a record in both: a test leak
        raise ValueError(f"train_dates {tuple(train_dates)} and test_dates "
                         f"{tuple(test_dates)} overlap; they must be disjoint.")

    def say(msg):
        if verbose:
            print(f"[yahoo] {msg}", file=sys.stderr, flush=True)

    log = read_yahoo_r6(data, max_lines=max_lines)
    say(f"read {log.timestamp.size} records ({log.n_skipped} malformed lines skipped)")
    day = log.timestamp.astype("datetime64[s]").astype("datetime64[D]")
    in_pool = (day >= train_lo) & (day <= train_hi)
    in_test = (day >= test_lo) & (day <= test_hi)
    pool = np.flatnonzero(in_pool)
    test = np.flatnonzero(in_test)
    if pool.size == 0 or test.size == 0:
        raise ValueError(f"the log has {pool.size} records within train_dates "
                         f"{tuple(train_dates)} and {test.size} within test_dates "
                         f"{tuple(test_dates)}; both must be non-empty.")
    perm = pool[rng.permutation(pool.size)]
    n_val = int(round(validation_fraction * pool.size))
    val, train = np.sort(perm[:n_val]), np.sort(perm[n_val:])

    # Feature 1 of R6A is the constant 1: drop every column constant over the pool.
    U = log.user
    keep_cols = np.flatnonzero(np.ptp(U[pool], axis=0) > 0) if U.shape[1] else np.empty(0, int)
    if keep_cols.size == 0:
        raise ValueError("every user feature is constant over the training records.")
    U = U[:, keep_cols]
    feature_names = [f"user_{log.feature_ids[j]}" for j in keep_cols]

    # k-means of users on distinct vectors weighted by counts: the same objective
    # as on all records, and far fewer points when users repeat.
    uniq, inverse, counts = np.unique(U, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    pool_counts = np.bincount(inverse[pool], minlength=uniq.shape[0])
    fit_rows = np.flatnonzero(pool_counts > 0)
    if fit_rows.size < n_user_clusters:
        raise ValueError(f"n_user_clusters={n_user_clusters} but the training and "
                         f"validation records hold only {fit_rows.size} distinct user "
                         "feature vectors; choose fewer clusters.")
    say(f"k-means of {fit_rows.size} distinct users into {n_user_clusters} clusters")
    seed = rng.randint(2**31 - 1)
    if fit_rows.size <= 20000:
        ukm = KMeans(n_clusters=n_user_clusters, n_init=3, random_state=seed)
    else:  # the real log: mini-batches keep 10,000 clusters of millions of users tractable
        ukm = MiniBatchKMeans(n_clusters=n_user_clusters, random_state=seed, n_init=3,
                              batch_size=max(1024, 4 * n_user_clusters))
    ukm.fit(uniq[fit_rows], sample_weight=pool_counts[fit_rows])
    user_cluster = ukm.predict(uniq)[inverse]
    # Mean features of each cluster over the training and validation records.
    pool_cluster = user_cluster[pool]
    sums = np.column_stack([np.bincount(pool_cluster, weights=U[pool, j],
                                        minlength=n_user_clusters)
                            for j in range(U.shape[1])])
    n_in = np.bincount(pool_cluster, minlength=n_user_clusters)
    with np.errstate(invalid="ignore", divide="ignore"):
        centers = sums / n_in[:, None]

    # Article types: k-means over the distinct articles displayed in the pool.
    pool_articles = np.unique(log.article[pool])
    if pool_articles.size < n_article_clusters:
        raise ValueError(f"n_article_clusters={n_article_clusters} but only "
                         f"{pool_articles.size} distinct articles were displayed in the "
                         "training and validation records.")
    A = np.array([log.article_features[a] for a in pool_articles])
    acols = np.flatnonzero(np.ptp(A, axis=0) > 0)
    if acols.size == 0:
        acols = np.arange(A.shape[1])
    akm = KMeans(n_clusters=n_article_clusters, n_init=10,
                 random_state=rng.randint(2**31 - 1)).fit(A[:, acols])
    all_articles = np.unique(log.article[np.concatenate([pool, test])])
    types = akm.predict(np.array([log.article_features[a][acols] for a in all_articles]))
    a_type = dict(zip(all_articles.tolist(), types.tolist()))
    # Records outside both periods get a type too; they are never aggregated.
    article_cluster = types[np.searchsorted(all_articles, log.article).clip(
        0, all_articles.size - 1)]

    def counts_of(rows):
        return _aggregate(user_cluster[rows], article_cluster[rows],
                          log.click[rows].astype(np.float64), n_user_clusters,
                          n_article_clusters)

    splits = {"train": train, "val": val, "test": test}
    agg = {k: counts_of(v) for k, v in splits.items()}
    cnt_train = agg["train"][0]
    present = cnt_train.sum(axis=1) > 0
    coverage = (cnt_train[present] >= min_records).mean(axis=0)
    kept_types = np.flatnonzero(coverage >= min_article_coverage)
    say("article type coverage: " + ", ".join(f"{c:.2f}" for c in coverage))
    if kept_types.size == 0:
        raise ValueError(f"no article type has at least min_records={min_records} records "
                         f"in {min_article_coverage:.0%} of the user clusters; lower "
                         "min_records, min_article_coverage or n_user_clusters.")
    out = Bunch(article_types=kept_types, feature_names=feature_names,
                user_centers=centers, article_coverage=coverage, user_clusterer=ukm,
                article_clusterer=akm, article_type_of=a_type,
                user_feature_columns=[log.feature_ids[j] for j in keep_cols],
                article_feature_columns=[log.article_feature_ids[j] for j in acols],
                n_records={**{k: int(v.size) for k, v in splits.items()},
                           "skipped": int(log.n_skipped)})
    for name, (cnt, hits) in agg.items():
        cnt, hits = cnt[:, kept_types], hits[:, kept_types]
        rows = np.flatnonzero((cnt >= max(min_records, 1)).all(axis=1) & (n_in > 0))
        out[f"X_{name}"] = centers[rows]
        out[f"C_{name}"] = hits[rows] / cnt[rows]
        out[f"sample_weight_{name}"] = cnt[rows].sum(axis=1).astype(np.float64)
        out[f"cluster_{name}"] = rows
        out[f"record_counts_{name}"] = cnt[rows]
        say(f"{name}: {rows.size} feature-cost pairs from {splits[name].size} records")
    return out


def write_synthetic_r6(path, n_records=2000, *, start="2009-05-01", days=10, n_articles=20,
                       pool_size=5, n_user_profiles=None, random_state=0, errors=0):
    """Write a small log in the R6A format (for tests and demos; not real data).

    Users have 5 Dirichlet features plus the constant feature 1, listed in the
    real files' order (``2:.. 3:.. 4:.. 5:.. 6:.. 1:1.000000``); each line shows
    ``pool_size`` candidate articles, one of them displayed, clicked with a
    probability that depends on the user and the article.

    Parameters
    ----------
    path : str or path-like
        Output file; gzip-compressed when it ends with ``.gz``.
    n_records : int, default=2000
    start : str, default="2009-05-01"
        First day (UTC); records are spread uniformly over ``days`` days.
    days : int, default=10
    n_articles : int, default=20
    pool_size : int, default=5
    n_user_profiles : int, default=None
        If given, users are drawn from this many distinct feature vectors.
    random_state : int, default=0
    errors : int, default=0
        Number of malformed lines to insert.

    Returns
    -------
    Bunch with the records written (timestamp, article, click, user, article_features).
    """
    rng = np.random.RandomState(random_state)
    t0 = int(np.datetime64(start, "s").astype(np.int64))
    ts = np.sort(rng.randint(t0, t0 + days * 86400, size=n_records))
    art_ids = 109000 + np.arange(n_articles) * 7
    art_feat = rng.dirichlet(np.ones(5), size=n_articles)
    if n_user_profiles:
        profiles = rng.dirichlet(np.ones(5), size=n_user_profiles)
        users = profiles[rng.randint(n_user_profiles, size=n_records)]
    else:
        users = rng.dirichlet(np.ones(5), size=n_records)
    # Round as the real files do (6 decimals) so parsed values equal these.
    users = np.round(users, 6)
    art_feat = np.round(art_feat, 6)
    pools = np.array([rng.choice(n_articles, size=pool_size, replace=False)
                      for _ in range(n_records)])
    shown = pools[np.arange(n_records), rng.randint(pool_size, size=n_records)]
    p = 0.05 + 0.4 * np.einsum("ij,ij->i", users, art_feat[shown])
    click = (rng.uniform(size=n_records) < p).astype(np.int8)

    def feats(v):
        return " ".join(f"{k + 2}:{x:.6f}" for k, x in enumerate(v)) + " 1:1.000000"

    lines = []
    for i in range(n_records):
        sec = " ".join(f"|{art_ids[a]} {feats(art_feat[a])}" for a in pools[i])
        lines.append(f"{ts[i]} {art_ids[shown[i]]} {click[i]} |user {feats(users[i])} {sec}\n")
    for k in range(errors):
        pos = rng.randint(len(lines) + 1)
        lines.insert(pos, f"{t0} {art_ids[0]} 0 |user 2:0.5 3:0.5\n" if k % 2 else "garbage\n")
    opener = gzip.open if os.fspath(path).endswith(".gz") else open
    with opener(path, "wt") as fh:
        fh.writelines(lines)
    return Bunch(timestamp=ts, article=art_ids[shown], click=click, user=users,
                 article_features=dict(zip(art_ids.tolist(), art_feat)))
