"""A saved session as an export :class:`~desktop_rt.history.transcript.Transcript`.

:func:`build_transcript` turns a session's rows into caption cues within the subtitle
limits of :mod:`desktop_rt.history.cues`: turns of labelled streams (meeting mode) in time
order, cut turn by turn (a cue never spans two turns, so never mixes speakers). Corrected turns
export their correction. A turn's English text (live translation) is shared out over its cues
by their length, so joined they give the whole translation. :func:`turn_words` spreads a turn's words over its time (deltas carry no
word times) with the probabilities the recognizer gave them.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from desktop_rt.core_types import Word
from desktop_rt.history.rows import SessionRow, TurnRow
from desktop_rt.history.speech_text import clean_speech_text
from desktop_rt.history.transcript import Segment, Transcript, subtitle_segments

__all__ = ["build_transcript", "turn_words", "share_translation"]


def build_transcript(row: SessionRow, turns: list[TurnRow]) -> Transcript:
    """The session ``row`` with its ``turns`` (in ``seq`` order) as a transcript."""
    if any(t.speaker for t in turns):
        turns = sorted(turns, key=lambda t: (t.start, t.seq))
    segments: list[Segment] = []
    for turn in turns:
        label = " ".join((turn.speaker or "").split())
        cues = subtitle_segments(turn_words(turn), prefix=f"{label}: " if label else "")
        shares = share_translation(turn.translation, [len(c.text) for c in cues])
        segments.extend(
            replace(c, speaker=turn.speaker, translation=share or None)
            for c, share in zip(cues, shares, strict=True)
        )
    return Transcript(tuple(segments), row.display_title, row.language, row.started_at)


def share_translation(translation: str, weights: list[int]) -> list[str]:
    """``translation``'s words cut into ``len(weights)`` runs sized like ``weights``."""
    words = translation.split()
    if not weights:
        return []
    total = sum(weights) or len(weights)
    cuts, seen = [0], 0
    for weight in weights[:-1]:
        seen += weight if sum(weights) else 1
        cuts.append(round(len(words) * seen / total))
    cuts.append(len(words))
    return [" ".join(words[a:b]) for a, b in itertools.pairwise(cuts)]


def turn_words(turn: TurnRow) -> list[Word]:
    """A turn's words with times spread over the turn by length (deltas carry no word times).

    Non-speech output saved by older versions (sound tags, runs of punctuation) is left out.
    Each word keeps the probability saved for it (1.0 when none was, or the turn was corrected).
    """
    pieces = [(" " + w) for w in clean_speech_text(turn.text).split()]
    if not pieces:
        return []
    saved = turn.shown_probabilities
    sure = saved if len(saved) == len(pieces) else (None,) * len(pieces)
    chars = sum(len(p) for p in pieces)
    start = max(0.0, turn.start)
    end = turn.end if turn.end is not None and turn.end > start else start + 0.065 * chars
    span = end - start
    words, t = [], start
    for piece, probability in zip(pieces, sure, strict=True):
        dt = span * len(piece) / chars
        p = 1.0 if probability is None else probability
        words.append(Word(piece, round(t, 3), round(t + dt, 3), p))
        t += dt
    return words
