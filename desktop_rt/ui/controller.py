"""The app's engine side, driven from the UI thread: server, live session, history writer.

:class:`AppController` starts the :class:`~desktop_rt.live.embedded_server.EmbeddedServer` (the
model loads on a helper thread), then opens a :class:`~desktop_rt.live.session.LiveSession` on
it. The window only calls the verbs here (``talk_down``/``talk_up``, ``set_mode``,
``start_listening``/``stop_listening``, ``retry_microphone``, ``apply_settings``, ``shutdown``,
:attr:`importer`) and renders what arrives on :attr:`bridge`. Nothing here blocks the UI thread:
anything that waits (model load, stopping the microphone, draining the last transcript, a file
import) runs on a helper thread. :attr:`shut_down` is emitted on the UI thread once every helper
thread has ended, so the window and this object may be deleted then and not before.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from desktop_rt.config import HANDS_FREE, PUSH_TO_TALK, Settings, save_settings
from desktop_rt.engine.asr.backend import AsrBackend
from desktop_rt.engine.audio.sources import LOST, AudioSource, SourceStatus
from desktop_rt.errors import DesktopRtError, ModelError
from desktop_rt.history.writer import StoreWriter, open_history_writer
from desktop_rt.live.embedded_server import EmbeddedServer
from desktop_rt.live.meeting import MeetingSession, open_live_session
from desktop_rt.live.session import LiveSession, LiveSettings
from desktop_rt.live.source_choice import source_for as default_source
from desktop_rt.ui.bridge import EngineBridge, ServerState, SessionClosed, StoreProblem
from desktop_rt.ui.file_import import FileImporter
from desktop_rt.ui.publish_gate import PublishGate

if TYPE_CHECKING:
    from desktop_rt.engine.server.server import RealtimeServer

__all__ = ["AppController", "SourceFactory", "BackendFactory", "default_source"]

log = logging.getLogger(__name__)

SourceFactory = Callable[[Settings], AudioSource]
BackendFactory = Callable[[str], AsrBackend]


def default_backend(spec: str) -> AsrBackend:
    from desktop_rt.engine.models.kinds import open_backend

    return open_backend(spec)


def reporting_failures(factory: BackendFactory) -> BackendFactory:
    """``factory``, raising :class:`ModelError` for any failure, so the window shows it."""

    def load(spec: str) -> AsrBackend:
        try:
            return factory(spec)
        except DesktopRtError:
            raise
        except Exception as exc:  # e.g. a damaged tokenizer.json raises a bare Exception
            log.exception("the speech model %s could not be loaded", spec)
            raise ModelError(f"{type(exc).__name__}: {exc}") from exc

    return load


class AppController(QObject):
    """See the module docstring. Lives on the UI thread."""

    listening_changed = Signal(bool)
    talking_changed = Signal(bool)
    recording_changed = Signal(bool)  # audio is going to a session (push-to-talk held, hands-free)
    mode_changed = Signal(str)
    clients_changed = Signal(int)
    settings_changed = Signal(object)
    shut_down = Signal()
    _stopped = Signal()  # a stop_listening() helper finished (emitted from that thread)
    _finished = Signal()  # the shutdown helper's last act (emitted from that thread)

    def __init__(
        self,
        settings: Settings,
        *,
        source_factory: SourceFactory = default_source,
        backend_factory: BackendFactory = default_backend,
        history_path: Path | None = None,
        persist_settings: bool = True,
        owns_backend: bool = True,
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        self.settings = settings
        self.bridge = EngineBridge(self)
        self._publish = PublishGate(self.bridge.publish)  # engine threads: closed at shut_down
        self._source_factory = source_factory
        self._persist = persist_settings
        self.engine = EmbeddedServer(
            reporting_failures(backend_factory), self._publish, owns_backend=owns_backend
        )
        self._server_usable = self._awaiting_restart = False
        self.server_state = ServerState("stopped", settings.transcription.model_id)
        self.live: LiveSession | MeetingSession | None = None
        self._listening = self._talking = self._recording = self._shutting_down = False
        self._stopping: threading.Thread | None = None
        self._threads: list[threading.Thread] = []
        self._shutdown_thread: threading.Thread | None = None
        self.stopped = threading.Event()
        """Set once :meth:`shutdown` finished (everything saved, server and helpers stopped)."""
        self._start_pending = False
        self._open_sessions: dict[str, LiveSession | MeetingSession] = {}
        self._sessions_cond = threading.Condition()
        self.writer = self._open_writer(history_path)
        self.importer = FileImporter(self, self._spawn)  # audio files into the history
        self.bridge.server_state.connect(self._on_server_state)
        self._stopped.connect(self._after_stop)
        self._finished.connect(self._after_shutdown)
        self._clients_timer = QTimer(self, interval=1000)
        self._clients_timer.timeout.connect(self._poll_clients)
        self._clients = 0

    def _open_writer(self, history_path: Path | None) -> StoreWriter | None:
        publish = self._publish
        writer, note = open_history_writer(history_path, lambda text: publish(StoreProblem(text)))
        if note:  # the window connects after this constructor: show it on the next loop turn
            QTimer.singleShot(0, lambda: self.bridge.store_problem.emit(note))
        return writer

    # ---- state -------------------------------------------------------------------------------

    @property
    def listening(self) -> bool:
        return self._listening

    @property
    def talking(self) -> bool:
        return self._talking

    @property
    def recording(self) -> bool:
        """Audio goes to the session: listening, and hands-free or the talk key held."""
        return self._recording

    @property
    def mode(self) -> str:
        return self.settings.audio.mode

    @property
    def server(self) -> RealtimeServer | None:
        """The running server, while new sessions may use it."""
        return self.engine.server if self._server_usable else None

    @property
    def history_path(self) -> Path | None:
        return self.writer.path if self.writer is not None else None

    def _update_recording(self) -> None:
        on = self._listening and (self.mode == HANDS_FREE or self._talking)
        if on != self._recording:
            self._recording = on
            self.recording_changed.emit(on)

    def _spawn(self, name: str, target: Callable[[], None]) -> threading.Thread:
        """Run ``target`` on a helper thread that :meth:`shutdown` waits for."""
        self._threads = [t for t in self._threads if t.is_alive()]
        thread = threading.Thread(target=target, name=name, daemon=True)
        self._threads.append(thread)
        thread.start()
        return thread

    # ---- server ------------------------------------------------------------------------------

    def start(self) -> None:
        """Load the model and start the server (helper thread); listening starts when ready."""
        s = self.settings
        self.engine.start(s.server, s.transcription.model_id, "Loading the speech model…")

    @Slot(object)
    def _on_server_state(self, state: ServerState) -> None:
        self.server_state = state
        if state.state == "starting":
            self._awaiting_restart = False
        if state.state == "ready" and not (self._awaiting_restart or self._shutting_down):
            self._server_usable = True
            self._clients_timer.start()
            self.start_listening()

    def _poll_clients(self) -> None:
        server = self.server
        count = max(0, server.open_stream_count - len(self._open_sessions) if server else 0)
        if count != self._clients:
            self._clients = count
            self.clients_changed.emit(count)

    # ---- listening ---------------------------------------------------------------------------

    def start_listening(self) -> None:
        """Open a new recording session and start the microphone."""
        server = self.server
        if self._listening or server is None or self._shutting_down:
            return
        if self._stopping is not None:  # the microphone is still closing: start right after
            self._start_pending = True
            return
        try:
            source = self._source_factory(self.settings)
        except DesktopRtError as exc:
            # A source that cannot be made (DESKTOP_RT_AUDIO_FILE naming a missing or unreadable
            # file) is reported where a lost microphone is, not raised out of a Qt slot.
            log.warning("could not open the audio source: %s", exc)
            self.bridge.publish(SourceStatus(LOST, "audio source", str(exc)))
            return
        live = open_live_session(  # meeting mode: the factory's source is "You"
            server,
            source,
            self.settings,
            writer=self.writer,
            model=self.server_state.model,
            publish=self._publish,
            on_closed=self._session_closed,
        )
        with self._sessions_cond:
            self._open_sessions[live.uid] = live
        live.start()
        self.live = live
        self._listening = True
        # One line on stderr (the app logs at INFO) that tools can wait for: bench/bench_app.py.
        log.info("ready to listen: %s, server %s", self.server_state.model, server.url)
        self.listening_changed.emit(True)
        self._update_recording()

    def _session_closed(self, uid: str) -> None:
        """A live session ended (server thread): its last transcript is saved."""
        self._publish(SessionClosed(uid))
        with self._sessions_cond:  # last: shutdown() may delete the bridge once this is seen
            self._open_sessions.pop(uid, None)
            self._sessions_cond.notify_all()

    def stop_listening(self) -> threading.Thread | None:
        """Stop the microphone and finish the session (its last turn is transcribed and saved)."""
        live = self.live
        if not self._listening or live is None:
            return None
        self.live = None
        self._listening = False
        if self._talking:
            self._talking = False
            self.talking_changed.emit(False)
        self.listening_changed.emit(False)
        self._update_recording()

        def finish() -> None:
            live.stop()  # commits a turn still held, then ends the input
            self._stopped.emit()

        self._stopping = self._spawn("desktop-rt-stop", finish)
        return self._stopping

    @Slot()
    def _after_stop(self) -> None:
        self._stopping = None
        if self._start_pending:
            self._start_pending = False
            self.start_listening()

    def toggle_listening(self) -> None:
        if self._listening or self._start_pending:
            self._start_pending = False
            self.stop_listening()
        else:
            self.start_listening()

    def retry_microphone(self) -> None:
        """Close the audio source (on a helper thread: a hung driver cannot block the window)
        and open it again; for a microphone that went silent or was lost."""
        if self._listening:
            self.stop_listening()
        self.start_listening()  # right away, or as soon as the old source has closed

    # ---- push-to-talk and mode ---------------------------------------------------------------

    def talk_down(self) -> None:
        if self._talking or self.live is None or self.mode != PUSH_TO_TALK:
            return
        self._talking = True
        self.live.talk_down()
        self.talking_changed.emit(True)
        self._update_recording()

    def talk_up(self) -> None:
        if not self._talking:
            return
        self._talking = False
        if self.live is not None:
            self.live.talk_up()
        self.talking_changed.emit(False)
        self._update_recording()

    def set_mode(self, mode: str) -> None:
        if mode not in (PUSH_TO_TALK, HANDS_FREE) or mode == self.mode:
            return
        self.apply_settings(self.settings.with_group(audio=replace(self.settings.audio, mode=mode)))

    # ---- settings ----------------------------------------------------------------------------

    def apply_settings(self, settings: Settings, save: bool = True) -> None:
        """Use ``settings`` from now on: the session, the microphone and the server follow."""
        old, self.settings = self.settings, settings
        mode_changed = old.audio.mode != settings.audio.mode
        if mode_changed:
            self.talk_up()
        if save and self._persist:
            try:
                save_settings(settings)
            except DesktopRtError as exc:
                self.bridge.error.emit(str(exc))
        if self.live is not None:
            self.live.apply(LiveSettings.from_settings(settings))
        if self._listening and old.audio != replace(settings.audio, mode=old.audio.mode):
            self.stop_listening()
            self.start_listening()
        if (old.server, old.transcription.model_id) != (
            settings.server,
            settings.transcription.model_id,
        ):
            self.restart_server()
        if mode_changed:
            self.mode_changed.emit(settings.audio.mode)
            self._update_recording()
        self.settings_changed.emit(settings)

    def restart_server(self) -> None:
        """Stop listening and the server (helper thread), then start both with the new settings."""
        self._server_usable = False
        self._awaiting_restart = True
        stopping = self.stop_listening() or self._stopping
        self._clients_timer.stop()

        def restart() -> None:
            if stopping is not None:
                stopping.join()
            self._wait_sessions_closed(10.0)
            self.engine.stop()
            if not self._shutting_down:
                s = self.settings
                self._publish(
                    ServerState(
                        "starting", s.transcription.model_id, message="Restarting the server…"
                    )
                )
                self.engine.start_here(s.server, s.transcription.model_id)

        self._spawn("desktop-rt-restart", restart)

    def _wait_sessions_closed(self, timeout: float) -> bool:
        with self._sessions_cond:
            return self._sessions_cond.wait_for(lambda: not self._open_sessions, timeout)

    # ---- shutdown ----------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Save everything and stop; emits :attr:`shut_down` when done (never blocks).

        The helper threads are joined in order (microphone, restarts, the server's start, the
        sessions' last transcripts, the model's unload, the history writer); the shutdown helper
        last posts :attr:`_finished`, and the UI thread joins it, closes the publish gate, then
        sets :attr:`stopped` and emits :attr:`shut_down`: no engine thread emits after that.
        """
        if self._shutting_down:
            return
        self._shutting_down = True
        self._server_usable = False
        self._clients_timer.stop()
        self.stop_listening()
        self.importer.cancel()
        helpers = list(self._threads)
        writer = self.writer

        def finish() -> None:
            for thread in helpers:
                thread.join()
            if not self._wait_sessions_closed(20.0):  # the last turn is transcribed and saved
                for live in list(self._open_sessions.values()):  # or its heard words are kept
                    live.save_unfinished()
            self.engine.stop()
            if writer is not None:
                writer.flush()
                writer.close()
            self._finished.emit()

        self._shutdown_thread = self._spawn("desktop-rt-shutdown", finish)

    @Slot()
    def _after_shutdown(self) -> None:
        if self._shutdown_thread is not None:
            self._shutdown_thread.join()
        self._publish.close()
        self.stopped.set()
        self.shut_down.emit()
