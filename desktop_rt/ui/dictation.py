"""The window's side of dictation: the shortcut's actions on the UI thread, the preview.

:class:`DictationAdapter` runs a :class:`~desktop_rt.dictation.engine.DictationEngine` for the
controller's :class:`~desktop_rt.config.DictationSettings`: :meth:`~DictationAdapter.apply`
starts, restarts or stops it; :meth:`~DictationAdapter.shutdown` stops it. The engine is started
and stopped on a helper thread (both touch the X server), the shortcut's START/STOP arrive on a
queued signal and become the controller's ``talk_down``/``talk_up``, and every caption of the
live session goes to the engine, which types the committed words of dictated turns. Problems
(not an X11 session, a taken shortcut) are shown where the window shows errors.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal, Slot

from desktop_rt.dictation.engine import DictationEngine
from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.gesture import START, Action
from desktop_rt.dictation.settings import DictationSettings
from desktop_rt.live.transcript_recorder import CaptionTurn
from desktop_rt.ui.widgets.dictation_preview import DictationPreview

if TYPE_CHECKING:
    from desktop_rt.ui.controller import AppController

__all__ = ["DictationAdapter"]

log = logging.getLogger(__name__)


class DictationAdapter(QObject):
    """See the module docstring. Lives on the UI thread."""

    active_changed = Signal(bool)  # the shortcut is grabbed (True) or released (False)
    dictating_changed = Signal(bool)
    _action = Signal(object)  # an Action, from the shortcut's thread
    _started = Signal(object, str)  # (engine or None, error message), from the helper thread

    def __init__(self, controller: AppController):
        super().__init__(controller)
        self._controller = controller
        self._settings = DictationSettings()
        self._engine: DictationEngine | None = None
        self._pending: DictationEngine | None = None
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="desktop-rt-dictation")
        self.dictating = False
        self._closed = False
        self._done: Future[None] = Future()
        self.preview: DictationPreview | None = None
        self._action.connect(self._on_action, Qt.ConnectionType.QueuedConnection)
        self._started.connect(self._on_started, Qt.ConnectionType.QueuedConnection)
        controller.bridge.caption.connect(self._on_caption)
        controller.talking_changed.connect(self._on_talking)
        controller.settings_changed.connect(lambda settings: self.apply(settings.dictation))
        self.apply(controller.settings.dictation)

    @property
    def engine(self) -> DictationEngine | None:
        """The running engine (None while off or starting)."""
        return self._engine

    def apply(self, settings: DictationSettings) -> None:
        """Follow ``settings``: start, restart or stop dictation (never blocks). Unchanged
        settings change nothing (a failed start is retried only when they change)."""
        if settings == self._settings or self._closed:
            return
        self._settings = settings
        self._stop_engine()
        if settings.enabled:
            engine = DictationEngine(
                settings,
                on_action=self._action.emit,
                on_error=self._controller.bridge.error.emit,
            )
            self._pending = engine
            self._executor.submit(self._start_engine, engine)

    def shutdown(self) -> Future[None]:
        """Stop dictation for good; the returned future is done once the shortcut is released
        (a shortcut still being grabbed is released right after). Calling it again is harmless."""
        if self._closed:
            return self._done
        self._closed = True
        self._stop_engine()
        if self.preview is not None:
            self.preview.close()
            self.preview.deleteLater()
            self.preview = None
        self._done = self._executor.submit(lambda: None)
        self._executor.shutdown(wait=False)
        return self._done

    # ---- internals ----------------------------------------------------------------------------

    def _start_engine(self, engine: DictationEngine) -> None:
        try:
            engine.start()
        except DictationError as exc:
            self._started.emit(None, str(exc))
            return
        if self._closed:  # the window closed meanwhile: never hand the engine back
            engine.stop()
            return
        self._started.emit(engine, "")

    @Slot(object, str)
    def _on_started(self, engine: DictationEngine | None, message: str) -> None:
        if engine is None:
            log.warning("dictation is off: %s", message)
            self._pending = None
            self._controller.bridge.error.emit(message)
            return
        if engine is not self._pending:  # stopped, replaced or closed while it started
            if self._closed:
                threading.Thread(
                    target=engine.stop, name="desktop-rt-dictation", daemon=True
                ).start()
            else:
                self._executor.submit(engine.stop)
            return
        self._pending, self._engine = None, engine
        self.active_changed.emit(True)

    def _stop_engine(self) -> None:
        self._pending = None
        if self.dictating:
            self._on_action(Action.STOP)
        engine, self._engine = self._engine, None
        if engine is not None:
            self._executor.submit(engine.stop)
            self.active_changed.emit(False)

    @Slot(object)
    def _on_action(self, action: Action) -> None:
        engine = self._engine
        on = action is START
        if engine is None or on == self.dictating:
            return
        self.dictating = on
        if on:
            engine.began()
            self._controller.talk_down()
            self._show_preview("")
        else:
            engine.ended()
            self._controller.talk_up()
            self._follow_preview(engine)
        self.dictating_changed.emit(on)

    @Slot(bool)
    def _on_talking(self, talking: bool) -> None:
        if talking and not self.dictating and self._engine is not None:
            self._engine.cancel_claim()  # the window's own talk key: not dictation

    @Slot(object)
    def _on_caption(self, turn: CaptionTurn) -> None:
        engine = self._engine
        if engine is None:
            return
        engine.caption(turn)
        self._follow_preview(engine)

    def _follow_preview(self, engine: DictationEngine) -> None:
        """Shown while dictating, and after it while tentative words of its turn remain."""
        if self.dictating or (engine.queue.claiming and engine.preview):
            self._show_preview(engine.preview)
        elif self.preview is not None:
            self.preview.hide()

    def _show_preview(self, text: str) -> None:
        if not self._settings.preview:
            return
        if self.preview is None:
            self.preview = DictationPreview()
        self.preview.show_text(text)
