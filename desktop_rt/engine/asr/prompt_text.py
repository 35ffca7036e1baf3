"""The committed text a streaming pass is prompted with: :func:`committed_prompt`.

docs/design/streaming.md, *Trims and the prompt*, says why unsure words stay out of it.
"""

from __future__ import annotations

from collections.abc import Sequence

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.respelling import respell
from desktop_rt.engine.asr.streaming_config import StreamingConfig
from desktop_rt.engine.protocol.events import Respelling

__all__ = ["committed_prompt", "joined", "sure_words"]


def committed_prompt(
    outside: Sequence[Word], config: StreamingConfig, respellings: tuple[Respelling, ...] = ()
) -> str | None:
    """The committed words before the window (heard no more) as a prompt: the sure ones
    (``prompt_min_probability``), as the session respelled them, the last ``prompt_chars``."""
    sure = sure_words(outside, config.prompt_min_probability)
    text = respell("".join(w.text for w in sure), respellings)
    return text.strip()[-config.prompt_chars :] or None


def joined(*parts: str | None) -> str | None:
    """The prompts given, in order, one space apart; None when there is none."""
    return " ".join(p for p in parts if p) or None


def sure_words(words: Sequence[Word], floor: float) -> list[Word]:
    """``words`` less each written word ("ill" + "-disposed") with a piece less sure than
    ``floor``: a misspelling in the prompt is copied by the decoder."""
    out: list[Word] = []
    first = 0
    for i in range(1, len(words) + 1):
        if i == len(words) or words[i].text[:1].isspace():
            pieces = words[first:i]
            if min(w.probability for w in pieces) >= floor:
                out += pieces
            first = i
    return out
