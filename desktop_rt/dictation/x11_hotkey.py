"""The global shortcut on X11: a passive key grab on the root window, read on a thread of its own.

:class:`X11Hotkey` grabs the :class:`~desktop_rt.dictation.shortcut.Shortcut` (also with Caps
Lock and Num Lock on) and feeds the presses and releases to a
:class:`~desktop_rt.dictation.gesture.HotkeyGesture`, less the auto-repeat pairs it can see
(a release and a press with the same server time, read together; the gesture's grace period
catches a pair split between reads, so it can be short); each START or STOP goes to ``on_action``,
called on the hotkey thread (the caller hands it on: the Qt adapter through a queued signal).
:meth:`~X11Hotkey.start` raises :class:`~desktop_rt.dictation.errors.DictationError` when the
display cannot be reached, the key name is unknown or another application holds the shortcut;
:meth:`~X11Hotkey.stop` releases the grab and joins the thread.
"""

from __future__ import annotations

import logging
import os
import select
import threading
import time
from collections.abc import Callable, Sequence

from Xlib import XK, X, display, error
from Xlib.protocol import event as xevent

from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.gesture import Action, HotkeyGesture
from desktop_rt.dictation.shortcut import Shortcut

__all__ = ["X11Hotkey"]

log = logging.getLogger(__name__)

_MASKS = {"ctrl": X.ControlMask, "alt": X.Mod1Mask, "shift": X.ShiftMask, "super": X.Mod4Mask}
_LOCKS = (0, X.LockMask, X.Mod2Mask, X.LockMask | X.Mod2Mask)  # Caps Lock, Num Lock
_IDLE_WAIT = 1.0
_REPEAT_PAIR_MS = 20  # a release and press this close (server time) are an auto-repeat


def _keysym(key: str) -> int:
    """The keysym of a key name in any case: "space", "f9" (F9), "page_up" (Page_Up), "d"."""
    names = (key, key.upper(), "_".join(part.capitalize() for part in key.split("_")))
    for name in names:
        keysym: int = XK.string_to_keysym(name)
        if keysym != X.NoSymbol:
            return keysym
    return ord(key) if len(key) == 1 else X.NoSymbol


class X11Hotkey:
    """See the module docstring."""

    def __init__(
        self,
        shortcut: Shortcut,
        gesture: HotkeyGesture,
        on_action: Callable[[Action], None],
        display_name: str | None = None,
    ):
        self.shortcut = shortcut
        self._gesture = gesture
        self._on_action = on_action
        self._display_name = display_name
        self._display: display.Display | None = None
        self._keycode = 0
        self._modifiers = 0
        self._wake_r, self._wake_w = -1, -1
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        try:
            self._display = display.Display(self._display_name)
        except (error.DisplayError, error.ConnectionClosedError) as exc:
            raise DictationError(f"Dictation could not reach the X display: {exc}") from exc
        try:
            self._grab()
        except DictationError:
            self._display.close()
            self._display = None
            raise
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._run, name="desktop-rt-hotkey", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            os.write(self._wake_w, b"x")
            self._thread.join(10)
            self._thread = None
            os.close(self._wake_r)
            os.close(self._wake_w)
        if self._display is not None:
            root = self._display.screen().root
            for lock in _LOCKS:
                root.ungrab_key(self._keycode, self._modifiers | lock)
            self._display.close()
            self._display = None

    def _grab(self) -> None:
        assert self._display is not None
        keysym = _keysym(self.shortcut.key)
        keycode = self._display.keysym_to_keycode(keysym) if keysym else 0
        if not keycode:
            raise DictationError(
                f"The dictation shortcut {self.shortcut} names a key this keyboard does not have."
            )
        self._keycode = keycode
        self._modifiers = 0
        for name in self.shortcut.modifiers:
            self._modifiers |= _MASKS[name]
        catch = error.CatchError(error.BadAccess)
        root = self._display.screen().root
        for lock in _LOCKS:
            root.grab_key(
                keycode,
                self._modifiers | lock,
                True,
                X.GrabModeAsync,
                X.GrabModeAsync,
                onerror=catch,
            )
        self._display.sync()
        if catch.get_error() is not None:
            for lock in _LOCKS:
                root.ungrab_key(keycode, self._modifiers | lock)
            self._display.sync()
            raise DictationError(
                f"Another application already uses {self.shortcut}: choose another dictation "
                "shortcut in Settings."
            )

    def _run(self) -> None:
        assert self._display is not None
        deadline: float | None = None
        fileno = self._display.fileno()
        while not self._stop.is_set():
            wait = _IDLE_WAIT if deadline is None else max(0.0, deadline - time.monotonic())
            select.select([fileno, self._wake_r], [], [], wait)
            try:
                events = []
                while self._display.pending_events():
                    events.append(self._display.next_event())
                deadline = self._handle_batch(events, deadline)
            except (error.ConnectionClosedError, OSError):
                log.exception("the X connection of the dictation shortcut closed")
                return
            if deadline is not None and time.monotonic() >= deadline:
                deadline = None
                self._act(self._gesture.expire(time.monotonic()))
        self._act(self._gesture.cancel())

    def _handle_batch(self, events: Sequence[object], deadline: float | None) -> float | None:
        """Handle the events read together; a release and a press of the key with the same
        server time are one auto-repeat (X sends them as a pair): both are dropped."""
        index = 0
        while index < len(events):
            event = events[index]
            after = events[index + 1] if index + 1 < len(events) else None
            if self._is_repeat(event, after):
                index += 2
                continue
            deadline = self._handle(event, deadline)
            index += 1
        return deadline

    def _is_repeat(self, release: object, press: object) -> bool:
        return (
            isinstance(release, xevent.KeyRelease)
            and isinstance(press, xevent.KeyPress)
            and release.detail == press.detail == self._keycode
            and abs(press.time - release.time) <= _REPEAT_PAIR_MS
        )

    def _handle(self, event: object, deadline: float | None) -> float | None:
        now = time.monotonic()
        if isinstance(event, xevent.KeyPress) and event.detail == self._keycode:
            self._act(self._gesture.press(now))
            return None
        if isinstance(event, xevent.KeyRelease) and event.detail == self._keycode:
            return self._gesture.release(now)
        return deadline

    def _act(self, action: Action | None) -> None:
        if action is not None:
            self._on_action(action)
