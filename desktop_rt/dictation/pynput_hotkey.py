"""The global shortcut on Windows and macOS: pynput's key listener, read on a thread of its own.

:class:`PynputHotkey` follows the :class:`~desktop_rt.dictation.shortcut.Shortcut` through a
``pynput.keyboard.Listener`` (a low-level hook on Windows, a Quartz event tap on macOS; on X11
pynput records the keys through the RECORD extension, which is how the tests run it) and feeds
the shortcut's presses and releases to a :class:`~desktop_rt.dictation.gesture.HotkeyGesture`:
hold to talk or tap to toggle, a held key's auto-repeat absorbed by the gesture's grace period,
as the X11 hotkey does. :class:`ShortcutFilter` decides which key events are the shortcut's.
The listener's callbacks only stamp the event and queue it (Windows removes a hook that answers
slowly); the hotkey thread decides and reports each START or STOP to ``on_action``.

Unlike the X11 key grab, the listener only watches: the shortcut's keys also reach the focused
application (a Ctrl+Alt+key combination is a no-op in most). :meth:`~PynputHotkey.start` raises
:class:`~desktop_rt.dictation.errors.DictationError` for a key name pynput does not know, a
missing permission (macOS) or a listener that does not run; :meth:`~PynputHotkey.stop` stops
the listener, ends a hold in progress (STOP) and joins the thread.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.gesture import Action, HotkeyGesture
from desktop_rt.dictation.pynput_listener import (
    NO_PERMISSION,
    Permission,
    key_name,
    load_keyboard,
    start_listener,
)
from desktop_rt.dictation.shortcut import MODIFIERS, Shortcut

__all__ = ["PynputHotkey", "ShortcutFilter", "pynput_key_name"]

_KEY_ALIASES = {"return": "enter", "escape": "esc", "del": "delete", "prior": "page_up"}
_KEY_ALIASES |= {"next": "page_down", "pageup": "page_up", "pagedown": "page_down"}


def pynput_key_name(key: str) -> str:
    """The shortcut's key as :func:`~desktop_rt.dictation.pynput_listener.key_name` names it."""
    return _KEY_ALIASES.get(key, key)


class ShortcutFilter:
    """Key names in (:func:`~desktop_rt.dictation.pynput_listener.key_name`), the shortcut's
    presses and releases out. A press of the key counts when exactly the shortcut's modifiers
    are held, or while the shortcut is engaged (its auto-repeat goes on after the modifiers were
    let go, as under an X11 grab); :meth:`disengage` when the gesture's hold ended. No I/O."""

    def __init__(self, shortcut: Shortcut):
        self.modifiers = frozenset(shortcut.modifiers)
        self.key = pynput_key_name(shortcut.key)
        self._held: set[str] = set()
        self.engaged = False

    def press(self, name: str | None) -> bool:
        """True when this press is the shortcut's."""
        if name in MODIFIERS:
            self._held.add(name)
            return False
        if name != self.key or not (self.engaged or self._held == self.modifiers):
            return False
        self.engaged = True
        return True

    def release(self, name: str | None) -> bool:
        """True when this release is the shortcut key's, while engaged."""
        if name in MODIFIERS:
            self._held.discard(name)
            return False
        return name == self.key and self.engaged

    def disengage(self) -> None:
        self.engaged = False


@dataclass(frozen=True)
class _KeyEvent:
    pressed: bool
    name: str | None
    at: float  # time.monotonic() when the listener saw it


class PynputHotkey:
    """See the module docstring."""

    def __init__(
        self,
        shortcut: Shortcut,
        gesture: HotkeyGesture,
        on_action: Callable[[Action], None],
        permission: Permission = NO_PERMISSION,
    ):
        self.shortcut = shortcut
        self._gesture = gesture
        self._on_action = on_action
        self.permission = permission
        self._filter = ShortcutFilter(shortcut)
        self._events: queue.Queue[_KeyEvent | None] = queue.Queue()
        self._keyboard: ModuleType | None = None
        self._listener: Any = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        keyboard = load_keyboard()
        key = self._filter.key
        if len(key) != 1 and key not in keyboard.Key.__members__:
            raise DictationError(
                f"The dictation shortcut {self.shortcut} names a key this keyboard does not have."
            )
        self._keyboard = keyboard
        listener = keyboard.Listener(on_press=self._pressed, on_release=self._released)
        start_listener(listener, self.permission)
        self._listener = listener  # only a running listener is stopped (pynput's stop waits)
        self._thread = threading.Thread(target=self._run, name="desktop-rt-hotkey", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._listener is not None:
            self._listener.stop()
            self._listener = None
        if self._thread is not None:
            self._events.put(None)
            self._thread.join(10)
            self._thread = None

    # ---- the listener's thread: stamp and queue, nothing more -------------------------------

    def _pressed(self, key: object, injected: bool) -> None:
        self._queue_event(True, key, injected)

    def _released(self, key: object, injected: bool) -> None:
        self._queue_event(False, key, injected)

    def _queue_event(self, pressed: bool, key: object, injected: bool) -> None:
        if injected or self._keyboard is None:
            return  # keys a program sent (our own typing among them) are not the user's
        self._events.put(_KeyEvent(pressed, key_name(key, self._keyboard), time.monotonic()))

    # ---- the hotkey thread ------------------------------------------------------------------

    def _run(self) -> None:
        deadline: float | None = None
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                event = self._events.get(timeout=wait)
            except queue.Empty:  # the grace after a release passed with no press: it ended
                deadline = None
                self._filter.disengage()
                self._act(self._gesture.expire(time.monotonic()))
                continue
            if event is None:
                break
            deadline = self._handle(event, deadline)
        self._filter.disengage()
        self._act(self._gesture.cancel())

    def _handle(self, event: _KeyEvent, deadline: float | None) -> float | None:
        if event.pressed and self._filter.press(event.name):
            self._act(self._gesture.press(event.at))
            return None
        if not event.pressed and self._filter.release(event.name):
            return self._gesture.release(event.at)
        return deadline

    def _act(self, action: Action | None) -> None:
        if action is not None:
            self._on_action(action)
