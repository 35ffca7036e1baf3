"""The transcript data model: :class:`Segment` (a caption cue) and :class:`Transcript`.

Build segments from the recognizer's time-ordered words with :func:`segments_from_words`, wrap
them in a :class:`Transcript`, then render it with :mod:`desktop_rt.history.export`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from desktop_rt.core_types import Word

__all__ = ["Segment", "Transcript", "segments_from_words"]

_SENTENCE_END = tuple(".?!…。？！")
_CLOSERS = "\"'”’»)]"


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
) -> tuple[Segment, ...]:
    """Group a flat, time-ordered word stream into caption cues.

    A cue ends after sentence-ending punctuation, before a pause longer than ``max_gap``, and
    before a word that would push it past ``max_chars`` characters or ``max_duration`` seconds.
    A single word longer than the limits becomes a cue of its own. Blank words are dropped.
    """
    segments: list[Segment] = []
    current: list[Word] = []

    def flush() -> None:
        if current:
            start = current[0].start
            end = max(start, max(w.end for w in current))
            text = "".join(w.text for w in current).strip()
            segments.append(Segment(start, end, text, tuple(current)))
            current.clear()

    for word in words:
        if not word.text.strip():
            continue
        if current:
            too_long = len(("".join(w.text for w in current) + word.text).strip()) > max_chars
            too_slow = word.end - current[0].start > max_duration
            paused = word.start - current[-1].end > max_gap
            if too_long or too_slow or paused:
                flush()
        current.append(word)
        if word.text.rstrip().rstrip(_CLOSERS).endswith(_SENTENCE_END):
            flush()
    flush()
    return tuple(segments)
