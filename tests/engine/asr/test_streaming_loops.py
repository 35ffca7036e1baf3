"""A pass whose decoder looped is no evidence for agreement, and loses nothing.

Whisper on a window whose end holds a sentence's first second can loop on a guess ("How do
you measure?" eight times); what survives the loop cleaning agreed with the pass before it
and the guess was committed (issue 15, the dictation test's "How do you marry" in CI).
"""

from __future__ import annotations

import numpy as np

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.backend import BackendTraits
from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
from tests.support.streaming_feed import feed_audio

CONFIG = StreamingConfig(vad=False, min_agree_seconds=0.0, min_window_seconds=0.5)


class Script:
    """Answers the n-th pass with the n-th text (the last repeated), a word every 0.2 s."""

    traits = BackendTraits()
    detected_language = None
    name = "script"

    def __init__(self, texts: list[str]):
        self.texts = texts
        self.calls = 0

    def transcribe(self, audio: np.ndarray, **_options: object) -> list[Word]:
        text = self.texts[min(self.calls, len(self.texts) - 1)]
        self.calls += 1
        return [Word(" " + t, 0.2 * i, 0.2 * i + 0.18, 0.9) for i, t in enumerate(text.split())]

    def close(self) -> None:
        pass


def run(texts: list[str], seconds: float) -> tuple[str, str]:
    """(committed while streaming, committed in all) for ``seconds`` of audio."""
    tr = StreamingTranscriber(Script(texts), CONFIG)
    streamed = feed_audio(tr, np.zeros(int(seconds * 16000), dtype=np.float32))
    final = tr.finish().committed
    return "".join(w.text for w in streamed), "".join(w.text for w in (*streamed, *final))


def test_a_looping_pass_does_not_agree_on_its_guess():
    texts = [
        "how do you",  # 0.6 s
        "how do you measure " * 4,  # 1.2 s: a loop on the guess, past the audio
        "had he married a more",  # 1.8 s
        "had he married a more amiable",  # 2.4 s, and the final pass
    ]
    streamed, everything = run(texts, 2.4)
    assert streamed == " had he married a more"
    assert everything == " had he married a more amiable"


def test_the_guess_agreed_without_the_loop_rule():
    """The same passes with the loop written once (no loop): the guess was agreed on."""
    texts = ["how do you", "how do you measure", "had he married a more"]
    streamed, _ = run(texts, 1.8)
    assert streamed.startswith(" how do you")


def test_what_a_looping_pass_heard_is_committed_at_the_end():
    texts = ["ever tried ever", "ever tried ever failed fail again " + "fail again " * 10]
    streamed, everything = run(texts, 1.2)
    assert streamed == ""
    assert everything.startswith(" ever tried ever failed fail again")
