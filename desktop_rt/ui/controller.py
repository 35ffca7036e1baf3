"""The app's engine side, driven from the UI thread: server, live session, history writer.

:class:`AppController` starts the embedded :class:`RealtimeServer` on a helper thread (loading
the model takes seconds), then opens a :class:`~desktop_rt.live.session.LiveSession` on it. The
window only calls the verbs here (``talk_down``/``talk_up``, ``set_mode``,
``start_listening``/``stop_listening``, ``apply_settings``, ``shutdown``) and renders what
arrives on :attr:`bridge`. Nothing here blocks the UI thread: anything that waits (model load,
stopping the microphone, draining the last transcript) runs on a helper thread.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from desktop_rt.config import HANDS_FREE, PUSH_TO_TALK, Settings, save_settings
from desktop_rt.engine.asr.backend import AsrBackend
from desktop_rt.engine.audio.microphone import SoundDeviceSource
from desktop_rt.engine.audio.sources import LOST, AudioSource, SourceStatus
from desktop_rt.errors import DesktopRtError
from desktop_rt.history.store import StoreError
from desktop_rt.history.writer import StoreWriter
from desktop_rt.live.embedded_server import lower_thread_priority, start_embedded_server
from desktop_rt.live.session import LiveSession, LiveSettings
from desktop_rt.ui.bridge import EngineBridge, ServerState, SessionClosed, StoreProblem

if TYPE_CHECKING:
    from desktop_rt.engine.server.server import RealtimeServer

__all__ = ["AppController", "SourceFactory", "BackendFactory"]

log = logging.getLogger(__name__)

SourceFactory = Callable[[Settings], AudioSource]
BackendFactory = Callable[[str], AsrBackend]


def default_source(settings: Settings) -> AudioSource:
    return SoundDeviceSource(settings.audio.input_device)


def default_backend(spec: str) -> AsrBackend:
    from desktop_rt.engine.models.kinds import open_backend

    return open_backend(spec)


class AppController(QObject):
    """See the module docstring. Lives on the UI thread."""

    listening_changed = Signal(bool)
    talking_changed = Signal(bool)
    mode_changed = Signal(str)
    clients_changed = Signal(int)
    settings_changed = Signal(object)
    shut_down = Signal()
    _stopped = Signal()  # a stop_listening() helper finished (emitted from that thread)

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
        self._source_factory = source_factory
        self._backend_factory = backend_factory
        self._persist = persist_settings
        self._owns_backend = owns_backend
        self._server_backend: AsrBackend | None = None
        self.server: RealtimeServer | None = None
        self.server_state = ServerState("stopped", settings.transcription.model_id)
        self.live: LiveSession | None = None
        self._listening = False
        self._talking = False
        self._shutting_down = False
        self._stopping: threading.Thread | None = None
        self.stopped = threading.Event()
        """Set once :meth:`shutdown` finished (everything saved, server stopped)."""
        self._start_pending = False
        self._open_sessions: set[str] = set()
        self._sessions_cond = threading.Condition()
        self.writer: StoreWriter | None = None
        try:
            self.writer = StoreWriter(
                history_path,
                on_error=lambda exc: self.bridge.publish(StoreProblem(str(exc))),
                on_recovered=lambda: self.bridge.publish(StoreProblem("")),
            )
        except StoreError as exc:
            log.error("history unavailable: %s", exc)
            message = f"{exc} History is not saved in this session."
            QTimer.singleShot(0, lambda: self.bridge.store_problem.emit(message))
        self.bridge.server_state.connect(self._on_server_state)
        self._stopped.connect(self._after_stop)
        self._clients_timer = QTimer(self)
        self._clients_timer.setInterval(1000)
        self._clients_timer.timeout.connect(self._poll_clients)
        self._clients = 0

    # ---- state -------------------------------------------------------------------------------

    @property
    def listening(self) -> bool:
        return self._listening

    @property
    def talking(self) -> bool:
        return self._talking

    @property
    def mode(self) -> str:
        return self.settings.audio.mode

    @property
    def history_path(self) -> Path | None:
        return self.writer.path if self.writer is not None else None

    # ---- server ------------------------------------------------------------------------------

    def start(self) -> None:
        """Load the model and start the server (helper thread); listening starts when ready."""
        spec = self.settings.transcription.model_id
        self.bridge.publish(ServerState("starting", spec, message="Loading the speech model…"))
        threading.Thread(
            target=self._start_server, args=(self.settings,), name="desktop-rt-start", daemon=True
        ).start()

    def _start_server(self, settings: Settings) -> None:
        from desktop_rt.engine.models.kinds import describe_model
        from desktop_rt.engine.server.server import ServerError

        lower_thread_priority()  # the server, worker and model threads inherit it
        spec = settings.transcription.model_id
        model = describe_model(spec)
        srv = settings.server
        try:
            backend = self._backend_factory(spec)
        except (DesktopRtError, OSError, RuntimeError, ValueError) as exc:
            self.bridge.publish(
                ServerState("failed", model, message=f"The speech model could not be loaded: {exc}")
            )
            return
        self._server_backend = backend
        try:
            server, note = start_embedded_server(srv, model, backend)
        except ServerError as exc:
            self._close_backend()
            self.bridge.publish(ServerState("failed", model, message=str(exc)))
            return
        self.server = server
        self.bridge.publish(ServerState("ready", model, server.url, server.port, srv.api_key, note))

    @Slot(object)
    def _on_server_state(self, state: ServerState) -> None:
        self.server_state = state
        if state.state == "ready":
            self._clients_timer.start()
            if not self._shutting_down:
                self.start_listening()

    def _poll_clients(self) -> None:
        server = self.server
        count = 0 if server is None else server.open_stream_count - len(self._open_sessions)
        count = max(0, count)
        if count != self._clients:
            self._clients = count
            self.clients_changed.emit(count)

    # ---- listening ---------------------------------------------------------------------------

    def start_listening(self) -> None:
        """Open a new recording session and start the microphone."""
        if self._listening or self.server is None or self._shutting_down:
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
        live = LiveSession(
            self.server,
            source,
            LiveSettings.from_settings(self.settings),
            writer=self.writer,
            model=self.server_state.model,
            publish=self.bridge.publish,
            on_closed=self._session_closed,
        )
        with self._sessions_cond:
            self._open_sessions.add(live.uid)
        live.start()
        self.live = live
        self._listening = True
        # One line on stderr (the app logs at INFO) that tools can wait for: bench/bench_app.py.
        log.info("ready to listen: %s, server %s", self.server_state.model, self.server.url)
        self.listening_changed.emit(True)

    def _session_closed(self, uid: str) -> None:
        """A live session ended (server thread): its last transcript is saved."""
        with self._sessions_cond:
            self._open_sessions.discard(uid)
            self._sessions_cond.notify_all()
        self.bridge.publish(SessionClosed(uid))

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

        def finish() -> None:
            live.stop()  # commits a turn still held, then ends the input
            self._stopped.emit()

        thread = threading.Thread(target=finish, name="desktop-rt-stop", daemon=True)
        self._stopping = thread
        thread.start()
        return thread

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

    # ---- push-to-talk and mode ---------------------------------------------------------------

    def talk_down(self) -> None:
        if self._talking or self.live is None or self.mode != PUSH_TO_TALK:
            return
        self._talking = True
        self.live.talk_down()
        self.talking_changed.emit(True)

    def talk_up(self) -> None:
        if not self._talking:
            return
        self._talking = False
        if self.live is not None:
            self.live.talk_up()
        self.talking_changed.emit(False)

    def set_mode(self, mode: str) -> None:
        if mode not in (PUSH_TO_TALK, HANDS_FREE) or mode == self.mode:
            return
        if self._talking:
            self.talk_up()
        self.apply_settings(self.settings.with_group(audio=replace(self.settings.audio, mode=mode)))
        self.mode_changed.emit(mode)

    # ---- settings ----------------------------------------------------------------------------

    def apply_settings(self, settings: Settings, save: bool = True) -> None:
        """Use ``settings`` from now on: the session, the microphone and the server follow."""
        old, self.settings = self.settings, settings
        if save and self._persist:
            try:
                save_settings(settings)
            except DesktopRtError as exc:
                self.bridge.error.emit(str(exc))
        if self.live is not None:
            self.live.apply(LiveSettings.from_settings(settings))
        if self._listening and old.audio.input_device != settings.audio.input_device:
            self.stop_listening()
            self.start_listening()
        if (old.server, old.transcription.model_id) != (
            settings.server,
            settings.transcription.model_id,
        ):
            self.restart_server()
        self.settings_changed.emit(settings)

    def restart_server(self) -> None:
        """Stop listening and the server (helper thread), then start both with the new settings."""
        server, self.server = self.server, None
        stopping = self.stop_listening() or self._stopping
        self._clients_timer.stop()

        def restart() -> None:
            if stopping is not None:
                stopping.join()
            if server is not None:
                self._wait_sessions_closed(10.0)
                server.stop()
                self._close_backend()
            if not self._shutting_down:
                self.bridge.publish(
                    ServerState(
                        "starting",
                        self.settings.transcription.model_id,
                        message="Restarting the server…",
                    )
                )
                self._start_server(self.settings)

        threading.Thread(target=restart, name="desktop-rt-restart", daemon=True).start()

    def _close_backend(self) -> None:
        backend, self._server_backend = self._server_backend, None
        if backend is not None and self._owns_backend:
            backend.close()

    def _wait_sessions_closed(self, timeout: float) -> bool:
        with self._sessions_cond:
            return self._sessions_cond.wait_for(lambda: not self._open_sessions, timeout)

    # ---- shutdown ----------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Save everything and stop; emits :attr:`shut_down` when done (never blocks)."""
        if self._shutting_down:
            return
        self._shutting_down = True
        self._clients_timer.stop()
        stopping = self.stop_listening() or self._stopping
        server, self.server = self.server, None
        writer = self.writer

        def finish() -> None:
            if stopping is not None:
                stopping.join()
            self._wait_sessions_closed(20.0)  # the last turn is transcribed and saved
            if server is not None:
                server.stop()
                self._close_backend()
            if writer is not None:
                writer.flush()
                writer.close()
            self.stopped.set()
            with contextlib.suppress(RuntimeError):  # the controller was deleted: nobody waits
                self.shut_down.emit()

        threading.Thread(target=finish, name="desktop-rt-shutdown", daemon=True).start()
