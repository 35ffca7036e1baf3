"""The settings of one streaming transcriber (:class:`StreamingConfig`).

Times are seconds of audio. docs/design/streaming.md says why each default is what it is.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["StreamingConfig"]


@dataclass(frozen=True)
class StreamingConfig:
    language: str | None = None
    """ISO code of the speech's language; ``None``: detect it on the stream."""
    prompt: str | None = None
    """Text that conditions spelling and style, placed before the committed text's prompt."""
    min_chunk_seconds: float = 0.6
    """New audio a regular pass waits for (after a segment's onset)."""
    trim_seconds: float = 12.0
    """Once the window is longer, it is cut at the end of its last committed sentence."""
    max_window_seconds: float = 24.0
    """Once the window is longer, it is cut at its last committed word, whatever it is."""
    prompt_chars: int = 200
    """At most this many characters of committed text, before the window, form the prompt."""
    prompt_min_probability: float = 0.35
    """Committed words less sure than this (any piece of a written word) stay out of the prompt:
    a decoder copies a misspelling it is given ("ild-sposed", then "ld-sposed")."""
    vad: bool = True
    """Gate the model with voice activity: silence and noise never reach it."""
    vad_threshold: float = 0.5
    """A frame this probably speech counts as speech."""
    speech_pad_seconds: float = 0.4
    """Audio kept before a segment's first speech and heard after its last."""
    endpoint_silence_seconds: float = 0.8
    """Silence after speech that ends a segment: everything it holds is committed."""
    min_agree_seconds: float = 2.0
    """A window shorter than this is a segment's onset (quicker passes, stricter agreement)."""
    onset_chunk_seconds: float = 0.3
    """New audio a pass waits for during a segment's onset."""
    min_window_seconds: float = 0.9
    """The shortest window worth a pass, the speech pad included."""
    onset_agreement: int = 2
    """How many latest hypotheses must agree on a word at an onset (at least 2)."""
    onset_min_probability: float = 0.5
    """At an onset, every agreeing hypothesis must give a word at least this probability."""
    onset_latest_probability: float | None = 0.6
    """At an onset, the newest hypothesis's floor (``None``: ``onset_min_probability``)."""
    onset_span_seconds: float = 0.6
    """At an onset, agreeing hypotheses' windows end at least this far apart (passes a few
    tenths of a second apart hear nearly the same audio and repeat the same guess)."""
    pause_hint_seconds: float | None = 0.25
    """Silence after which a regular pass waits for the closing pass instead (``None``: never)."""
    turn_decode: bool = True
    """When a turn ends (``finish``), decode it whole once if it fits the backend's window;
    those words are the turn's completed transcript (see ``StreamingTranscriber.decode_turn``)."""
    turn_context_seconds: float = 5.0
    """Audio taken in before a turn that its whole decode hears with it (not written again)."""
