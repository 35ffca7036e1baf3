"""The thin edge between one :class:`RealtimeSession` and the inference worker.

A :class:`SessionBridge` lives on the server's event loop. It feeds the session (client
frames, the end of input), forwards the commands the session drains to its
:class:`~desktop_rt.engine.asr.worker.WorkerStream`, brings worker results back onto the loop and
hands the events the session drains to a sink: the websocket writer, or the desktop window's
callback through :class:`LocalSession`. Both paths run the same session code. While the session
has ``translate`` on, the same commands also go to a second worker stream that translates to
English (made by ``translator``, see :func:`english_translator`); its results become the
events of :mod:`~desktop_rt.engine.protocol.translation`, and the bridge closes only once both
streams answered their flushes.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import json
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import numpy as np

from desktop_rt.engine.asr.streaming import StreamingTranscriber
from desktop_rt.engine.asr.translation import EnglishTranslation
from desktop_rt.engine.asr.worker import (
    ConsumedResult,
    FailedResult,
    FlushedResult,
    InferenceWorker,
    Transcriber,
    TranscriberFactory,
    WordsResult,
    WorkerResult,
    WorkerStoppedError,
    WorkerStream,
)
from desktop_rt.engine.audio.codecs import PCM16, SAMPLE_RATE, AudioFormat, float_to_pcm16
from desktop_rt.engine.models.runtimes import InProcessRuntime
from desktop_rt.engine.protocol.events import (
    ClientEvent,
    Command,
    Configure,
    ErrorEvent,
    InputAudioBufferAppend,
    InputAudioBufferClear,
    InputAudioBufferCommit,
    ServerEvent,
)
from desktop_rt.engine.protocol.session import RealtimeSession
from desktop_rt.engine.protocol.translation import TranslationLedger

__all__ = [
    "EventSink",
    "SessionBridge",
    "LocalSession",
    "LOCAL_FORMAT",
    "apply_result",
    "english_translator",
]

EventSink = Callable[[Sequence[ServerEvent]], None]
LOCAL_FORMAT = AudioFormat(PCM16, SAMPLE_RATE)
"""The input of a :class:`LocalSession`'s session until an update names another:
:meth:`LocalSession.append` sends PCM16 at 16 kHz."""


class SessionBridge:
    """Moves data between one session, its worker stream and an event sink, on one loop.

    Every method except the worker callback must run on ``loop``'s thread. ``on_close`` runs
    once the session asked to close (a final commit drained) after its last events were handed
    to the sink, or when the bridge is closed. No reference cycle holds a bridge: the worker
    stream calls back through a weak reference and ``close`` drops ``on_close``, so a closed
    session and its native VAD contexts are freed at once, not at the next full collection.
    """

    def __init__(
        self,
        session: RealtimeSession,
        worker: InferenceWorker,
        loop: asyncio.AbstractEventLoop,
        sink: EventSink,
        on_close: Callable[[], None] | None = None,
        translator: TranscriberFactory | None = None,
        transcriber: Transcriber | None = None,
    ):
        self.session = session
        self._loop = loop
        self._sink = sink
        self._on_close = on_close
        self.closed = False
        self._worker = worker
        self._translator = translator
        self.translation: WorkerStream | None = None
        """The English stream, while the session has ``translate`` on."""
        self._ledger = TranslationLedger(session.emit_tentative)
        self.stream = worker.open_stream(
            _weak_callback(self, SessionBridge._from_worker), transcriber
        )
        session.start()
        self.pump()

    # ---- inputs (loop thread) --------------------------------------------------------------

    def receive(self, message: str | bytes) -> None:
        """A client frame."""
        if self.closed:
            return
        self.session.receive_text(message)
        self.pump()

    def receive_event(self, event: ClientEvent) -> None:
        """A client event already parsed (the in-process client)."""
        if self.closed:
            return
        self.session.receive_event(event)
        self.pump()

    def end_input(self) -> None:
        """The client will send nothing more (socket closed, or the local user stopped)."""
        if self.closed:
            return
        self.session.end_input()
        self.pump()

    def close(self) -> None:
        """Leave now: the worker stream is released and no more events reach the sink."""
        if self.closed:
            return
        self.closed = True
        self.stream.close()
        if self.translation is not None:
            self.translation.close()
        on_close, self._on_close = self._on_close, None  # it may hold this bridge
        if on_close is not None:
            on_close()

    # ---- worker results --------------------------------------------------------------------

    def _from_worker(self, result: WorkerResult) -> None:
        """Worker thread: hop onto the loop."""
        with contextlib.suppress(RuntimeError):  # the loop is closed: the server is stopping
            self._loop.call_soon_threadsafe(self._apply, result)

    def _apply(self, result: WorkerResult) -> None:
        if self.closed:
            return
        apply_result(self.session, result)
        self.pump()

    def _from_translation(self, result: WorkerResult) -> None:
        """Worker thread: the English stream's result, onto the loop."""
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._apply_translation, result)

    def _apply_translation(self, result: WorkerResult) -> None:
        if self.closed:
            return
        ledger = self._ledger
        events: list[ServerEvent] = []
        if isinstance(result, WordsResult):
            events = ledger.words(result.item_id, result.committed, result.tentative)
        elif isinstance(result, FlushedResult):
            events = ledger.flushed(result.item_id, result.committed)
        elif isinstance(result, FailedResult):
            message = f"translation failed: {result.message}"
            events = [ErrorEvent(message, "translation_failed", error_type="server_error")]
        if events:
            self._sink(events)
        self.pump()

    # ---- outputs ---------------------------------------------------------------------------

    def pump(self) -> None:
        """Send drained commands to the worker and drained events to the sink."""
        if self.closed:
            return
        commands = self.session.commands()
        self._follow_translate()
        if commands:
            self.stream.submit(commands)
            if self.translation is not None:
                self._ledger.sent(commands)
                self.translation.submit(commands)
        events = self.session.events_to_send()
        if events:
            self._sink(events)
        if self.session.wants_close and not self._ledger.awaiting_flush:
            self.close()

    def _follow_translate(self) -> None:
        """Open the English stream when the session turned ``translate`` on; close it when off."""
        config = self.session.config
        if config.translate and self.translation is None and self._translator is not None:
            callback = _weak_callback(self, SessionBridge._from_translation)
            try:
                self.translation = self._worker.open_stream(callback, self._translator())
            except WorkerStoppedError:  # the model is going away: the session is revoked next
                return
            configure: list[Command] = [Configure(config.language, config.model_prompt)]
            self.translation.submit(configure)
        elif not config.translate and self.translation is not None:
            self.translation.close()
            self.translation = None
            self._ledger = TranslationLedger(self.session.emit_tentative)


def apply_result(session: RealtimeSession, result: WorkerResult) -> None:
    """Hand one of the inference worker's results to the session it belongs to."""
    if isinstance(result, WordsResult):
        session.recognizer_words(result.item_id, result.committed, result.tentative)
    elif isinstance(result, FlushedResult):
        session.recognizer_flushed(result.item_id, result.committed, final=result.final)
    elif isinstance(result, ConsumedResult):
        session.audio_consumed(result.seconds)
    elif isinstance(result, FailedResult):
        session.recognizer_failed(result.message)


def english_translator(runtime: object) -> TranscriberFactory | None:
    """English streams over ``runtime``'s model with its streaming settings; None when the
    model cannot translate (or does not run in this process)."""
    if not isinstance(runtime, InProcessRuntime):
        return None
    backend = runtime.backend
    if backend is None or not backend.traits.can_translate:
        return None
    english = EnglishTranslation(backend)
    config = dataclasses.replace(runtime.streaming, turn_decode=False)  # its deltas are its text
    return lambda: StreamingTranscriber(english, config)


def _weak_callback(
    bridge: SessionBridge, method: Callable[[SessionBridge, WorkerResult], None]
) -> Callable[[WorkerResult], None]:
    """``method`` of ``bridge`` without the stream holding the bridge."""
    ref = weakref.ref(bridge)

    def deliver(result: WorkerResult) -> None:
        alive = ref()
        if alive is not None:
            method(alive, result)

    return deliver


class LocalSession:
    """An in-process client of the server for the desktop window (issue 4).

    Methods may be called from any thread; they hop onto the server loop. ``on_event`` receives
    each server event object on the server thread, in order; ``on_closed`` (optional) runs
    there once the session ended (after the final transcript, or after :meth:`close`).

    ``make_bridge`` may return the bridge or an awaitable of it (the model is loading); calls
    made meanwhile are kept and applied in order once it exists. An awaitable that gives None
    (the model could not be had) drops them.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        make_bridge: Callable[[LocalSession], SessionBridge | Awaitable[SessionBridge | None]],
    ):
        self._loop = loop
        self._bridge: SessionBridge | None = None
        self._opening = True
        self._queued: list[Callable[[SessionBridge], None]] = []
        self._make_bridge = make_bridge
        self._loop.call_soon_threadsafe(self._open)

    def _open(self) -> None:
        made = self._make_bridge(self)
        if inspect.isawaitable(made):
            self._loop.create_task(self._await_bridge(made))
        else:
            self._opened(made)

    async def _await_bridge(self, made: Awaitable[SessionBridge | None]) -> None:
        bridge = None
        try:
            bridge = await made
        finally:
            self._opened(bridge)

    def _opened(self, bridge: SessionBridge | None) -> None:
        self._bridge, self._opening = bridge, False
        queued, self._queued = self._queued, []
        if bridge is not None:
            for action in queued:
                action(bridge)

    def _send(self, event: ClientEvent) -> None:
        self._call(lambda bridge: bridge.receive_event(event))

    def _call(self, action: Callable[[SessionBridge], None]) -> None:
        def run() -> None:
            if self._bridge is not None:
                action(self._bridge)
            elif self._opening:
                self._queued.append(action)

        with contextlib.suppress(RuntimeError):  # the server stopped
            self._loop.call_soon_threadsafe(run)

    def update(self, session: dict[str, Any]) -> None:
        """A ``session.update`` with this ``session`` object (language, prompt, turn detection).

        Keep the input format at the local session's default (:data:`LOCAL_FORMAT`, PCM16 at
        16 kHz, not a websocket client's 24 kHz): :meth:`append` sends that.
        """
        text = json.dumps({"type": "session.update", "session": session})
        self._call(lambda bridge: bridge.receive(text))

    def send(self, event: ClientEvent) -> None:
        """A client event already built (the app's ``SessionUpdate``), in order with the rest."""
        self._send(event)

    def append(self, samples16k: np.ndarray) -> None:
        """Float32 mono 16 kHz samples, e.g. one microphone block (copied before returning)."""
        self._send(InputAudioBufferAppend(float_to_pcm16(samples16k)))

    def commit(self, final: bool = False) -> None:
        """End the current item (push-to-talk released); ``final`` ends the session after it."""
        self._send(InputAudioBufferCommit(final))

    def clear(self) -> None:
        self._send(InputAudioBufferClear())

    def end_input(self) -> None:
        """No more audio: the last item completes, then the session closes."""
        self._call(lambda bridge: bridge.end_input())

    def close(self) -> None:
        """Abandon the session now; its worker stream is released."""
        self._call(lambda bridge: bridge.close())

    @property
    def lag_seconds(self) -> float:
        """Seconds of its audio waiting for the recognizer (any thread; 0 before it opened)."""
        bridge = self._bridge
        return bridge.stream.lag_seconds if bridge is not None else 0.0
