"""Whether the talk key is physically down, read from the X server whichever window has focus.

A window that lost the keyboard in the middle of a hold receives no release: it goes to the
window that took the focus. :func:`open_key_state` opens a reader of the key's state (its own
X connection, used on the calling thread only); :meth:`X11KeyState.is_down` asks the server
(``XQueryKeymap``: the core keyboard's keys, every keyboard and XTest included, and unchanged
by auto-repeat); :meth:`X11KeyState.close` ends the connection. Where the state cannot be read
(not X11, no libX11, the server refuses a connection) :func:`open_key_state` returns None.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
from typing import Protocol

from PySide6.QtGui import QGuiApplication

__all__ = ["KeyState", "X11KeyState", "KeyStateError", "open_key_state", "SPACE_KEYSYM"]

log = logging.getLogger(__name__)

SPACE_KEYSYM = 0x20  # XK_space


class KeyStateError(OSError):
    """The key's state cannot be read (no X connection)."""


class KeyState(Protocol):
    """A key's physical state: ``is_down()`` until ``close()``."""

    def is_down(self) -> bool: ...

    def close(self) -> None: ...


def _libx11() -> ctypes.CDLL:
    x11 = ctypes.CDLL(ctypes.util.find_library("X11") or "libX11.so.6")
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    x11.XKeysymToKeycode.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
    x11.XKeysymToKeycode.restype = ctypes.c_ubyte
    x11.XQueryKeymap.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    x11.XQueryKeymap.restype = ctypes.c_int
    x11.XDisplayString.argtypes = [ctypes.c_void_p]
    x11.XDisplayString.restype = ctypes.c_char_p
    return x11


class X11KeyState:
    """The state of the key ``keysym`` on the X server ``display`` (None: ``$DISPLAY``)."""

    def __init__(self, display: str | None = None, keysym: int = SPACE_KEYSYM):
        try:
            self._x11 = _libx11()
        except OSError as exc:
            raise KeyStateError(f"libX11 is missing: {exc}") from exc
        name = display.encode() if display is not None else None
        self._display: int | None = self._x11.XOpenDisplay(name)
        if not self._display:
            raise KeyStateError(f"cannot open the X display {display or '$DISPLAY'}")
        self._keycode = int(self._x11.XKeysymToKeycode(self._display, keysym))
        if not self._keycode:
            self.close()
            raise KeyStateError(f"no key on this keyboard sends keysym {keysym:#x}")

    def is_down(self) -> bool:
        if self._display is None:
            raise KeyStateError("the key state reader is closed")
        keys = ctypes.create_string_buffer(32)
        if not self._x11.XQueryKeymap(self._display, keys):
            raise KeyStateError("the X server did not answer XQueryKeymap")
        return bool(keys.raw[self._keycode // 8] & (1 << (self._keycode % 8)))

    def close(self) -> None:
        display, self._display = self._display, None
        if display:
            self._x11.XCloseDisplay(display)


def _qt_display_name() -> str | None:
    """The X display Qt is connected to; None when Qt is not on X11."""
    app = QGuiApplication.instance()
    if not isinstance(app, QGuiApplication) or QGuiApplication.platformName() != "xcb":
        return None
    try:
        display = int(app.nativeInterface().display())  # type: ignore[attr-defined]
        name = _libx11().XDisplayString(ctypes.c_void_p(display)) if display else None
    except (AttributeError, OSError, RuntimeError, TypeError) as exc:
        log.debug("no X display from Qt: %s", exc)
        return None
    return name.decode() if name else None


def open_key_state() -> KeyState | None:
    """A reader of Space's state on Qt's X display, or None where it cannot be read."""
    name = _qt_display_name()
    if name is None:
        return None
    try:
        return X11KeyState(name)
    except KeyStateError as exc:
        log.warning("Space's state cannot be read from the X server: %s", exc)
        return None
