"""Meeting mode: the microphone ("You") and system audio ("Others") captioned at once.

:class:`MeetingSession` has :class:`~desktop_rt.live.session.LiveSession`'s API (``uid``,
``start``, ``talk_down``/``talk_up``, ``apply``, ``learn``, ``stop``) and runs two streams, each a
:class:`~desktop_rt.live.capture.CaptureFeed` into a local server session of its own with a
:class:`~desktop_rt.live.transcript_recorder.TranscriptRecorder` labelled with its speaker; both
recorders write the same history session, so its turns carry "You" or "Others". The microphone
follows the settings' mode; system audio is always hands-free (the others press no key). The
microphone's events pass an :class:`~desktop_rt.live.echo_dedup.EchoDeduplicator` fed the system
stream's words, so the speakers' sound leaking into the microphone is not captioned twice.
Words the user taught by correcting a line (``learn``) prompt both streams: a name one side says,
the other side says too.
``on_closed(uid)`` runs once both streams closed and every word was saved.
:func:`open_live_session` makes the session the settings ask for, meeting mode or not.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from desktop_rt.config import MEETING, Settings
from desktop_rt.engine.audio.sources import AudioSource
from desktop_rt.engine.audio.vad import TurnDetectorSettings
from desktop_rt.engine.protocol.events import ServerEvent
from desktop_rt.history.writer import StoreWriter
from desktop_rt.live.capture import CaptureFeed, LevelReading
from desktop_rt.live.echo_dedup import EchoDeduplicator
from desktop_rt.live.session import LiveSession, LiveSettings
from desktop_rt.live.source_choice import LabelledSource, meeting_sources
from desktop_rt.live.taught_words import TaughtWords
from desktop_rt.live.transcript_recorder import TranscriptRecorder

if TYPE_CHECKING:
    from desktop_rt.engine.server.bridge import LocalSession
    from desktop_rt.engine.server.server import RealtimeServer

__all__ = ["MeetingSession", "open_live_session"]


class _Stream:
    """One labelled source: its feed, its recorder and (once started) its server session."""

    def __init__(
        self,
        labelled: LabelledSource,
        uid: str,
        settings: LiveSettings,
        writer: StoreWriter | None,
        model: str,
        on_level: Callable[[LevelReading], None] | None,
        publish: Callable[[object], None],
    ):
        self.speaker = labelled.speaker
        self.settings = settings
        self.feed = CaptureFeed(
            labelled.source,
            None,
            on_status=publish,
            on_level=on_level,
            on_turn=lambda mark: self.recorder.turn_mark(mark),
            hands_free=settings.hands_free,
        )
        self.recorder = TranscriptRecorder(
            uid,
            writer,
            model=model,
            language=settings.language,
            mode=settings.mode,
            stream_to_clock=self.feed.clock_at,
            speaker=labelled.speaker,
        )
        self.local: LocalSession | None = None

    def start(
        self,
        server: RealtimeServer,
        on_event: Callable[[ServerEvent], None],
        on_closed: Callable[[], None],
        *,
        whole_turns: bool = True,
    ) -> None:
        local = server.open_local_session(
            on_event, emit_tentative=True, on_closed=on_closed, whole_turns=whole_turns
        )
        local.send(self.settings.session_update())
        self.feed.set_sink(local, on_attached=self.recorder.set_origin)
        self.feed.start()
        self.local = local

    def stop(self) -> None:
        self.feed.stop()
        if self.local is not None:
            self.local.end_input()


class MeetingSession:
    """Two streams, one history session. See the module docstring."""

    def __init__(
        self,
        server: RealtimeServer,
        sources: tuple[LabelledSource, LabelledSource],
        settings: LiveSettings,
        *,
        writer: StoreWriter | None,
        model: str,
        publish: Callable[[object], None],
        on_closed: Callable[[str], None],
        dedup: EchoDeduplicator | None = None,
    ):
        self.uid = "rec_" + secrets.token_hex(8)
        self.settings = settings
        self._server = server
        self._publish = publish
        self._on_closed = on_closed
        self.dedup = dedup if dedup is not None else EchoDeduplicator()
        self.taught = TaughtWords()
        self._release = threading.Lock()  # keeps released microphone events in order
        self._open = 2
        self._closing = threading.Lock()
        mic, system = sources
        self.mic = _Stream(mic, self.uid, settings, writer, model, self._mic_level, publish)
        self.system = _Stream(system, self.uid, _hands_free(settings), writer, model, None, publish)

    @property
    def recorders(self) -> tuple[TranscriptRecorder, TranscriptRecorder]:
        """The microphone's recorder, then system audio's."""
        return self.mic.recorder, self.system.recorder

    def start(self) -> None:
        """Open both server sessions and start both sources."""
        self.system.start(self._server, self._on_system_event, self._closed)
        # The echo guard rebuilds the microphone's completed text from its deltas, so a
        # whole-turn decode there would be heard for nothing (and delay both streams).
        self.mic.start(self._server, self._on_mic_event, self._closed, whole_turns=False)
        if self.taught.words:
            self._send_taught()

    def save_unfinished(self) -> int:
        """Both streams' words heard but not yet committed, saved."""
        return sum(recorder.save_unfinished() for recorder in self.recorders)

    def talk_down(self) -> None:
        self.mic.feed.talk_down()

    def talk_up(self) -> None:
        self.mic.feed.talk_up()

    def apply(self, settings: LiveSettings) -> None:
        """Follow new settings: language for both streams, the mode for the microphone."""
        old, self.settings = self.settings, settings
        if settings == old:
            return
        for stream, new in ((self.mic, settings), (self.system, _hands_free(settings))):
            if stream.local is not None and new != stream.settings:
                stream.local.send(new.session_update())
            if new.hands_free != stream.settings.hands_free:
                stream.feed.set_hands_free(new.hands_free)
            stream.settings = new

    def learn(self, recognised: str, corrected: str) -> tuple[str, ...]:
        """The words the user changed in a line become both streams' keywords (never blocks;
        :meth:`LiveSession.learn <desktop_rt.live.session.LiveSession.learn>`)."""
        if self.taught.teach(recognised, corrected):
            self._send_taught()
        return self.taught.words

    def _send_taught(self) -> None:
        for stream in (self.mic, self.system):
            if stream.local is not None:
                stream.local.send(self.taught.session_update())

    def stop(self) -> None:
        """Stop both sources and end both inputs (blocks while the feeds drain)."""
        self.mic.stop()
        self.system.stop()

    @property
    def lag_seconds(self) -> float:
        """How far the captions are behind the audio: the stream further behind."""
        return max(
            (s.local.lag_seconds for s in (self.mic, self.system) if s.local is not None),
            default=0.0,
        )

    # ---- callbacks (server and feed threads) ------------------------------------------------

    def _on_system_event(self, event: ServerEvent) -> None:
        self.dedup.reference(event)
        for update in self.system.recorder.handle(event):
            self._publish(update)
        with self._release:  # microphone words due even while the microphone is lost
            self._deliver(self.dedup.tick())

    def _on_mic_event(self, event: ServerEvent) -> None:
        with self._release:
            self._deliver(self.dedup.mic_event(event))

    def _mic_level(self, reading: LevelReading) -> None:
        self._publish(reading)
        with self._release:
            self._deliver(self.dedup.tick())

    def _deliver(self, events: list[object]) -> None:
        for event in events:
            for update in self.mic.recorder.handle(event):
                self._publish(update)

    def _closed(self) -> None:
        with self._closing:
            self._open -= 1
            if self._open:
                return
        with self._release:
            self._deliver(self.dedup.flush())
        self.mic.recorder.end()
        self.system.recorder.end()
        self._on_closed(self.uid)


def _hands_free(settings: LiveSettings) -> LiveSettings:
    """System audio's settings: the same language, always hands-free."""
    if settings.hands_free:
        return settings
    return LiveSettings(settings.language, TurnDetectorSettings())


def open_live_session(
    server: RealtimeServer,
    source: AudioSource,
    settings: Settings,
    *,
    writer: StoreWriter | None,
    model: str,
    publish: Callable[[object], None],
    on_closed: Callable[[str], None],
) -> LiveSession | MeetingSession:
    """A :class:`LiveSession` of ``source``, or in meeting mode a :class:`MeetingSession` with
    ``source`` as the microphone ("You") and system audio as "Others"."""
    live = LiveSettings.from_settings(settings)
    if settings.audio.source == MEETING:
        sources = meeting_sources(settings.audio, source)
        return MeetingSession(
            server,
            sources,
            live,
            writer=writer,
            model=model,
            publish=publish,
            on_closed=on_closed,
        )
    return LiveSession(
        server, source, live, writer=writer, model=model, publish=publish, on_closed=on_closed
    )
