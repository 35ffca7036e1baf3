"""A flush's worker turn when its item is decoded whole (engine/asr/worker_turn.py), seen
through the RealtimeSession that the bridge feeds: the deltas are the streamed words, the
``completed`` transcript is the whole decode's.

The backend is the scripted one of :mod:`tests.support.scripted_backend`, which reads where it
is in the stream from the audio (every sample holds its own index), so each audio chunk the
session hands over is replaced by the ramp of its place in the stream before the worker gets
it. The worker runs its turns on the test's thread, on a virtual clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.backend import BackendTraits
from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
from desktop_rt.engine.asr.worker import (
    FlushedResult,
    InferenceWorker,
    WordsResult,
    WorkerConfig,
    WorkerResult,
)
from desktop_rt.engine.audio.codecs import float_to_pcm16
from desktop_rt.engine.protocol.events import AudioChunk, Command
from desktop_rt.engine.server.bridge import apply_result
from tests.support.scripted_backend import (
    PassStyle,
    ScriptedBackend,
    Truth,
    TruthSpeech,
    TruthWord,
    ramp,
    word_ids,
)
from tests.support.session_support import COMPLETED, DELTA, append, drain, send, tone
from tests.support.session_support import make as make_session
from tests.support.slow_machine import VirtualClock

DEFAULT = StreamingConfig()
TRUTH = Truth(tuple(TruthWord(i, 0.5 + i * 0.35, 0.8 + i * 0.35) for i in range(10)))


@dataclass
class Switched:
    """The scripted backend; while ``decoding`` (a whole decode runs) each call notes the
    results delivered so far and, as ``mode`` says, writes every word otherwise or fails."""

    inner: ScriptedBackend
    delivered: list[WorkerResult]
    mode: str = "other words"  # or "fail"
    decoding: bool = False
    seen: list[list[WorkerResult]] = field(default_factory=list)
    traits: BackendTraits = BackendTraits(window_seconds=30.0)
    detected_language: tuple[str, float] | None = None
    name: str = "switched"

    def transcribe(self, audio: np.ndarray, **kwargs: object) -> list[Word]:
        if self.decoding:
            self.seen.append(list(self.delivered))
            if self.mode == "fail":
                raise RuntimeError("the model went away")
            self.inner.styles = [PassStyle(misheard=tuple(range(10)))]
        return self.inner.transcribe(audio, **kwargs)  # type: ignore[arg-type]

    def close(self) -> None:
        pass


class Marked(StreamingTranscriber):
    """The real transcriber, telling its :class:`Switched` backend when it decodes a turn."""

    backend: Switched

    def decode_turn(self) -> tuple[Word, ...] | None:
        self.backend.decoding = True
        try:
            return super().decode_turn()
        finally:
            self.backend.decoding = False


class Bridged:
    """A session and a worker stream joined as engine/server/bridge.py joins them."""

    def __init__(self, config: StreamingConfig = DEFAULT):
        self.session = make_session()
        self.delivered: list[WorkerResult] = []  # applied to the session and cleared
        self.history: list[WorkerResult] = []  # every result, in the order it was delivered
        self.backend = Switched(ScriptedBackend(TRUTH), self.history)
        self.worker = InferenceWorker(
            lambda: Marked(self.backend, config, TruthSpeech(TRUTH)),
            WorkerConfig(max_turn_seconds=0.5),
            clock=VirtualClock(),
        )
        self.worker.start(own_thread=False)
        self.stream = self.worker.open_stream(self._take)
        self.at = 0
        self.events: list[dict] = []

    def _take(self, result: WorkerResult) -> None:
        self.delivered.append(result)
        self.history.append(result)

    def append(self, seconds: float) -> None:
        self.events += append(self.session, float_to_pcm16(tone(seconds, 16000)))
        self.run()

    def commit(self) -> None:
        self.events += send(self.session, type="input_audio_buffer.commit")
        self.run()

    def run(self) -> None:
        for _ in range(10_000):
            commands = self.session.commands()
            if not commands and not self.stream.has_work:
                return
            self.stream.submit([self._ramped(c) for c in commands])
            self.worker.run_due_turn()
            for result in self.delivered:
                apply_result(self.session, result)
            self.delivered.clear()
            self.events += drain(self.session)
        raise AssertionError("the worker did not drain")

    def _ramped(self, command: Command) -> Command:
        if not isinstance(command, AudioChunk):
            return command
        samples = ramp(self.at, len(command.samples))
        self.at += len(samples)
        return AudioChunk(command.item_id, samples)

    def of_type(self, kind: str) -> list[dict]:
        return [e for e in self.events if e["type"] == kind]


def ids(text: str) -> list[tuple[str, int]]:
    return word_ids(text)


def test_completed_carries_the_whole_decode_and_the_deltas_stay_as_streamed():
    bridged = Bridged()
    bridged.append(5.5)  # the speech (0.5-3.95 s) and an endpoint: streamed and committed
    streamed = "".join(e["delta"] for e in bridged.of_type(DELTA))
    assert [i for _, i in ids(streamed)] == list(range(10))
    bridged.commit()
    (completed,) = bridged.of_type(COMPLETED)
    assert "".join(e["delta"] for e in bridged.of_type(DELTA)) == streamed  # no delta more
    assert completed["transcript"] == " ".join(f"w{i}x1" for i in range(10))
    assert bridged.events[-1] is completed


def test_the_flushs_last_words_are_delivered_before_the_item_is_decoded():
    bridged = Bridged()
    bridged.append(2.5)  # the turn ends in the middle of the speech
    bridged.commit()
    (seen,) = bridged.backend.seen  # the decode ran once, after the flush's words went out
    last = [r for r in seen if isinstance(r, WordsResult)][-1]
    assert last.committed and last.tentative == ()
    assert not [r for r in seen if isinstance(r, FlushedResult)]  # the decode answers it
    deltas = "".join(e["delta"] for e in bridged.of_type(DELTA))
    (completed,) = bridged.of_type(COMPLETED)
    assert ids(deltas) and all(text.endswith("x1") for text in completed["transcript"].split())


def test_a_decode_that_fails_leaves_the_streamed_words_as_the_transcript():
    bridged = Bridged()
    bridged.append(2.5)
    bridged.backend.mode = "fail"
    bridged.commit()
    (completed,) = bridged.of_type(COMPLETED)
    deltas = "".join(e["delta"] for e in bridged.of_type(DELTA))
    assert ids(deltas) and completed["transcript"] == deltas
    assert not bridged.of_type("error")  # the item is transcribed: its streamed words stand


def test_with_the_setting_off_completed_is_the_deltas_joined():
    bridged = Bridged(StreamingConfig(turn_decode=False))
    bridged.append(2.5)
    bridged.commit()
    (completed,) = bridged.of_type(COMPLETED)
    assert completed["transcript"] == "".join(e["delta"] for e in bridged.of_type(DELTA))
    assert bridged.backend.seen == []  # no whole decode ran
