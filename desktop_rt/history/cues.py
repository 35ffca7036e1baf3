"""Caption cue splitting: time-ordered words in, cues (runs of words) out. Pure functions.

:func:`split_cues` cuts words into runs at sentence ends (not after abbreviations such as
"Mr." or "e.g.") and at pauses, splits a run too long for one cue into the fewest balanced
cues, then joins a cue shorter than the minimum to a neighbour where the result still fits
(or shares the words of both out again so that neither is short). A cue fits when its text
wraps into at most ``max_lines`` lines of ``line_chars`` and it lasts at most ``max_seconds``;
one word too long for any cue is a cue of its own. Every word appears once, in order. The
limits and their sources are in docs/design/history.md.
"""

from __future__ import annotations

import itertools
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from desktop_rt.core_types import Word

__all__ = [
    "LINE_CHARS",
    "MAX_LINES",
    "MIN_CUE_SECONDS",
    "MAX_CUE_SECONDS",
    "MAX_GAP_SECONDS",
    "ABBREVIATIONS",
    "CueLimits",
    "SUBTITLES",
    "split_cues",
    "cue_text",
    "cue_seconds",
    "fits",
    "wrap_lines",
    "ends_sentence",
    "is_abbreviation",
]

LINE_CHARS = 42
"""Characters per caption line (BBC, Netflix and EBU guidelines: 37-42)."""
MAX_LINES = 2
"""Lines per cue."""
MIN_CUE_SECONDS = 5 / 6
"""Shortest cue worth showing: 20 frames at 24 fps (Netflix timed text style guide)."""
MAX_CUE_SECONDS = 7.0
"""Longest cue (Netflix timed text style guide)."""
MAX_GAP_SECONDS = 0.8
"""A pause longer than this ends a sentence run."""

ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "st",
        "prof",
        "sr",
        "jr",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "cf",
        "mt",
        "lt",
        "sgt",
        "capt",
        "col",
        "gen",
        "rev",
        "hon",
        "approx",
        "dept",
    ]
)
"""Words (lower case, without the final dot) whose dot does not end a sentence."""

_SENTENCE_END = tuple(".?!…。？！")
_CLOSERS = "\"'”’»)]"
_ABBREVIATION_CUT = 1
"""Cost of ending a cue after an abbreviation, counted like a too-short cue."""


@dataclass(frozen=True, slots=True)
class CueLimits:
    """What a cue may hold. ``max_chars`` caps the one-line text as well as the lines do."""

    line_chars: int = LINE_CHARS
    max_lines: int = MAX_LINES
    max_chars: int = LINE_CHARS * MAX_LINES
    min_seconds: float = MIN_CUE_SECONDS
    max_seconds: float = MAX_CUE_SECONDS
    max_gap: float = MAX_GAP_SECONDS


SUBTITLES = CueLimits()
"""The subtitle guidelines' limits, used for the history's SRT and WebVTT exports."""


def cue_text(words: Sequence[Word]) -> str:
    """The words joined as the recognizer wrote them, on one line."""
    return " ".join("".join(w.text for w in words).split())


def cue_seconds(words: Sequence[Word]) -> float:
    """From the first word's start to the latest word end (never negative)."""
    return max(0.0, max(w.end for w in words) - words[0].start) if words else 0.0


def wrap_lines(text: str, width: int = LINE_CHARS) -> list[str]:
    """``text`` as one line, two balanced lines of at most ``width``, or as few as words allow."""
    if len(text) <= width:
        return [text]
    words = text.split(" ")
    total = len(text)
    best: tuple[int, int] | None = None  # (imbalance, split index)
    top = -1
    for i, word in enumerate(words[:-1], start=1):
        top += len(word) + 1
        bottom = total - top - 1
        if top <= width and bottom <= width and (best is None or abs(top - bottom) < best[0]):
            best = (abs(top - bottom), i)
    if best is not None:
        return [" ".join(words[: best[1]]), " ".join(words[best[1] :])]
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False) or [text]


def fits(words: Sequence[Word], limits: CueLimits = SUBTITLES) -> bool:
    """Whether ``words`` make one cue within ``limits`` (one word always does)."""
    return len(words) <= 1 or _fits(cue_text(words), cue_seconds(words), limits)


def _fits(text: str, seconds: float, limits: CueLimits) -> bool:
    if len(text) > limits.max_chars or seconds > limits.max_seconds:
        return False
    lines = wrap_lines(text, limits.line_chars)
    return len(lines) <= limits.max_lines and all(len(line) <= limits.line_chars for line in lines)


def is_abbreviation(text: str) -> bool:
    """Whether ``text`` (one word) is an abbreviation whose dot ends no sentence: "Mr.", "e.g."."""
    word = text.strip().rstrip(_CLOSERS).lstrip("\"'“‘«([")
    return word.endswith(".") and word[:-1].lower() in ABBREVIATIONS


def ends_sentence(text: str) -> bool:
    """Whether ``text`` (one word) ends a sentence: ".", "?", "!" (a closing quote may follow)."""
    return text.rstrip().rstrip(_CLOSERS).endswith(_SENTENCE_END) and not is_abbreviation(text)


def split_cues(words: Iterable[Word], limits: CueLimits = SUBTITLES) -> list[tuple[Word, ...]]:
    """Cut time-ordered ``words`` into cues; blank words are dropped. See the module doc."""
    cues: list[tuple[Word, ...]] = []
    for run in _runs([w for w in words if w.text.strip()], limits):
        cues.extend(_balanced(run, limits)[1])
    return _join_short(cues, limits)


def _runs(words: list[Word], limits: CueLimits) -> list[list[Word]]:
    """Sentences: cut after a sentence end and before a pause longer than ``max_gap``."""
    runs: list[list[Word]] = []
    current: list[Word] = []
    for word in words:
        if current and word.start - current[-1].end > limits.max_gap:
            runs.append(current)
            current = []
        current.append(word)
        if ends_sentence(word.text):
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    return runs


def _score(
    text: str, seconds: float, cut_after: str | None, limits: CueLimits
) -> tuple[int, float]:
    """A cue's flaws (1 if shorter than the minimum, plus the cost of a cut right after an
    abbreviation ``cut_after``: None for a run's last cue) and its squared slack."""
    short = int(seconds < limits.min_seconds)
    cut = cut_after is not None and is_abbreviation(cut_after)
    chars = (limits.max_chars - len(text)) / max(1, limits.max_chars)
    spare = (limits.max_seconds - seconds) / max(1e-9, limits.max_seconds)
    return short + (_ABBREVIATION_CUT if cut else 0), chars * chars + min(1.0, spare * spare)


def _balanced(run: Sequence[Word], limits: CueLimits) -> tuple[int, list[tuple[Word, ...]]]:
    """The fewest flaws, then the fewest cues, then the most even cues; returns (flaws, cues)."""
    n = len(run)
    best: list[tuple[int, int, float, int]] = [(0, 0, 0.0, 0)] + [(n + 1, n + 1, 0.0, 0)] * n
    for j in range(n):
        flaws, count, cost, _ = best[j]
        raw, latest = "", run[j].end
        for i in range(j + 1, n + 1):  # the cue run[j:i], grown one word at a time
            raw += run[i - 1].text
            latest = max(latest, run[i - 1].end)
            text, seconds = " ".join(raw.split()), max(0.0, latest - run[j].start)
            if i - j > 1 and not _fits(text, seconds, limits):
                break
            own, slack = _score(text, seconds, run[i - 1].text if i < n else None, limits)
            candidate = (flaws + own, count + 1, cost + slack, j)
            if candidate[:3] < best[i][:3]:
                best[i] = candidate
    cuts, i = [], n
    while i > 0:
        cuts.append(i)
        i = best[i][3]
    bounds = [0, *reversed(cuts)]
    return best[n][0], [tuple(run[a:b]) for a, b in itertools.pairwise(bounds)]


def _join_short(cues: list[tuple[Word, ...]], limits: CueLimits) -> list[tuple[Word, ...]]:
    """Join each too-short cue to the previous (else next) cue, or share the pair out again."""
    cues = list(cues)
    changed = True
    while changed:
        changed = False
        for k, cue in enumerate(cues):
            if len(cues) == 1 or cue_seconds(cue) >= limits.min_seconds:
                continue
            for a in (k - 1, k):
                if a < 0 or a + 1 >= len(cues):
                    continue
                pair = cues[a] + cues[a + 1]
                flaws, parts = _balanced(pair, limits)
                if fits(pair, limits):
                    parts = [pair]
                elif flaws:
                    continue
                cues[a : a + 2] = parts
                changed = True
                break
            if changed:
                break
    return cues
