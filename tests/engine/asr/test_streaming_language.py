"""StreamingTranscriber's language: detected once a 2 s window has, kept and confirmed once per
segment, an unsure detection not kept, a set language used (scripted backend).
"""

from __future__ import annotations

from desktop_rt.engine.asr.backend import BackendTraits
from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
from tests.support.streaming_feed import feed_silence


class _DetectingBackend:
    """Detects German whenever it is given no language; notes what each pass was given."""

    traits = BackendTraits(window_seconds=30.0)

    def __init__(self, probability: float = 0.9):
        self.probability = probability
        self.given: list[tuple[float, str | None]] = []
        self.detected_language = None

    def transcribe(self, audio, *, prompt=None, language=None):
        self.given.append((round(len(audio) / 16000, 1), language))
        self.detected_language = ("de", self.probability) if language is None else None
        return []


def test_a_detected_language_is_kept_and_confirmed_once_per_segment():
    backend = _DetectingBackend()
    tr = StreamingTranscriber(backend, StreamingConfig(vad=False))
    feed_silence(tr, 3.0)
    tr.finish()
    # First segment: detect until a 2 s window has (the short onset ones are the least sure).
    assert backend.given == [
        (0.9, None),
        (1.2, None),
        (1.5, None),
        (1.8, None),
        (2.4, None),
        (3.0, "de"),
    ]
    backend.given.clear()
    feed_silence(tr, 3.0)
    # Next segment: its onset uses the stream's language; its first 2 s window confirms it.
    assert backend.given == [
        (0.9, "de"),
        (1.2, "de"),
        (1.5, "de"),
        (1.8, "de"),
        (2.4, None),
        (3.0, "de"),
    ]
    tr.set_language("fr")
    backend.given.clear()
    feed_silence(tr, 0.6)
    assert [language for _, language in backend.given] == ["fr"]


def test_an_unsure_detection_is_not_kept():
    backend = _DetectingBackend(probability=0.4)
    tr = StreamingTranscriber(backend, StreamingConfig(vad=False))
    feed_silence(tr, 3.0)
    assert {language for _, language in backend.given} == {None}


def test_a_turn_decoded_whole_is_given_the_streams_language():
    backend = _DetectingBackend()
    tr = StreamingTranscriber(backend, StreamingConfig(vad=False))
    feed_silence(tr, 3.0)
    tr.finish()
    backend.given.clear()
    assert tr.decode_turn() is not None
    assert [language for _, language in backend.given] == ["de"]
