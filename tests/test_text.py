"""Counts with their nouns in messages."""

import numpy as np

from spotree._text import count_noun


def test_count_noun_is_singular_for_one_only():
    assert count_noun(1, "row") == "1 row"
    assert count_noun(0, "row") == "0 rows"
    assert count_noun(2, "round") == "2 rounds"
    assert count_noun(1, "leaf") == "1 leaf"
    assert count_noun(3, "leaf") == "3 leaves"
    # Counts read from arrays (a float leaf count, a numpy int) print as ints.
    assert count_noun(np.float64(1.0), "leaf") == "1 leaf"
    assert count_noun(np.int64(5), "subproblem") == "5 subproblems"
