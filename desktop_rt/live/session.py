"""The app's own recording session, without Qt: audio source -> capture feed -> local session.

:class:`LiveSettings` is what a session follows (language; push-to-talk, or hands-free with its
turn detection) and renders the typed ``session.update`` it sends. :class:`LiveSession` wires an
:class:`~desktop_rt.engine.audio.sources.AudioSource`, a :class:`CaptureFeed`, a local server
session and a :class:`TranscriptRecorder`. Call order: construct, :meth:`~LiveSession.start`;
then ``talk_down``/``talk_up``, :meth:`~LiveSession.apply` and :meth:`~LiveSession.learn` (a
caption line the user corrected: its words prompt the model from then on) from the UI thread;
finally
:meth:`~LiveSession.stop`, which blocks (run it on a helper thread). ``publish`` gets every value
for the window (levels, device status, caption updates); ``on_closed(uid)`` runs once the server
closed the session, after its last transcript was saved.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop_rt.config import HANDS_FREE, PUSH_TO_TALK, Settings
from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.audio.codecs import PCM16, AudioFormat
from desktop_rt.engine.audio.sources import AudioSource
from desktop_rt.engine.audio.vad import TurnDetectorSettings
from desktop_rt.engine.protocol.events import ServerEvent, SessionUpdate
from desktop_rt.engine.protocol.session_config import LOGPROBS, SessionPatch
from desktop_rt.history.writer import StoreWriter
from desktop_rt.live.capture import CaptureFeed
from desktop_rt.live.taught_words import TaughtWords
from desktop_rt.live.transcript_recorder import TranscriptRecorder

if TYPE_CHECKING:
    from desktop_rt.engine.server.bridge import LocalSession
    from desktop_rt.engine.server.server import RealtimeServer

__all__ = ["LiveSettings", "LiveSession"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LiveSettings:
    """``language``: ISO code or None (detect); ``turn_detection``: None for push-to-talk;
    ``translate``: an English line beneath the captions (sent as its own update, so a model
    that refuses it changes nothing else)."""

    language: str | None = None
    turn_detection: TurnDetectorSettings | None = None
    translate: bool = False

    @classmethod
    def from_settings(cls, settings: Settings) -> LiveSettings:
        hands_free = settings.audio.mode == HANDS_FREE
        transcription = settings.transcription
        vad = settings.vad if hands_free else None
        return cls(transcription.language, vad, transcription.translate)

    @property
    def hands_free(self) -> bool:
        return self.turn_detection is not None

    @property
    def mode(self) -> str:
        return HANDS_FREE if self.hands_free else PUSH_TO_TALK

    def session_update(self) -> SessionUpdate:
        """The ``session.update`` for these settings; the feed sends PCM16 at ``SAMPLE_RATE``.
        Words come with their probabilities (low-confidence shading, the history)."""
        return SessionUpdate(
            SessionPatch(
                format=AudioFormat(PCM16, SAMPLE_RATE),
                language=self.language or None,
                turn_detection=self.turn_detection,
                include=(LOGPROBS,),
            )
        )

    def translation_update(self) -> SessionUpdate:
        """The ``session.update`` that turns live translation on or off."""
        return SessionUpdate(SessionPatch(translate=self.translate))


class LiveSession:
    """One recording session of the window. See the module docstring."""

    def __init__(
        self,
        server: RealtimeServer,
        source: AudioSource,
        settings: LiveSettings,
        *,
        writer: StoreWriter | None,
        model: str,
        publish: Callable[[object], None],
        on_closed: Callable[[str], None],
    ):
        self.uid = "rec_" + secrets.token_hex(8)
        self.settings = settings
        self._server = server
        self._publish = publish
        self._on_closed = on_closed
        self._local: LocalSession | None = None
        self.taught = TaughtWords()
        self.feed = CaptureFeed(
            source,
            None,
            on_status=publish,
            on_level=publish,
            on_turn=lambda mark: self.recorder.turn_mark(mark),
            hands_free=settings.hands_free,
        )
        self.recorder = TranscriptRecorder(
            self.uid,
            writer,
            model=model,
            language=settings.language,
            mode=settings.mode,
            stream_to_clock=self.feed.clock_at,
        )

    def start(self) -> None:
        """Open the server session, configure it, and start the microphone."""
        local = self._server.open_local_session(
            self._on_event, emit_tentative=True, on_closed=self._closed
        )
        local.send(self.settings.session_update())
        if self.settings.translate:
            local.send(self.settings.translation_update())
        if self.taught.words:
            local.send(self.taught.session_update())
        self.feed.set_sink(local, on_attached=self.recorder.set_origin)
        self.feed.start()
        self._local = local

    def talk_down(self) -> None:
        self.feed.talk_down()

    def talk_up(self) -> None:
        self.feed.talk_up()

    def apply(self, settings: LiveSettings) -> None:
        """Follow new settings: the session is updated, the feed switches mode if need be."""
        old, self.settings = self.settings, settings
        if settings == old or self._local is None:
            return
        self._local.send(settings.session_update())
        if settings.translate != old.translate:
            self._local.send(settings.translation_update())
        if settings.hands_free != old.hands_free:
            self.feed.set_hands_free(settings.hands_free)

    def learn(self, recognised: str, corrected: str) -> tuple[str, ...]:
        """The user corrected a caption line: the words they changed become the session's
        keywords for the rest of it (:class:`TaughtWords`). Never blocks: the update is queued
        to the server, whose inference thread takes the new prompt before its next pass.
        Returns the words taught so far."""
        if self.taught.teach(recognised, corrected) and self._local is not None:
            self._local.send(self.taught.session_update())
        return self.taught.words

    def stop(self) -> None:
        """Stop the microphone and end the input (blocks while the feed drains)."""
        self.feed.stop()  # commits a turn still held
        if self._local is not None:
            self._local.end_input()

    def save_unfinished(self) -> int:
        """Save the words heard but not yet committed (:meth:`TranscriptRecorder.save_unfinished`)."""
        return self.recorder.save_unfinished()

    @property
    def lag_seconds(self) -> float:
        """How far its captions are behind the audio: seconds waiting for the recognizer."""
        return self._local.lag_seconds if self._local is not None else 0.0

    def _on_event(self, event: ServerEvent) -> None:
        for update in self.recorder.handle(event):
            self._publish(update)

    def _closed(self) -> None:
        self.recorder.end()
        self._on_closed(self.uid)
