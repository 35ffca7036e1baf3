"""StreamingTranscriber when a pass mishears words it has committed: the pass is run again after
them, or, for a slow backend, the cut window is heard at its next update (scripted backend).
"""

from __future__ import annotations

import pytest

from desktop_rt.engine.asr.backend import BackendTraits
from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
from tests.support.streaming_feed import feed_audio, ramp_audio


class _MishearingBackend:
    """Hears a sentence whose words lie ``step`` seconds apart in the stream. From pass
    ``mishear_from`` on, a window that still holds the sentence's start hears "ill-disposed" as
    "ild-sposed", both times (a decoder copying itself); a window cut later hears it right.
    The window's stream position comes from the audio (:func:`ramp_audio`)."""

    traits = BackendTraits()
    detected_language = None

    SENTENCE = [
        " He",
        " was",
        " not",
        " an",
        " ill",
        "-disposed",
        " young",
        " man,",
        " unless",
        " to",
        " be",
        " ill",
        "-disposed.",
    ]

    def __init__(self, step: float, mishear_from: int):
        self.step, self.mishear_from = step, mishear_from
        self.calls: list[tuple[float, float, str | None]] = []  # (window start, seconds, prompt)

    def transcribe(self, audio, *, prompt=None, language=None):
        from desktop_rt.core_types import Word

        start, seconds = round(float(audio[0]) * 1e6) / 16000, len(audio) / 16000
        self.calls.append((start, seconds, prompt))
        misheard = start == 0 and len(self.calls) >= self.mishear_from
        words = []
        for i, text in enumerate(self.SENTENCE):
            t = self.step * i
            if start - 0.05 <= t and t + 0.08 <= start + seconds:
                if misheard:
                    text = text.replace("ill", "ild").replace("-disposed", "-sposed")
                words.append(Word(text, t - start, t - start + 0.08))
        return words


SENTENCE = " He was not an ill-disposed young man, unless to be ill-disposed."


def test_a_pass_that_mishears_committed_words_is_run_again_after_them():
    backend = _MishearingBackend(step=0.1, mishear_from=3)
    tr = StreamingTranscriber(
        backend, StreamingConfig(vad=False, min_window_seconds=0.0, min_agree_seconds=0.0)
    )
    committed = feed_audio(tr, ramp_audio(3.0))
    committed += tr.finish().committed
    assert "".join(w.text for w in committed) == SENTENCE
    assert tr.rehearings == 1
    # Passes 1 and 2 (0.6 and 1.2 s) committed "He was not an ill-disposed"; pass 3 misheard
    # it and ran again at once on the window after it, with it as the prompt.
    (start, _, _), (again, _, prompt) = backend.calls[2], backend.calls[3]
    assert start == 0 and again == pytest.approx(0.58, abs=0.01)
    assert prompt == "He was not an ill-disposed"


def test_a_slow_backend_hears_the_cut_window_at_its_next_update_and_loses_nothing():
    backend = _MishearingBackend(step=0.5, mishear_from=4)
    backend.traits = BackendTraits(min_update_seconds=2.0)
    tr = StreamingTranscriber(
        backend, StreamingConfig(vad=False, min_window_seconds=0.0, min_agree_seconds=0.0)
    )
    committed = feed_audio(tr, ramp_audio(8.0))  # passes at 2, 4, 6 and 8 s; the fourth mishears
    assert len(backend.calls) == 4 and tr.rehearings == 0  # no extra pass for a backend this slow
    # The misheard pass is not shown either: the tail stays what the pass before it heard.
    shown = "".join(w.text for w in tr.process().tentative)
    assert "ild" not in shown and shown in SENTENCE
    assert "".join(w.text for w in committed) == " He was not an ill-disposed young man,"
    committed += tr.finish().committed  # the last pass runs on the cut window
    assert "".join(w.text for w in committed) == SENTENCE
    assert backend.calls[4][0] == pytest.approx(3.58, abs=0.01)
