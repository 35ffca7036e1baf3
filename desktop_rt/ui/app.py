"""``desktop-rt`` (the GUI): settings, controller, window, tray; quits once everything is saved.

Quitting goes in one order: the window closes, the controller saves the last words and stops its
helper threads, :attr:`AppController.shut_down` ends the event loop, then
:meth:`DesktopApp.dispose` waits for the window's own helper threads (history, caption sharing,
dictation) and deletes the tray, the overlay and the window (with the controller) on the UI
thread, before the interpreter shuts down. SIGTERM and SIGINT start the same quit from the event
loop (:func:`quit_on_signals`). See docs/design/app.md, "Quitting".
"""

from __future__ import annotations

import faulthandler
import gc
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from types import FrameType

import shiboken6
from PySide6.QtCore import QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from desktop_rt.config import Settings, load_settings
from desktop_rt.errors import DesktopRtError
from desktop_rt.ui.bridge import ServerState
from desktop_rt.ui.controller import (
    AppController,
    BackendFactory,
    SourceFactory,
    default_backend,
    default_source,
)
from desktop_rt.ui.main_window import MainWindow
from desktop_rt.ui.stall_sampler import sampler_from_env
from desktop_rt.ui.tray import AppTray

__all__ = [
    "run_app",
    "build_app",
    "resource_path",
    "DesktopApp",
    "AUDIO_FILE_ENV",
    "binding_problem",
    "freeze_heap_when_ready",
    "set_switch_interval",
    "SWITCH_INTERVAL",
    "quit_on_signals",
    "threads_left",
]

log = logging.getLogger(__name__)


def binding_problem() -> str | None:
    """Why this Qt binding cannot run the app, or None.

    PySide6 6.12 on Python 3.11 drops a reference to ``None`` on every call of a void C++
    method, so any window crashes within seconds of painting.
    """
    import PySide6

    if sys.version_info < (3, 12) and tuple(PySide6.__version_info__[:2]) == (6, 12):
        return (
            f"PySide6 {PySide6.__version__} crashes on Python {sys.version.split()[0]}. "
            "Install PySide6-Essentials 6.11 (pip install 'PySide6-Essentials<6.12') or use Python 3.12+."
        )
    return None


def resource_path(name: str) -> Path:
    return Path(str(resources.files("desktop_rt").joinpath("resources", name)))


class DesktopApp:
    """The parts of a running app, wired together (tests build one with their own sources)."""

    def __init__(self, controller: AppController, window: MainWindow, tray: AppTray):
        self.controller = controller
        self.window = window
        self.tray = tray
        window.closing.connect(controller.shutdown)

    def start(self) -> None:
        self.window.show()
        self.controller.start()

    def dispose(self, timeout: float = 10.0) -> None:
        """Delete the tray, the overlay and the window (the controller is its child) now.

        Call it on the UI thread once :attr:`AppController.shut_down` was emitted: by then no
        engine or helper thread is left that could emit into these objects. The history view's
        thread is joined here (``timeout`` seconds at most) for the same reason.
        """
        if not self.controller.stopped.is_set():
            raise RuntimeError("dispose() before the controller shut down")
        self.window.history.close_store(timeout)
        # Sharing and dictation start and stop on helper threads that emit into the window's
        # objects; what they were given before the window closed ends before it is deleted.
        for helper in (self.window.share.shutdown(), self.window.dictation.shutdown()):
            try:
                helper.result(timeout)
            except TimeoutError:
                log.warning("a helper thread was still busy after %.0f s at quit", timeout)
        self.tray.hide()
        for obj in (self.tray, self.tray.menu, self.window.overlay, self.window):
            if shiboken6.isValid(obj):
                shiboken6.delete(obj)


def build_app(
    *,
    settings: Settings | None = None,
    source_factory: SourceFactory = default_source,
    backend_factory: BackendFactory = default_backend,
    history_path: Path | None = None,
    persist_settings: bool = True,
    owns_backend: bool = True,
) -> DesktopApp:
    """Create the controller, window and tray (a QApplication must exist)."""
    warnings: tuple[str, ...] = ()
    if settings is None:
        loaded = load_settings()
        settings, warnings = loaded.settings, loaded.warnings
    _application()
    icon = QIcon(str(resource_path("desktop-rt.svg")))
    controller = AppController(
        settings,
        source_factory=source_factory,
        backend_factory=backend_factory,
        history_path=history_path,
        persist_settings=persist_settings,
        owns_backend=owns_backend,
    )
    window = MainWindow(controller, icon)
    # Owned by the window, so the controller is deleted on the UI thread, never by a Python
    # reference dropped on an engine thread (Qt timers must die on their own thread).
    controller.setParent(window)
    icons = tuple(
        QIcon(str(resource_path(f"desktop-rt{n}.svg"))) for n in ("", "-listening", "-recording")
    )
    tray = AppTray(controller, window, (icons[0], icons[1], icons[2]))
    for warning in warnings:
        window.status_panel.show_message(warning)
    return DesktopApp(controller, window, tray)


def freeze_heap_when_ready(state: ServerState) -> None:
    """Once a model is loaded, Python's collector stops walking what exists by then.

    A full collection walks every object alive (the Qt bindings, numpy, the model's Python
    side: hundreds of thousands); it holds the GIL throughout, so whichever thread triggers it
    stalls the UI thread. ``gc.freeze`` moves them to a generation that is never collected:
    later collections walk only what came since (docs/design/app.md, "The UI thread"). For
    the app's one process (``run_app``): what is frozen is freed by reference counts only.
    """
    if state.state == "ready":
        gc.freeze()


SWITCH_INTERVAL: float | None = None
"""Seconds a Python thread holds the GIL while another waits for it (``sys.setswitchinterval``);
None keeps Python's 5 ms (bench_app.py --switch-interval-ms; docs/design/app.md, "The UI thread")."""


def set_switch_interval(seconds: float | None = SWITCH_INTERVAL) -> None:
    """Set the interpreter's switch interval to ``seconds``, unless None (for the app's process)."""
    if seconds is not None:
        sys.setswitchinterval(seconds)


AUDIO_FILE_ENV = "DESKTOP_RT_AUDIO_FILE"
"""Replay this audio file as the microphone, in a loop of one pass (demos; machines with no mic)."""


def _file_source_factory(path: str) -> SourceFactory:
    from desktop_rt.engine.audio.sources import FileAudioSource

    return lambda _settings: FileAudioSource(path, name=Path(path).name)


def _application() -> QApplication:
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        raise RuntimeError("create a QApplication first")
    return app


def run_app(args: object = None) -> int:
    """The GUI entry point (``desktop-rt`` / ``desktop-rt gui``)."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    faulthandler.enable()  # a native crash (Qt, the model) leaves every thread's stack on stderr
    problem = binding_problem()
    if problem is not None:
        raise DesktopRtError(problem)
    app = _application() if QApplication.instance() else QApplication(sys.argv[:1])
    app.setApplicationName("desktop-rt")
    app.setDesktopFileName("desktop-rt")
    app.setQuitOnLastWindowClosed(False)  # quit once the last words are saved, not before
    audio_file = os.environ.get(AUDIO_FILE_ENV)
    desktop = build_app(
        source_factory=_file_source_factory(audio_file) if audio_file else default_source
    )
    app.setWindowIcon(desktop.window.windowIcon())
    desktop.controller.bridge.server_state.connect(freeze_heap_when_ready)
    set_switch_interval()
    desktop.controller.shut_down.connect(app.quit)
    quit_on_signals(app, desktop)
    sampler = sampler_from_env()  # DESKTOP_RT_STALL_LOG: what blocks the UI thread, if asked
    desktop.start()
    code = app.exec()
    if sampler is not None:
        sampler.stop()
        for cause, count, total_ms, longest_ms in sampler.summary():
            log.info(
                "UI stalls: %d, %.0f ms, longest %.0f ms: %s", count, total_ms, longest_ms, cause
            )
    if desktop.controller.stopped.is_set():
        desktop.dispose()
    left = threads_left(EXIT_JOIN_SECONDS)
    if left:
        # Everything is saved by now. A thread past its join (a hung driver, a starved machine)
        # would run on while the interpreter tears down the modules and objects it is using:
        # the crash class of issue 17. End the process without that teardown instead.
        log.warning("threads still running as the app exits: %s; exiting now", ", ".join(left))
        logging.shutdown()
        os._exit(code)
    return code


EXIT_JOIN_SECONDS = 10.0
"""How long the app waits, once it has shut down, for threads still ending before it exits."""


def threads_left(timeout: float = 0.0) -> list[str]:
    """The names of Python threads other than the main one still alive after joining each, in
    ``timeout`` seconds in all (threads not started by Python cannot be joined and are skipped)."""
    deadline = time.monotonic() + timeout
    main = threading.main_thread()
    left = []
    for thread in threading.enumerate():
        if thread is main or isinstance(thread, threading._DummyThread):
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            left.append(thread.name)
    return sorted(left)


def quit_on_signals(app: QApplication, desktop: DesktopApp) -> Callable[[], None]:
    """SIGTERM / SIGINT (logout, ``kill``, Ctrl+C) close the app as the Quit menu does.

    The window closes (its geometry is saved), the controller saves the last turn and stops the
    server, then the event loop ends and the process exits 0. A second signal while that runs
    gets the default action (the process ends at once). Python runs signal handlers only when
    the interpreter gets control, so a timer wakes it a few times a second while Qt's loop runs.
    Returns a function that puts back the handlers there were before and stops the timer.
    """

    def quit_now() -> None:
        desktop.window.close()
        desktop.controller.shutdown()  # no-op if closing the window already started it

    def request_quit(signum: int, _frame: FrameType | None) -> None:
        log.info("%s received: saving and quitting", signal.Signals(signum).name)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        # The handler interrupts whatever Python code the main thread is running (a slot
        # half-way through starting a session, say); quit from the event loop instead, between
        # two events. A SIGTERM during start-up once ran shutdown() inside start_listening().
        QTimer.singleShot(0, quit_now)

    before = {sig: signal.signal(sig, request_quit) for sig in (signal.SIGINT, signal.SIGTERM)}
    wake = QTimer(app)
    wake.setInterval(200)
    wake.timeout.connect(lambda: None)
    wake.start()

    def restore() -> None:
        wake.stop()
        wake.deleteLater()
        for sig, handler in before.items():
            signal.signal(sig, handler)

    return restore
