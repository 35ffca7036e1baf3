"""Shortening a streaming window past its trim length: :func:`trim_window`.

Called after every pass of :class:`~.streaming.StreamingTranscriber`; docs/design/streaming.md,
*Trims and the prompt*, says why the window is cut where it is.
"""

from __future__ import annotations

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.agreement import HypothesisBuffer
from desktop_rt.engine.asr.streaming_config import StreamingConfig
from desktop_rt.engine.asr.window import AudioWindow

__all__ = ["trim_window"]

_SENTENCE_END = (".", "?", "!", "…")
_SETTLED_SECONDS = 3.0  # a word ending this long before the stream's end is settled


def trim_window(
    window: AudioWindow, hypotheses: HypothesisBuffer, cfg: StreamingConfig, now: float
) -> list[Word]:
    """Shorten ``window`` (stream time ``now``); returns words it had to commit without
    agreement (rare).

    Past ``trim_seconds`` the window starts after its last committed sentence; past
    ``max_window_seconds`` after its last committed word, and when nothing was agreed for a
    whole window, the settled part of the hypothesis is committed so memory stays bounded.
    """
    forced: list[Word] = []
    if window.seconds <= cfg.trim_seconds:
        return forced
    window.trimmed = True
    inside = [w for w in hypotheses.committed if w.end > window.start]
    sentence_ends = [w.end for w in inside if w.text.rstrip().endswith(_SENTENCE_END)]
    if sentence_ends:
        window.cut(sentence_ends[-1])
    elif window.seconds > cfg.max_window_seconds:
        if inside:
            window.cut(inside[-1].end)
        if window.seconds > cfg.max_window_seconds:
            horizon = now - _SETTLED_SECONDS
            forced = hypotheses.commit_settled(horizon)
            cut = max(hypotheses.last_committed_end, horizon - cfg.trim_seconds)
            pending = hypotheses.pending_from()  # never cut a word heard, uncommitted
            window.cut(cut if pending is None else min(cut, pending))
    return forced
