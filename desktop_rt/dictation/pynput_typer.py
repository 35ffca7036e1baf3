"""Text typed into the focused window through pynput, from a thread of its own (Windows, macOS).

:class:`PynputTyper` has the verbs of every :class:`~desktop_rt.dictation.typer.Typer`:
:meth:`~PynputTyper.start` loads pynput and starts a key listener (raises
:class:`~desktop_rt.dictation.errors.DictationError`: pynput missing, permission refused),
:meth:`~PynputTyper.type_text` queues text and returns at once, :meth:`~PynputTyper.wait_idle`
waits until everything queued was typed, :meth:`~PynputTyper.stop` ends the thread. Text goes
through ``pynput.keyboard.Controller.type``: Unicode key events on Windows (SendInput) and macOS
(CGEventPost), so any character is typed whatever the layout. Before each piece the thread
waits until the user holds no key, as the X11 typer does (held Ctrl+Alt would turn letters into
commands); the listener tells it which keys are down. A character pynput cannot type is skipped
(logged) and the rest typed; other failures go to ``on_error``. Paste mode is not offered here
(docs/design/dictation.md): the engine types instead.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from desktop_rt.dictation.pynput_listener import (
    NO_PERMISSION,
    Permission,
    key_name,
    load_keyboard,
    start_listener,
)
from desktop_rt.dictation.text_queue import TextQueue

__all__ = ["PynputTyper", "HeldKeys"]

log = logging.getLogger(__name__)


class HeldKeys:
    """The keys the user holds now, from a listener's presses and releases (thread-safe).

    A release the listener missed (a key let go while the system's secure desktop had the
    keyboard) keeps its key "held" until that key is pressed and released again."""

    def __init__(self) -> None:
        self._held: set[object] = set()
        self._changed = threading.Condition()
        self._woken = False

    @property
    def holding(self) -> bool:
        """Whether any key is held now."""
        with self._changed:
            return bool(self._held)

    def press(self, key: object) -> None:
        with self._changed:
            self._held.add(key)

    def release(self, key: object) -> None:
        with self._changed:
            self._held.discard(key)
            self._changed.notify_all()

    def wait_none(self) -> bool:
        """Block until no key is held (True) or :meth:`wake` was called (False)."""
        with self._changed:
            self._changed.wait_for(lambda: not self._held or self._woken)
            return not self._held

    def wake(self) -> None:
        with self._changed:
            self._woken = True
            self._changed.notify_all()


class PynputTyper:
    """See the module docstring."""

    def __init__(
        self,
        on_error: Callable[[str], None] | None = None,
        permission: Permission = NO_PERMISSION,
    ):
        self._on_error = on_error or (lambda message: None)
        self.permission = permission
        self._texts = TextQueue()
        self.held = HeldKeys()
        self._keyboard: Any = None
        self._controller: Any = None
        self._listener: Any = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        keyboard = load_keyboard()
        self._keyboard = keyboard
        listener = keyboard.Listener(on_press=self._pressed, on_release=self._released)
        start_listener(listener, self.permission)
        self._listener = listener  # only a running listener is stopped (pynput's stop waits)
        self._controller = keyboard.Controller()
        self._thread = threading.Thread(target=self._run, name="desktop-rt-typer", daemon=True)
        self._thread.start()

    def type_text(self, text: str) -> None:
        self._texts.put(text)

    def wait_idle(self, timeout: float) -> bool:
        """True once everything queued so far was typed (False after ``timeout`` seconds)."""
        return self._texts.wait_idle(timeout)

    def stop(self) -> None:
        self.held.wake()
        self._texts.close()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
        self._controller = None  # pynput's X11 controller closes its connection when collected
        if self._listener is not None:
            self._listener.stop()
            self._listener = None

    # ---- the listener's thread --------------------------------------------------------------

    def _pressed(self, key: object, injected: bool) -> None:
        if not injected:  # our own typing is not the user's keys
            self.held.press(self._identity(key))

    def _released(self, key: object, injected: bool) -> None:
        if not injected:
            self.held.release(self._identity(key))

    def _identity(self, key: object) -> object:
        """The same for a key's press and release (Shift may change its character between)."""
        if isinstance(key, self._keyboard.Key):
            return key
        return key_name(key, self._keyboard) or key

    # ---- the typing thread ------------------------------------------------------------------

    def _run(self) -> None:
        for text in self._texts.texts():
            try:
                if self.held.wait_none():
                    self._type(text)
            except Exception as exc:  # pynput's backends raise their own types (OSError, X)
                log.exception("typing failed")
                self._on_error(f"Dictation could not type into the focused window: {exc}")
            finally:
                self._texts.done()

    def _type(self, text: str) -> None:
        """Type ``text``; a character pynput cannot type is skipped and the rest typed."""
        controller = self._controller
        while text:
            try:
                controller.type(text)
                return
            except controller.InvalidCharacterException as exc:
                index, char = exc.args
                log.warning("dictation skipped a character it cannot type: %r", char)
                text = text[index + 1 :]
