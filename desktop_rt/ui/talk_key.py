"""Space as the hold-to-talk key of one window, robust to auto-repeat (an event filter).

:class:`TalkKeyFilter` feeds every Space press and release to a
:class:`~desktop_rt.live.talk_hold.TalkHold` and calls ``on_down``/``on_up`` when a hold starts
and ends; a :class:`QTimer` ends a hold once a release saw no repeat press within the grace
period. A hold starts only while the window is active and ``is_target(focus widget)`` says the
talk target has focus; anywhere else Space does what it normally does (types a space, presses a
focused button). Releases and repeats of a hold are handled wherever the focus went meanwhile.
On X11, :func:`enable_detectable_auto_repeat` asks the server to send no releases at all while
a key is held (XKB detectable auto-repeat); the timing rule covers the servers that cannot.

When the keyboard leaves the app during a hold (another window, a notification, alt-tab), the
hold lasts until Space is physically released: ``key_state()`` (default
:func:`~desktop_rt.ui.key_state.open_key_state`) opens a reader of the key's state, polled
until the hold ends, and a key seen up is a release. Where the state cannot be read, the hold
ends at once (what was said is kept) and ``on_lost`` gets :data:`LOST_MESSAGE` for the status.

:meth:`TalkKeyFilter.install` puts the filter on the window and on the focus widget only,
following the focus: key events go to the focus widget first, so it sees every Space, while the
many other events of the application (timers, paints, queued signals) never enter Python for it.
It also works installed on the whole application (``QApplication.installEventFilter``), where
it returns at once for events other than keys and window deactivation.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import time
from collections.abc import Callable

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QKeyEvent
from PySide6.QtWidgets import QApplication, QWidget

from desktop_rt.live.talk_hold import HoldState, TalkHold, repeat_gap_for
from desktop_rt.ui.key_state import KeyState, KeyStateError, open_key_state
from desktop_rt.ui.shortcuts import TALK_KEY

__all__ = ["TalkKeyFilter", "system_repeat_gap", "enable_detectable_auto_repeat", "LOST_MESSAGE"]

log = logging.getLogger(__name__)

_WATCHED = frozenset((QEvent.Type.KeyPress, QEvent.Type.KeyRelease, QEvent.Type.WindowDeactivate))
KEY_POLL_MS = 30
"""How often Space's state is read while the keyboard is elsewhere during a hold."""
LOST_MESSAGE = (
    "Push-to-talk stopped: the window lost the keyboard while Space was held, and its release "
    "cannot be seen from here. What you said is kept; hold Space again to go on."
)


def enable_detectable_auto_repeat() -> bool:
    """On X11, ask for XKB detectable auto-repeat (a held key sends presses, no releases).

    Returns whether the server agreed; False on other platforms or without libX11.
    """
    app = QGuiApplication.instance()
    if not isinstance(app, QGuiApplication) or QGuiApplication.platformName() != "xcb":
        return False
    try:
        display = int(app.nativeInterface().display())  # type: ignore[attr-defined]
        x11 = ctypes.CDLL(ctypes.util.find_library("X11") or "libX11.so.6")
    except (AttributeError, OSError, RuntimeError, TypeError) as exc:
        log.debug("no XKB detectable auto-repeat: %s", exc)
        return False
    if not display:
        return False
    set_detectable = x11.XkbSetDetectableAutoRepeat
    set_detectable.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
    set_detectable.restype = ctypes.c_int
    supported = ctypes.c_int(0)
    done = set_detectable(ctypes.c_void_p(display), 1, ctypes.byref(supported))
    return bool(done and supported.value)


def system_repeat_gap() -> float:
    """The grace period for this desktop's keyboard auto-repeat rate (see :func:`repeat_gap_for`)."""
    hints = QGuiApplication.styleHints()
    return repeat_gap_for(float(hints.keyboardAutoRepeatRateF()))


class TalkKeyFilter(QObject):
    """See the module docstring. Install it with :meth:`install`."""

    def __init__(
        self,
        window: QWidget,
        is_target: Callable[[QWidget | None], bool],
        on_down: Callable[[], None],
        on_up: Callable[[], None],
        repeat_gap: float | None = None,
        *,
        key_state: Callable[[], KeyState | None] = open_key_state,
        on_lost: Callable[[str], None] | None = None,
    ):
        super().__init__(window)
        self._window = window
        self._is_target = is_target
        self._on_down = on_down
        self._on_up = on_up
        self._open_key_state = key_state
        self._on_lost = on_lost
        self.hold = TalkHold(repeat_gap if repeat_gap is not None else system_repeat_gap())
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self._expire)
        self._poll = QTimer(self)
        self._poll.setInterval(KEY_POLL_MS)
        self._poll.timeout.connect(self._read_key)
        self._key_state: KeyState | None = None  # read while the keyboard is elsewhere
        self._focus: QWidget | None = None  # the focus widget the filter is installed on
        self.installed = False

    def install(self) -> None:
        """Filter the window's events and the focus widget's, following the focus from now on."""
        app = QApplication.instance()
        if self.installed or not isinstance(app, QApplication):
            return
        self.installed = True
        self._window.installEventFilter(self)
        app.focusChanged.connect(self._follow_focus)
        app.applicationStateChanged.connect(self._app_state)
        self._follow_focus(None, QApplication.focusWidget())

    def uninstall(self) -> None:
        """Stop filtering (the window closes); a hold under way is not ended (see :meth:`cancel`)."""
        app = QApplication.instance()
        if not self.installed or not isinstance(app, QApplication):
            return
        self.installed = False
        app.focusChanged.disconnect(self._follow_focus)
        app.applicationStateChanged.disconnect(self._app_state)
        self._follow_focus(None, None)
        self._window.removeEventFilter(self)

    def _follow_focus(self, _old: QWidget | None, new: QWidget | None) -> None:
        old, self._focus = self._focus, None
        if old is not None and old is not self._window and shiboken6.isValid(old):
            old.removeEventFilter(self)
        if new is not None and new is not self._window:
            new.installEventFilter(self)
            self._focus = new

    def cancel(self) -> None:
        """End a hold now (the window closes, or the keyboard left and Space cannot be read)."""
        self._timer.stop()
        self._stop_reading()
        if self.hold.cancel():
            self._on_up()

    def _app_state(self, state: Qt.ApplicationState) -> None:
        if state != Qt.ApplicationState.ApplicationActive:
            self._keyboard_left()

    def _keyboard_left(self) -> None:
        """The window (or the app) lost the keyboard: the release may go to another window."""
        if not self.hold.held or self._key_state is not None:
            return
        reader = self._open_key_state()
        if reader is not None:
            log.debug("push-to-talk: the keyboard left mid-hold; reading Space from the server")
            self._key_state = reader
            self._poll.start()
            return
        active = QApplication.activeWindow()
        if active is not None and active is not self._window:
            return  # another window of ours has the keyboard: the filter follows the focus there
        self._lose()

    def _lose(self) -> None:
        """The release cannot be seen: end the hold now (its words make the turn), and say so."""
        log.info("push-to-talk: Space's release cannot be seen; the hold ends here")
        self.cancel()
        if self._on_lost is not None:
            self._on_lost(LOST_MESSAGE)

    def _read_key(self) -> None:
        if self._key_state is None or not self.hold.held:
            self._stop_reading()
            return
        try:
            down = self._key_state.is_down()
        except KeyStateError as exc:
            log.warning("Space's state went unreadable during a hold: %s", exc)
            self._lose()
            return
        if down and self.hold.state is HoldState.RELEASING:
            self._key(QEvent.Type.KeyPress)  # still held: a release seen meanwhile was a repeat
        elif not down and self.hold.state is HoldState.HELD:
            self._key(QEvent.Type.KeyRelease)  # released in another window: the grace applies

    def _stop_reading(self) -> None:
        self._poll.stop()
        reader, self._key_state = self._key_state, None
        if reader is not None:
            reader.close()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt naming
        kind = event.type()
        if kind not in _WATCHED:
            return False  # most events: nothing more is done for them
        if kind == QEvent.Type.WindowDeactivate:
            if watched is self._window:
                self._keyboard_left()
            return False
        if not isinstance(event, QKeyEvent) or event.key() != TALK_KEY:
            return False
        focus = QApplication.focusWidget()
        if focus is not None and watched is not focus and watched is not self._window:
            return False  # the same event on its way up to a parent: judged already
        if self.hold.held:  # whatever the focus or modifiers are now, a hold sees its release
            self._key(kind)
            return True
        if event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            return False  # Shift+Space and the like are not the talk key
        if not self._window.isActiveWindow() or not self._is_target(focus):
            return False
        self._key(kind)
        return True

    def _key(self, kind: QEvent.Type) -> None:
        if kind == QEvent.Type.KeyPress:
            self._timer.stop()
            if self.hold.press():
                self._on_down()
            return
        now = time.monotonic()
        deadline = self.hold.release(now)
        if deadline is not None:
            self._timer.start(max(1, round((deadline - now) * 1000)))

    def _expire(self) -> None:
        now = time.monotonic()
        if self.hold.expire(now):
            self._stop_reading()
            self._on_up()
        elif self.hold.deadline is not None:  # woke a little early
            self._timer.start(max(1, round((self.hold.deadline - now) * 1000)))
