"""A REST request's backend calls, run on the model's inference worker (rest_backend.py)."""

from __future__ import annotations

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE, Word
from desktop_rt.engine.asr.backend import BackendTraits
from desktop_rt.engine.asr.worker import InferenceWorker
from desktop_rt.engine.server.rest_backend import WorkerBackend


class Recording:
    """Hears one word per call and records the keywords it was given (no ``whole``: a
    backend whose traits do not say ``whole_context`` need not take it)."""

    name = "recording"
    detected_language = None

    def __init__(self, traits: BackendTraits):
        self.traits = traits
        self.calls: list[dict] = []

    def transcribe(self, audio, **kwargs):
        self.calls.append(kwargs)
        return [Word(" hi", 0.0, len(audio) / SAMPLE_RATE)]

    def close(self):
        pass


class Plain(Recording):
    def transcribe(self, audio, *, prompt=None, language=None, prefix=None):
        return super().transcribe(audio, prompt=prompt, language=language, prefix=prefix)


def through_the_worker(backend, **kwargs) -> list[Word]:
    worker = InferenceWorker(lambda: None)
    worker.start()
    calls = WorkerBackend(backend, worker)
    try:
        return list(calls.transcribe(np.zeros(SAMPLE_RATE, np.float32), **kwargs))
    finally:
        calls.close()
        worker.stop()


def test_a_whole_window_reaches_the_backend_whole():
    backend = Recording(BackendTraits(whole_context=True))
    assert [w.text for w in through_the_worker(backend, whole=True)] == [" hi"]
    assert backend.calls[0]["whole"] is True


def test_a_backend_that_takes_no_whole_windows_is_never_given_the_keyword():
    backend = Plain(BackendTraits())
    assert [w.text for w in through_the_worker(backend, prompt="p")] == [" hi"]
    assert backend.calls == [{"prompt": "p", "language": None, "prefix": None}]
