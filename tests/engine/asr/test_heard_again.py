"""heard_again's longest in-order matching of committed words: the same pairs as the plain
table it replaced, filled cell by cell (kept here as the reference)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.heard_again import _AGAIN_SECONDS, _last_match, heard_again
from desktop_rt.engine.asr.spelling import normalize_word

TEXTS = [" a", " the", " cat", " The", " cat.", "-x", " mat", ""]


def _plain_last_match(held: list[Word], words: list[Word]) -> tuple[int, int]:
    a = [normalize_word(w.text) for w in held]
    b = [normalize_word(w.text) for w in words]

    def same(i: int, j: int) -> bool:
        return bool(a[i]) and a[i] == b[j] and abs(words[j].end - held[i].end) <= _AGAIN_SECONDS

    n, m = len(a), len(b)
    best = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            here = best[i + 1][j + 1] + 1 if same(i, j) else 0
            best[i][j] = max(best[i + 1][j], best[i][j + 1], here)
    i = j = 0
    last = (-1, -1)
    while i < n and j < m and best[i][j]:
        if same(i, j) and best[i][j] == best[i + 1][j + 1] + 1:
            last, i, j = (i, j), i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return last


def _timed(texts: list[str], gaps: list[float], start: float) -> list[Word]:
    words, t = [], start
    for text, gap in zip(texts, gaps, strict=False):
        words.append(Word(text, t, t + 0.3))
        t += 0.3 + gap
    return words


_words = st.builds(
    _timed,
    st.lists(st.sampled_from(TEXTS), max_size=24),
    st.lists(st.floats(0.0, 0.8), min_size=24, max_size=24),
    st.floats(0.0, 3.0),
)


@settings(max_examples=400, deadline=None)
@given(held=_words, words=_words)
def test_the_matching_is_the_plain_tables(held, words):
    assert _last_match(held, words) == _plain_last_match(held, words)


def test_a_hypothesis_that_hears_the_committed_words_again_starts_after_them():
    held = _timed([" the", " cat", " sat"], [0.1, 0.1, 0.1], 0.0)
    words = _timed([" the", " cat", " sat", " on", " the", " mat"], [0.1] * 6, 0.05)
    assert _last_match(held, words) == (2, 2)
    assert heard_again(held, words, commit_point=held[-1].end) == 3
