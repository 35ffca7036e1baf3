"""StreamingTranscriber at a segment's onset: short windows, how sure agreeing hypotheses must
be, and the least audio a backend takes per update (scripted backends).
"""

from __future__ import annotations

import numpy as np
import pytest

from desktop_rt.engine.asr.backend import BackendTraits
from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
from tests.support.streaming_feed import feed_silence, timed_words


class _GuessingBackend:
    """Guesses at a segment's onset (windows under 1.8 s), then hears it right.

    ``guess_probability`` is how sure the model is of its guess.
    """

    traits = BackendTraits()
    detected_language = None

    def __init__(self, guess_probability: float):
        self.windows: list[float] = []
        self.guess_probability = guess_probability

    def transcribe(self, audio, *, prompt=None, language=None):
        from desktop_rt.core_types import Word

        seconds = len(audio) / 16000
        self.windows.append(round(seconds, 2))
        if seconds < 1.8:
            words = [
                Word(w.text, w.start, w.end, self.guess_probability)
                for w in timed_words("how do you married")
            ]
        else:
            words = timed_words("had he married a more amiable woman")
        return [w for w in words if w.start < seconds]

    def close(self):
        pass


def test_unsure_first_guesses_of_a_segment_are_not_committed():
    backend = _GuessingBackend(guess_probability=0.2)
    committed = feed_silence(StreamingTranscriber(backend, StreamingConfig(vad=False)), 4.0)
    # Onset updates every 0.3 s once the window holds 0.9 s; the short windows agree...
    assert backend.windows[:4] == [0.9, 1.2, 1.5, 1.8]
    text = " ".join(w.text.strip() for w in committed)
    assert text.startswith("had he married"), text  # ...but the model is unsure of them


def test_onset_words_commit_when_two_short_windows_agree_with_confidence():
    backend = _GuessingBackend(guess_probability=0.9)
    tr = StreamingTranscriber(backend, StreamingConfig(vad=False))
    committed = []
    for _ in range(16):  # windows of 0.9, 1.2 and 1.5 s
        tr.insert_audio(np.zeros(1600, dtype=np.float32))
        update = tr.process()
        if update.committed and not committed:
            first_at = tr.buffered_seconds
        committed += update.committed
    assert [w.text.strip() for w in committed][:2] == ["how", "do"]  # confident guesses are taken
    assert first_at < StreamingConfig().min_agree_seconds  # from onset windows, not after 2 s
    two = StreamingTranscriber(_GuessingBackend(0.9), StreamingConfig(vad=False, onset_agreement=4))
    assert feed_silence(two, 1.2) == []  # four hypotheses are needed when asked for


class _GrowingConfidenceBackend:
    """The same onset words every window, each window surer of them than the one before."""

    traits = BackendTraits()
    detected_language = None

    def __init__(self, confidences: list[float]):
        self.confidences = confidences
        self.calls = 0

    def transcribe(self, audio, *, prompt=None, language=None):
        from desktop_rt.core_types import Word

        p = self.confidences[min(self.calls, len(self.confidences) - 1)]
        self.calls += 1
        return [
            Word(w.text, w.start, w.end, p)
            for w in timed_words("and mister john")
            if w.start < len(audio) / 16000
        ]

    def close(self):
        pass


@pytest.mark.parametrize(
    ("confidences", "commits_at"),
    [
        ([0.55, 0.63], 1.2),  # both over 0.5, the newest over 0.6: the second window commits
        (
            [0.55, 0.55, 0.55, 0.55, 0.65],
            2.4,
        ),  # the newest must reach 0.6 (windows 0.9 ... 1.8, 2.4)
        ([0.45, 0.9, 0.9], 1.5),  # every agreeing hypothesis must reach 0.5
    ],
)
def test_onset_agreement_needs_every_hypothesis_sure_and_the_newest_surer(confidences, commits_at):
    # The probability floors alone: no span between agreeing windows (test_agreement_span.py).
    config = StreamingConfig(vad=False, onset_span_seconds=0.0)
    tr = StreamingTranscriber(_GrowingConfidenceBackend(confidences), config)
    first_at = None
    for _ in range(30):
        tr.insert_audio(np.zeros(1600, dtype=np.float32))
        if tr.process().committed and first_at is None:
            first_at = round(tr.buffered_seconds, 1)
    assert first_at == commits_at


class _SlowBackend(_GuessingBackend):
    """A backend that can only afford an update per 2 s of new audio."""

    traits = BackendTraits(min_update_seconds=2.0)


def test_a_backend_sets_the_least_audio_per_update():
    slow = _SlowBackend(guess_probability=0.9)
    feed_silence(StreamingTranscriber(slow, StreamingConfig(vad=False)), 6.0)
    assert slow.windows == [2.0, 4.0, 6.0]  # not every 0.3 s / 0.6 s as for Whisper
