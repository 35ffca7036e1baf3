"""The realtime transcription session as a sans-I/O state machine.

One :class:`RealtimeSession` per connection (or per local microphone session). Call order:
``start()`` (queues ``session.created``); then feed it client input (``receive_text()`` /
``receive_event()``), the worker's results (``recognizer_words()``, ``recognizer_flushed()``,
``recognizer_failed()``, ``audio_consumed()``) and ``end_input()`` when the client is gone;
after each call drain ``events_to_send()`` and ``commands()``. Close once ``wants_close``.
Client input is applied in arrival order; audio goes to the worker only as its backlog has
room, and what waits (audio, and the events after it) is held in an input queue bounded by
``SessionLimits.max_queued_bytes``. Invariants: an item's ``committed`` goes out before its
``completed`` (or ``failed``); errors never end the session; a refused ``session.update``
changes nothing; no asyncio, sockets, Qt or model code here (the VAD scorer and the model's
languages are injected).
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Collection, Sequence

import numpy as np

from desktop_rt.core_types import Word
from desktop_rt.engine.audio.codecs import SAMPLE_RATE, AudioFormat
from desktop_rt.engine.audio.vad import SpeechProbability
from desktop_rt.engine.protocol.events import (
    AudioChunk,
    ClientEvent,
    Command,
    Configure,
    ErrorEvent,
    InputAudioBufferAppend,
    InputAudioBufferClear,
    InputAudioBufferCleared,
    InputAudioBufferCommit,
    InputAudioBufferSpeechStarted,
    InputAudioBufferSpeechStopped,
    InputAudioBufferTimeoutTriggered,
    ProtocolError,
    ServerEvent,
    SessionCreated,
    SessionUpdate,
    SessionUpdated,
    new_id,
)
from desktop_rt.engine.protocol.formats import DEFAULT_FORMAT
from desktop_rt.engine.protocol.input_queue import EndOfInput, InputQueue, QueuedAudio, QueuedEntry
from desktop_rt.engine.protocol.intake import Audio, AudioIntake, Step, TurnStarted, TurnStopped
from desktop_rt.engine.protocol.languages import WHISPER_LANGUAGES
from desktop_rt.engine.protocol.limits import (
    Backlog,
    SessionLimits,
    check_append,
    check_append_size,
    check_pcm_length,
    check_queue_room,
)
from desktop_rt.engine.protocol.parsing import parse_client_event
from desktop_rt.engine.protocol.session_config import SessionConfig, SessionPatch
from desktop_rt.engine.protocol.turns import ItemLedger, Whole, Words
from desktop_rt.errors import DesktopRtError

__all__ = ["SessionStateError", "SessionLimits", "SessionState", "RealtimeSession"]

logger = logging.getLogger(__name__)

_DEFAULT_LIMITS = SessionLimits()


class SessionStateError(DesktopRtError, RuntimeError):
    """A session method was called in the wrong state (a bug in the caller, not the client)."""


class SessionState(enum.IntEnum):
    NEW = 0
    OPEN = 1
    INPUT_ENDED = 2  # final commit or end_input(): no more audio; closes once items drain


class RealtimeSession:
    """Protocol state of one transcription session; see the module docstring for call order.

    ``languages``: the codes the model transcribes; a client's tag is mapped onto them (``en-US``
    -> ``en``); one they lack, or ``translate`` unless ``translates``, is refused at update.
    ``input_format``: what appended audio is until the client names a format (OpenAI's PCM16
    at 24 kHz; the desktop window's session sends 16 kHz).
    """

    def __init__(
        self,
        *,
        model: str,
        limits: SessionLimits = _DEFAULT_LIMITS,
        vad_factory: Callable[[], SpeechProbability] | None = None,
        emit_tentative: bool = False,
        session_id: str | None = None,
        languages: Collection[str] = WHISPER_LANGUAGES,
        input_format: AudioFormat = DEFAULT_FORMAT,
        translates: bool = False,
    ):
        self.model = model
        self.limits = limits
        self.languages, self.translates = languages, translates
        self.session_id = session_id or new_id("sess")
        self.config = SessionConfig(id=self.session_id, model=model, format=input_format)
        self.emit_tentative = emit_tentative
        self._state = SessionState.NEW
        self._events: list[ServerEvent] = []
        self._commands: list[Command] = []
        self._intake = AudioIntake(input_format, vad_factory)
        self._queue = InputQueue()
        self._backlog = Backlog(limits)
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
        """The input has ended, all of it was applied and every committed item is completed."""
        return (
            self._state is SessionState.INPUT_ENDED
            and not self._queue
            and not self._items.awaiting_flush
        )

    @property
    def backlog_seconds(self) -> float:
        """Audio handed to the worker, not yet consumed."""
        return self._backlog.seconds

    @property
    def queued_bytes(self) -> int:
        """Wire audio accepted but not handed to the worker yet."""
        return self._queue.audio_bytes

    @property
    def received_seconds(self) -> float:
        """Seconds of audio the client sent so far (decoded, whatever its format)."""
        return self._intake.samples / SAMPLE_RATE

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
            self._admit(event)
        except ProtocolError as exc:
            exc.event_id = exc.event_id or event.event_id
            self._events.append(ErrorEvent.from_error(exc))
        self._drain()

    def recognizer_words(
        self,
        item_id: str,
        committed: Sequence[Word],
        tentative: Sequence[Word],
        language: str | None = None,
    ) -> None:
        """Newly committed words (sent as a delta) and the current tentative ones of an item;
        ``language``: the language the recognizer heard, when it says."""
        shown = tentative if self.emit_tentative else None
        logprobs = self.config.logprobs
        self._events += self._items.words(item_id, committed, shown, language, logprobs)

    def recognizer_flushed(
        self, item_id: str, committed: Words, language: str | None = None, final: Whole = None
    ) -> None:
        """The answer to ``Flush(item_id)``; it completes (``final``: decoded whole, its text)."""
        language, logprobs = language or self.config.language, self.config.logprobs
        self._events += self._items.flushed(item_id, committed, language, logprobs, final)

    def recognizer_failed(self, message: str) -> None:
        """Report a recognizer error; the item being transcribed ends as ``failed``. The
        worker still answers every Flush (with no words if need be), so items end and
        ``wants_close`` still comes."""
        text = f"transcription failed: {message}"
        item = self._items.at_worker()
        if item is not None and item.failure is None:
            item.failure = text
        self._events.append(ErrorEvent(text, "recognizer_failed", error_type="server_error"))

    def audio_consumed(self, seconds: float) -> None:
        """The worker took ``seconds`` of handed audio off its queue (or dropped it on Clear)."""
        self._backlog.consumed(seconds)
        self._drain()

    def end_input(self) -> None:
        """The client is gone: what it sent is applied, then the open item is committed as
        final. Idempotent."""
        if self._state is SessionState.OPEN:
            self.state = SessionState.INPUT_ENDED
            self._queue.push(EndOfInput())
            self._drain()

    # --- outputs -------------------------------------------------------------------------

    def events_to_send(self) -> list[ServerEvent]:
        events, self._events = self._events, []
        return events

    def commands(self) -> list[Command]:
        commands, self._commands = self._commands, []
        return commands

    # --- admitting input -----------------------------------------------------------------

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

    def _admit(self, event: ClientEvent) -> None:
        """Check what can be checked on arrival, then queue the event (applied by ``_drain``)."""
        if isinstance(event, InputAudioBufferAppend):
            self._require_input("input_audio_buffer.append")
            if not event.audio:
                return
            if not self.limits.queues:  # nothing waits: what does not fit now is dropped
                check_append(event.audio, self.config.format, self.limits, self._backlog.seconds)
                if self._intake.gate is None:
                    self._items.open.appended = True
                self._take(self._intake.decode(event.audio))
                return
            check_append_size(event.audio, self.limits)
            check_queue_room(len(event.audio), self._queue.audio_bytes, self.limits)
            self._queue.push_audio(event.audio, event.event_id)
        elif isinstance(event, InputAudioBufferCommit):
            self._require_input("input_audio_buffer.commit")
            if event.final:
                self.state = SessionState.INPUT_ENDED
            self._queue.push(event)
        elif isinstance(event, InputAudioBufferClear):
            self._require_input("input_audio_buffer.clear")
            self._queue.drop_trailing_audio()  # it would be cleared: never hand it over
            self._queue.push(event)
        elif isinstance(event, SessionUpdate):
            self._queue.push(event)
        else:
            raise TypeError(f"not a client event: {event!r}")

    def _drain(self) -> None:
        """Apply queued input in order while the worker has room for its audio."""
        self._queue.drain(self._hand_queued, self._apply)

    def _hand_queued(self, entry: QueuedAudio) -> bool:
        """Decode what fits of the head append; False when it must wait for the worker."""
        if not entry.checked:
            try:
                check_pcm_length(entry.raw, self.config.format)
            except ProtocolError as exc:
                self._queue.pop()
                exc.event_id = entry.event_id
                self._events.append(ErrorEvent.from_error(exc))
                return True
            entry.checked = True
            if self._intake.gate is None:
                self._items.open.appended = True
        size = self._backlog.slice_bytes(self.config.format, self._intake.padding_ms)
        if size <= 0:
            return False
        self._take(self._intake.decode(self._queue.take_audio(size)))
        return True

    def _apply(self, entry: QueuedEntry) -> None:
        try:
            if isinstance(entry, SessionUpdate):
                self._update(entry.patch)
            elif isinstance(entry, InputAudioBufferCommit) and not entry.final:
                self._commit()
            elif isinstance(entry, InputAudioBufferClear):
                self._clear()
            else:  # a final commit, or the end of the input
                self._end()
        except ProtocolError as exc:
            exc.event_id = exc.event_id or entry.event_id
            self._events.append(ErrorEvent.from_error(exc))

    # --- applying input ------------------------------------------------------------------

    def _update(self, patch: SessionPatch) -> None:
        old = self.config
        new = old.apply(patch.resolved(self.languages, self.translates))
        # The steps that can fail come first, so a failed update changes nothing.
        scorer = self._intake.scorer_for(new.turn_detection)
        if new.format != old.format:  # the old resampler's tail belongs to the open item
            self._take(self._intake.feed(self._intake.restart_decoder(new.format)))
        self._hand(self._intake.set_turns(new.turn_detection, scorer))
        options = new.turn_options
        self._intake.idle_timeout_ms = options.idle_timeout_ms if options is not None else None
        if new.recognizer_settings != old.recognizer_settings:
            self._commands.append(Configure(new.language, new.model_prompt, new.respellings))
        self.config = new
        self._events.append(SessionUpdated(new))

    def _take(self, steps: list[Step]) -> None:
        """What the intake made of some audio: audio for the open item, turns, timeouts."""
        open_id = self._items.open.id
        for step in steps:
            if isinstance(step, Audio):
                self._hand(step.samples)
                continue
            if isinstance(step, TurnStarted):
                self._events.append(InputAudioBufferSpeechStarted(open_id, _ms(step.at)))
                continue
            if isinstance(step, TurnStopped):
                self._events.append(InputAudioBufferSpeechStopped(open_id, _ms(step.at)))
            else:  # no speech for idle_timeout_ms: the (silent) item is committed
                self._events.append(
                    InputAudioBufferTimeoutTriggered(open_id, _ms(step.start), _ms(step.end))
                )
            self._commit_item(final=False)
            open_id = self._items.open.id

    def _hand(self, samples: np.ndarray) -> None:
        """Audio for the open item, to the worker within the backlog."""
        samples, error = self._backlog.fit(samples)
        if error is not None:
            self._events.append(error)
        if len(samples):
            self._items.open.samples += len(samples)
            self._commands.append(AudioChunk(self._items.open.id, samples))

    def _commit(self) -> None:
        if not self._items.open.has_audio:
            vad = (
                " (server_vad is on: audio outside speech is not kept)" if self._intake.gate else ""
            )
            raise ProtocolError(
                f"input_audio_buffer.commit: the buffer is empty{vad}; append audio before committing",
                code="input_audio_buffer_commit_empty",
            )
        self._drain_decoder()
        if self._items.open.has_audio:  # else the server VAD committed it while draining
            self._commit_item(final=False)

    def _drain_decoder(self) -> None:
        """The resampler's held-back tail belongs to the item being committed; restart it."""
        self._take(self._intake.feed(self._intake.restart_decoder(self.config.format)))

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
        self._intake.reset()
        clear = self._items.clear()
        if clear is not None:
            self._commands.append(clear)
        self._events.append(InputAudioBufferCleared())


def _ms(stream_sample: int) -> int:
    """A turn boundary (a stream sample) in milliseconds."""
    return round(stream_sample * 1000 / SAMPLE_RATE)
