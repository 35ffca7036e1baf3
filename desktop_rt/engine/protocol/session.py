"""The realtime transcription session as a sans-I/O state machine.

One :class:`RealtimeSession` per connection (or per local microphone session). Call order:
``start()`` (queues ``session.created``); then feed it client input (``receive_text()`` /
``receive_event()``), the worker's results (``recognizer_words()``, ``recognizer_flushed()``,
``recognizer_failed()``, ``audio_consumed()``) and ``end_input()`` when the client is gone;
after each call drain ``events_to_send()`` and ``commands()``. Close once ``wants_close``.
Invariants: an item's ``committed`` goes out before its ``completed``; errors never end the
session; no asyncio, sockets, Qt or model code here (the VAD scorer is injected).
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Sequence
from typing import cast

import numpy as np

from desktop_rt.core_types import Word
from desktop_rt.engine.audio.codecs import SAMPLE_RATE, WireDecoder
from desktop_rt.engine.audio.speech_gate import SpeechGate
from desktop_rt.engine.audio.vad import SpeechProbability
from desktop_rt.engine.protocol.events import (
    AudioChunk,
    Clear,
    ClientEvent,
    Command,
    Configure,
    ErrorEvent,
    Flush,
    InputAudioBufferAppend,
    InputAudioBufferClear,
    InputAudioBufferCleared,
    InputAudioBufferCommit,
    InputAudioBufferSpeechStarted,
    InputAudioBufferSpeechStopped,
    ProtocolError,
    ServerEvent,
    SessionCreated,
    SessionUpdate,
    SessionUpdated,
    TranscriptionDelta,
    TranscriptionTentative,
    new_id,
)
from desktop_rt.engine.protocol.limits import SessionLimits, backlog_room, check_append
from desktop_rt.engine.protocol.parsing import parse_client_event
from desktop_rt.engine.protocol.session_config import SessionConfig, SessionPatch
from desktop_rt.engine.protocol.turns import Item, ItemLedger
from desktop_rt.errors import DesktopRtError

__all__ = [
    "SessionStateError",
    "SessionLimits",
    "SessionState",
    "RealtimeSession",
    "AudioChunk",
    "Flush",
    "Clear",
    "Configure",
    "Command",
]

logger = logging.getLogger(__name__)

_DEFAULT_LIMITS = SessionLimits()


class SessionStateError(DesktopRtError, RuntimeError):
    """A session method was called in the wrong state (a bug in the caller, not the client)."""


class SessionState(enum.IntEnum):
    NEW = 0
    OPEN = 1
    INPUT_ENDED = 2  # final commit or end_input(): no more audio; closes once items drain


class RealtimeSession:
    """Protocol state of one transcription session; see the module docstring for call order."""

    def __init__(
        self,
        *,
        model: str,
        limits: SessionLimits = _DEFAULT_LIMITS,
        vad_factory: Callable[[], SpeechProbability] | None = None,
        emit_tentative: bool = False,
        session_id: str | None = None,
    ):
        self.model = model
        self.limits = limits
        self.session_id = session_id or new_id("sess")
        self.config = SessionConfig(id=self.session_id, model=model)
        self.emit_tentative = emit_tentative
        self._vad_factory = vad_factory
        self._scorer: SpeechProbability | None = None
        self._gate: SpeechGate | None = None
        self._state = SessionState.NEW
        self._events: list[ServerEvent] = []
        self._commands: list[Command] = []
        self._decoder = WireDecoder(self.config.format)
        self._stream_samples = 0  # 16 kHz samples decoded so far: the session's audio clock
        self._backlog = 0.0  # seconds handed to the worker, not yet consumed
        self._items = ItemLedger()

    # --- state ---------------------------------------------------------------------------

    @property
    def state(self) -> SessionState:
        return self._state

    @state.setter
    def state(self, value: SessionState) -> None:
        logger.debug("session %s: %s -> %s", self.session_id, self._state.name, value.name)
        self._state = value

    @property
    def wants_close(self) -> bool:
        """The input has ended and every committed item is completed."""
        return self._state is SessionState.INPUT_ENDED and not self._items.awaiting_flush

    @property
    def backlog_seconds(self) -> float:
        return self._backlog

    @property
    def received_seconds(self) -> float:
        """Seconds of audio the client sent so far (decoded, whatever its format)."""
        return self._stream_samples / SAMPLE_RATE

    # --- inputs --------------------------------------------------------------------------

    def start(self) -> None:
        if self._state is not SessionState.NEW:
            raise SessionStateError("start() was already called for this session")
        self.state = SessionState.OPEN
        self._events.append(SessionCreated(self.config))

    def receive_text(self, message: str | bytes) -> None:
        """One websocket frame from the client. Bad input becomes an ``error`` event."""
        self._require_started()
        try:
            event = parse_client_event(
                message,
                audio_format=self.config.format,
                max_append_bytes=self.limits.max_append_bytes,
            )
        except ProtocolError as exc:
            self._events.append(ErrorEvent.from_error(exc))
            return
        self.receive_event(event)

    def receive_event(self, event: ClientEvent) -> None:
        self._require_started()
        try:
            if isinstance(event, SessionUpdate):
                self._update(event.patch)
            elif isinstance(event, InputAudioBufferAppend):
                self._append(event.audio)
            elif isinstance(event, InputAudioBufferCommit):
                self._commit(event.final)
            elif isinstance(event, InputAudioBufferClear):
                self._clear()
            else:
                raise TypeError(f"not a client event: {event!r}")
        except ProtocolError as exc:
            exc.event_id = exc.event_id or event.event_id
            self._events.append(ErrorEvent.from_error(exc))

    def recognizer_words(
        self, item_id: str, committed: Sequence[Word], tentative: Sequence[Word]
    ) -> None:
        """Newly committed words (sent as a delta) and the current tentative ones of an item."""
        item = self._items.find(item_id)
        if item is None:
            return  # stale: the item is completed or cleared
        self._delta(item, committed)
        if self.emit_tentative and item.set_tentative(tentative):
            self._events.append(TranscriptionTentative(item.id, item.tentative))

    def recognizer_flushed(self, item_id: str, committed: Sequence[Word]) -> None:
        """The answer to ``Flush(item_id)``: the item's last words; it completes."""
        item = self._items.complete(item_id)
        if item is None:
            return
        self._delta(item, committed)
        self._events.append(item.completed())

    def recognizer_failed(self, message: str) -> None:
        """Report a recognizer error. The worker still answers every Flush (with no words if
        need be), so items complete and ``wants_close`` still comes."""
        self._events.append(
            ErrorEvent(
                f"transcription failed: {message}", "recognizer_failed", error_type="server_error"
            )
        )

    def audio_consumed(self, seconds: float) -> None:
        """The worker took ``seconds`` of handed audio off its queue (or dropped it on Clear)."""
        self._backlog = max(0.0, self._backlog - max(0.0, float(seconds)))

    def end_input(self) -> None:
        """The client is gone: commit what the open item holds as final. Idempotent."""
        if self._state is not SessionState.INPUT_ENDED:
            self._end()

    # --- outputs -------------------------------------------------------------------------

    def events_to_send(self) -> list[ServerEvent]:
        events, self._events = self._events, []
        return events

    def commands(self) -> list[Command]:
        commands, self._commands = self._commands, []
        return commands

    # --- handlers ------------------------------------------------------------------------

    def _require_started(self) -> None:
        if self._state is SessionState.NEW:
            raise SessionStateError("call start() before feeding the session")

    def _require_input(self, what: str) -> None:
        if self._state is SessionState.INPUT_ENDED:
            raise ProtocolError(
                f'{what}: the input has ended (after a commit with "final": true); open a new session '
                "to send more audio",
                code="input_ended",
            )

    def _update(self, patch: SessionPatch) -> None:
        old = self.config
        new = old.apply(patch)
        # The only step that can fail comes first, so a failed update changes nothing.
        scorer = (
            self._vad_scorer() if new.turn_detection is not None and self._gate is None else None
        )
        if new.format != old.format:
            if self._state is not SessionState.INPUT_ENDED:
                self._take_audio(self._decoder.flush())
            self._decoder = WireDecoder(new.format)  # resampler state belongs to one format
        if new.turn_detection is None:
            if self._gate is not None:
                self._hand(self._gate.take_held())  # without VAD, the open item holds all audio
            self._gate = None
        elif scorer is not None:
            self._gate = SpeechGate(scorer, new.turn_detection, self._stream_samples)
        elif self._gate is not None:
            self._gate.settings = new.turn_detection
        if (new.language, new.prompt) != (old.language, old.prompt):
            self._commands.append(Configure(new.language, new.prompt))
        self.config = new
        self._events.append(SessionUpdated(new))

    def _vad_scorer(self) -> SpeechProbability:
        if self._scorer is None:
            try:
                if self._vad_factory is not None:
                    self._scorer = self._vad_factory()
                else:
                    from desktop_rt.engine.audio.vad import SileroProbability

                    self._scorer = SileroProbability()
            except Exception as exc:  # any failure to load the VAD is reported
                raise ProtocolError(
                    f"server_vad is unavailable on this server ({exc}); set turn_detection to null and commit "
                    "manually",
                    code="vad_unavailable",
                    param="session.audio.input.turn_detection",
                    type="server_error",
                ) from None
        else:
            self._scorer.reset()
        return self._scorer

    def _append(self, raw: bytes) -> None:
        self._require_input("input_audio_buffer.append")
        if not raw:
            return
        check_append(raw, self.config.format, self.limits, self._backlog)
        if self._gate is None:
            self._items.open.appended = True
        self._take_audio(self._decoder.decode(raw))

    def _take_audio(self, samples: np.ndarray) -> None:
        """Decoded 16 kHz audio: to the open item, or through the server VAD."""
        self._stream_samples += len(samples)
        if self._gate is None:
            self._hand(samples)
            return
        for kind, value in self._gate.process(samples):
            if kind == "audio":
                self._hand(cast(np.ndarray, value))
            elif kind == "started":
                self._events.append(InputAudioBufferSpeechStarted(self._items.open.id, _ms(value)))
            else:
                self._events.append(InputAudioBufferSpeechStopped(self._items.open.id, _ms(value)))
                self._commit_item(final=False)

    def _hand(self, samples: np.ndarray) -> None:
        # The append check judges audio by its length before resampling; the resampler releases
        # output in blocks and server_vad releases held padding at a turn's start, so the exact
        # bound is enforced here, on what really goes to the worker.
        room = backlog_room(self.limits, self._backlog)
        if len(samples) > room:
            self._events.append(
                ErrorEvent(
                    f"audio dropped: {(len(samples) - room) / SAMPLE_RATE:.3f} s did not fit in the "
                    f"{self.limits.max_backlog_seconds:g} s backlog; send audio no faster than real time",
                    "audio_backlog_full",
                    "audio",
                )
            )
            samples = samples[:room]
        if len(samples):
            self._items.open.samples += len(samples)
            self._backlog += len(samples) / SAMPLE_RATE
            self._commands.append(AudioChunk(self._items.open.id, samples))

    def _commit(self, final: bool) -> None:
        self._require_input("input_audio_buffer.commit")
        if final:
            self._end()
            return
        if not self._items.open.has_audio:
            vad = " (server_vad is on: audio outside speech is not kept)" if self._gate else ""
            raise ProtocolError(
                f"input_audio_buffer.commit: the buffer is empty{vad}; append audio before committing",
                code="input_audio_buffer_commit_empty",
            )
        self._drain_decoder()
        if self._items.open.has_audio:  # else the server VAD committed it while draining
            self._commit_item(final=False)

    def _drain_decoder(self) -> None:
        """The resampler's held-back tail belongs to the item being committed; restart it."""
        self._take_audio(self._decoder.flush())
        self._decoder = WireDecoder(self.config.format)

    def _commit_item(self, final: bool) -> None:
        committed, flush = self._items.commit(final)
        self._events.append(committed)
        self._commands.append(flush)

    def _end(self) -> None:
        """Input ends: the decoder's tail goes to the open item, committed as final if not empty."""
        self._drain_decoder()
        if self._items.open.has_audio:
            self._commit_item(final=True)
        self.state = SessionState.INPUT_ENDED

    def _clear(self) -> None:
        """Drop the open item's audio. Deltas already sent for it stay sent; it never completes."""
        self._require_input("input_audio_buffer.clear")
        if self._gate is not None:
            self._gate.reset()
        self._decoder = WireDecoder(self.config.format)
        clear = self._items.clear()
        if clear is not None:
            self._commands.append(clear)
        self._events.append(InputAudioBufferCleared())

    def _delta(self, item: Item, words: Sequence[Word]) -> None:
        delta = item.add_words(words)
        if delta:
            self._events.append(TranscriptionDelta(item.id, delta))


def _ms(stream_sample: object) -> int:
    """A gate's turn boundary (a stream sample) in milliseconds."""
    return round(int(cast(int, stream_sample)) * 1000 / SAMPLE_RATE)
