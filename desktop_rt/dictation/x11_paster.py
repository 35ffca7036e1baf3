"""Text pasted into the focused X11 window through the clipboard, from a thread of its own.

:class:`X11Paster` is the paste mode's typer (same verbs as
:class:`~desktop_rt.dictation.x11_typer.X11Typer`): :meth:`~X11Paster.start` connects (raises
:class:`~desktop_rt.dictation.errors.DictationError`), :meth:`~X11Paster.type_text` queues text,
:meth:`~X11Paster.wait_idle` waits until it was put in, :meth:`~X11Paster.stop` ends the thread.
For each piece of text the thread waits until no key is held, reads the user's clipboard,
makes the text the clipboard, presses Ctrl+V with XTest, waits until the focused application
fetched the text, then puts the user's clipboard back (this client serves it from then on,
until someone copies something else). What cannot be pasted without losing something is typed
instead, by an :class:`~desktop_rt.dictation.x11_typer.X11Typer`: a clipboard that holds
something other than text (it could not be put back), or a paste the application did not
fetch within ``paste_timeout`` (Ctrl+V is not paste there). See docs/design/dictation.md.
"""

from __future__ import annotations

import logging
import os
import queue
import select
import threading
import time
from collections.abc import Callable

from Xlib import XK, X, display, error
from Xlib.ext import xtest

from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.x11_selection import X11Clipboard
from desktop_rt.dictation.x11_typer import X11Typer

__all__ = ["X11Paster"]

log = logging.getLogger(__name__)

_POLL_SECONDS = 0.01
_READ_SECONDS = 1.0  # the clipboard owner's answer to "your text, please"
_GRACE_SECONDS = 0.1  # after the paste was fetched: a second request of the same paste


class X11Paster:
    """See the module docstring."""

    def __init__(
        self,
        display_name: str | None = None,
        on_error: Callable[[str], None] | None = None,
        *,
        paste_timeout: float = 2.0,
    ):
        self._display_name = display_name
        self._on_error = on_error or (lambda message: None)
        self.paste_timeout = paste_timeout
        self._queue: queue.Queue[str] = queue.Queue()
        self._pending = 0
        self._idle = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._display: display.Display | None = None
        self._clipboard: X11Clipboard | None = None
        self._fallback = X11Typer(display_name, self._on_error)
        self._keys = (0, 0)  # Control_L, v
        self._wake_r, self._wake_w = -1, -1
        self.typed_instead = 0
        """How many pieces were typed rather than pasted (see the module docstring)."""

    def start(self) -> None:
        try:
            self._display = display.Display(self._display_name)
        except (error.DisplayError, error.ConnectionClosedError) as exc:
            raise DictationError(f"Dictation could not reach the X display: {exc}") from exc
        if not self._display.has_extension("XTEST"):
            self._display.close()
            raise DictationError("The X server has no XTest extension: dictation cannot paste.")
        self._fallback.start()
        d = self._display
        self._keys = (d.keysym_to_keycode(XK.XK_Control_L), d.keysym_to_keycode(XK.XK_v))
        self._clipboard = X11Clipboard(d)
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._run, name="desktop-rt-paster", daemon=True)
        self._thread.start()

    def type_text(self, text: str) -> None:
        with self._idle:
            self._pending += 1
        self._queue.put(text)
        self._wake()

    def wait_idle(self, timeout: float) -> bool:
        """True once everything queued so far was pasted (False after ``timeout`` seconds)."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def stop(self) -> None:
        """End the thread. The clipboard this client serves (the user's, put back) goes with
        it, as any X11 application's clipboard goes when it quits."""
        self._stop.set()
        if self._thread is not None:
            self._wake()
            self._thread.join(10)
            self._thread = None
            with self._idle:
                os.close(self._wake_r)
                os.close(self._wake_w)
                self._wake_r, self._wake_w = -1, -1
        self._fallback.stop()
        if self._display is not None:
            self._display.close()
            self._display = None

    def _wake(self) -> None:
        """Wake the paste thread (a no-op before start and after stop)."""
        with self._idle:
            if self._wake_w >= 0:
                os.write(self._wake_w, b"w")

    # ---- the paste thread -----------------------------------------------------------------

    def _run(self) -> None:
        assert self._display is not None and self._clipboard is not None
        fd = self._display.fileno()
        while not self._stop.is_set():
            readable, _, _ = select.select([fd, self._wake_r], [], [])
            if self._wake_r in readable:
                os.read(self._wake_r, 4096)
            try:
                self._clipboard.pump(0)
                while not self._stop.is_set() and not self._queue.empty():
                    self._put_in(self._queue.get_nowait())
            except (error.XError, error.ConnectionClosedError, OSError) as exc:
                log.exception("the clipboard connection failed")
                self._on_error(f"Dictation could not paste into the focused window: {exc}")
                return

    def _put_in(self, text: str) -> None:
        try:
            self._paste(text)
        except DictationError as exc:
            self._on_error(str(exc))
        finally:
            with self._idle:
                self._pending -= 1
                self._idle.notify_all()

    def _paste(self, text: str) -> None:
        clipboard = self._clipboard
        assert clipboard is not None
        self._wait_keys_released()
        previous = clipboard.read(_READ_SECONDS)
        if previous.kind == "unreadable":
            self._type_instead(text, "the clipboard holds something that is not text")
            return
        clipboard.own(text)
        served = clipboard.text_served
        self._press_paste()
        taken = self._serve_until(lambda: clipboard.text_served > served, self.paste_timeout)
        if taken:
            self._serve_until(lambda: False, _GRACE_SECONDS)
        clipboard.restore(previous)
        if not taken:
            self._type_instead(text, "the focused window did not take the paste")

    def _serve_until(self, done: Callable[[], bool], timeout: float) -> bool:
        """Answer clipboard requests until ``done()`` or ``timeout`` seconds; ``done()``."""
        assert self._clipboard is not None
        deadline = time.monotonic() + timeout
        while not done() and not self._stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self._clipboard.pump(left)
        return done()

    def _press_paste(self) -> None:
        assert self._display is not None
        ctrl, v = self._keys
        for kind, keycode in ((X.KeyPress, ctrl), (X.KeyPress, v)):
            xtest.fake_input(self._display, kind, keycode)
        for kind, keycode in ((X.KeyRelease, v), (X.KeyRelease, ctrl)):
            xtest.fake_input(self._display, kind, keycode)
        self._display.sync()

    def _wait_keys_released(self) -> None:
        """Wait while any key is down (held modifiers would change Ctrl+V), serving the
        clipboard meanwhile."""
        assert self._display is not None and self._clipboard is not None
        while not self._stop.is_set() and any(self._display.query_keymap()):
            self._clipboard.pump(_POLL_SECONDS)  # the user's keys: nothing to wait on but polling

    def _type_instead(self, text: str, why: str) -> None:
        log.info("dictation typed instead of pasting: %s", why)
        self.typed_instead += 1
        self._fallback.type_text(text)
        self._fallback.wait_idle(60)
