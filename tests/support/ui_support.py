"""Scoring helpers for the UI tests (the app fixture is in tests/ui/conftest.py)."""

from __future__ import annotations

import re


def words(text: str) -> list[str]:
    return re.findall(r"[a-z']+", text.lower())


def word_recall(reference: str, hypothesis: str) -> float:
    """Share of reference words found, in order, in the hypothesis (a lenient WER stand-in)."""
    ref, hyp = words(reference), words(hypothesis)
    i = found = 0
    for w in ref:
        j = i
        while j < len(hyp) and hyp[j] != w:
            j += 1
        if j < len(hyp):
            found += 1
            i = j + 1
    return found / max(1, len(ref))
