"""The transcript data model: :class:`Segment` (a caption cue) and :class:`Transcript`.

Build segments from the recognizer's time-ordered words with :func:`segments_from_words`, wrap
them in a :class:`Transcript`, then render it with :mod:`desktop_rt.history.export`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from desktop_rt.core_types import Word
from desktop_rt.history.cues import LINE_CHARS, MAX_LINES, SUBTITLES, CueLimits, split_cues

__all__ = ["Segment", "Transcript", "segments_from_words", "subtitle_segments"]


@dataclass(frozen=True, slots=True)
class Segment:
    """One caption cue: a run of words with its time span in seconds.

    ``speaker``: the stream's label in meeting mode ("You", "Others"); None for one stream.
    ``translation``: its English line when live translation was on; None for none."""

    start: float
    end: float
    text: str
    words: tuple[Word, ...] = ()
    speaker: str | None = None
    translation: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.words, tuple):
            object.__setattr__(self, "words", tuple(self.words))


@dataclass(frozen=True, slots=True)
class Transcript:
    """A whole transcript: ordered segments plus metadata. ``created`` is an ISO 8601 string."""

    segments: tuple[Segment, ...]
    title: str = ""
    language: str | None = None
    created: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.segments, tuple):
            object.__setattr__(self, "segments", tuple(self.segments))

    @property
    def text(self) -> str:
        """All segment texts joined with single spaces."""
        return " ".join(s.text.strip() for s in self.segments if s.text.strip()).strip()

    @property
    def translation(self) -> str:
        """All segment translations joined with single spaces ("" when there are none)."""
        lines = (s.translation.strip() for s in self.segments if s.translation)
        return " ".join(line for line in lines if line)


def segments_from_words(
    words: Iterable[Word],
    *,
    max_chars: int = 84,
    max_gap: float = 0.8,
    max_duration: float = 7.0,
    min_duration: float = 0.0,
    line_chars: int = LINE_CHARS,
    max_lines: int = MAX_LINES,
) -> tuple[Segment, ...]:
    """Group a flat, time-ordered word stream into caption cues (:func:`~.cues.split_cues`).

    A cue ends after sentence-ending punctuation (not after an abbreviation such as "Mr."),
    before a pause longer than ``max_gap``, and where it would pass ``max_chars`` characters,
    ``max_lines`` lines of ``line_chars`` or ``max_duration`` seconds; a run too long for one cue
    is split into the fewest even cues. A cue shorter than ``min_duration`` joins a neighbour
    where the limits allow. A single word longer than the limits becomes a cue of its own.
    Blank words are dropped. :func:`subtitle_segments` applies the subtitle guidelines' limits.
    """
    limits = CueLimits(line_chars, max_lines, max_chars, min_duration, max_duration, max_gap)
    return tuple(_segment(cue) for cue in split_cues(words, limits))


def subtitle_segments(words: Iterable[Word], *, prefix: str = "") -> tuple[Segment, ...]:
    """Cues within :data:`~.cues.SUBTITLES` (two lines of 42 characters, 5/6 s to 7 s).

    ``prefix`` (a speaker label such as ``"You: "``) is kept free on every line, so the
    subtitle export's labelled first line still fits."""
    width = max(1, LINE_CHARS - len(prefix))
    limits = replace(SUBTITLES, line_chars=width, max_chars=width * SUBTITLES.max_lines)
    return tuple(_segment(cue) for cue in split_cues(words, limits))


def _segment(cue: tuple[Word, ...]) -> Segment:
    start = cue[0].start
    end = max(start, max(w.end for w in cue))
    return Segment(start, end, "".join(w.text for w in cue).strip(), cue)
