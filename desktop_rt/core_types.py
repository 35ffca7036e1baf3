"""Types every layer may import: the engine's sample rate and a recognised word.

Nothing here imports anything from desktop_rt, so audio, ASR, protocol, history and UI code can
all share these without depending on each other.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SAMPLE_RATE", "Word"]

SAMPLE_RATE = 16_000
"""The rate of every audio window handed to a backend."""


@dataclass(frozen=True, slots=True)
class Word:
    """One recognised word.

    ``text`` keeps the leading space the tokenizer produced (" hello"), so joining words with
    ``"".join`` rebuilds the text exactly. ``start``/``end`` are seconds; inside a backend they
    are relative to the window, the streaming layer shifts them to stream time.
    """

    text: str
    start: float
    end: float
    probability: float = 1.0

    def shifted(self, offset: float) -> Word:
        return Word(self.text, self.start + offset, self.end + offset, self.probability)
