"""Text shared by messages and labels: counts with their nouns."""

from __future__ import annotations

__all__ = ["count_noun"]

_PLURALS = {"leaf": "leaves"}


def count_noun(n, noun):
    """``n`` and ``noun``, plural unless ``n`` is 1: "1 leaf", "2 leaves", "0 rows"."""
    n = int(n)
    return f"{n} {noun if n == 1 else _PLURALS.get(noun, noun + 's')}"
