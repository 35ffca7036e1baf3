"""Text typed into the focused X11 window through XTest, from a thread of its own.

:class:`X11Typer`: :meth:`~X11Typer.start` connects (raises
:class:`~desktop_rt.dictation.errors.DictationError` when there is no display or no XTest),
:meth:`~X11Typer.type_text` queues text and returns at once, :meth:`~X11Typer.wait_idle` waits
until everything queued was typed, :meth:`~X11Typer.stop` ends the thread and restores the
keyboard map. Before each piece of text the thread waits until no key is held (the user may
still hold the shortcut: its modifiers would turn letters into commands, and its grab would take
the keys). A character that no key
of the layout types (at its first or shifted level) is mapped for a while onto a spare keycode
from a small rotating pool (docs/design/dictation.md explains why the mapping is not undone
right after the key press). ``on_error(message)`` reports a failure of the thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from Xlib import XK, X, display, error
from Xlib.ext import xtest

from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.keys import keysym_for
from desktop_rt.dictation.text_queue import TextQueue

__all__ = ["X11Typer"]

log = logging.getLogger(__name__)

_POLL_SECONDS = 0.01
_SETTLE_SECONDS = 0.05  # after a keyboard map change, before its keys are pressed


class X11Typer:
    """See the module docstring."""

    def __init__(
        self, display_name: str | None = None, on_error: Callable[[str], None] | None = None
    ):
        self._display_name = display_name
        self._on_error = on_error or (lambda message: None)
        self._texts = TextQueue()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._display: display.Display | None = None
        self._spares: list[int] = []
        self._mapped: dict[int, int] = {}  # keysym -> the spare keycode it is mapped on now
        self._shift = 0

    def start(self) -> None:
        try:
            self._display = display.Display(self._display_name)
        except (error.DisplayError, error.ConnectionClosedError) as exc:
            raise DictationError(f"Dictation could not reach the X display: {exc}") from exc
        if not self._display.has_extension("XTEST"):
            self._display.close()
            raise DictationError("The X server has no XTest extension: dictation cannot type.")
        self._shift = self._display.keysym_to_keycode(XK.XK_Shift_L)
        self._spares = self._spare_keycodes()
        self._thread = threading.Thread(target=self._run, name="desktop-rt-typer", daemon=True)
        self._thread.start()

    def type_text(self, text: str) -> None:
        self._texts.put(text)

    def wait_idle(self, timeout: float) -> bool:
        """True once everything queued so far was typed (False after ``timeout`` seconds)."""
        return self._texts.wait_idle(timeout)

    def stop(self) -> None:
        self._stop.set()
        self._texts.close()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
        if self._display is not None:
            self._restore()
            self._display.close()
            self._display = None

    # ---- the typing thread ----------------------------------------------------------------------

    def _run(self) -> None:
        for text in self._texts.texts():
            try:
                self._wait_keys_released()
                for segment in self._segments(text):
                    self._map_missing(segment)
                    for char in segment:
                        self._type_char(char)
                assert self._display is not None
                self._display.sync()
            except DictationError as exc:
                self._on_error(str(exc))
            except (error.XError, error.ConnectionClosedError, OSError) as exc:
                log.exception("typing failed")
                self._on_error(f"Dictation could not type into the focused window: {exc}")
            except ValueError as exc:  # a control character: skipped, the rest is typed
                log.warning("dictation skipped a character: %s", exc)
            finally:
                self._texts.done()

    def _wait_keys_released(self) -> None:
        """Wait while any key is down: held modifiers would turn letters into commands, and
        while the shortcut's key is down its grab sends every key event to the shortcut."""
        assert self._display is not None
        while not self._stop.is_set() and any(self._display.query_keymap()):
            self._stop.wait(_POLL_SECONDS)  # the user's own keys: nothing to wait on but polling

    def _type_char(self, char: str) -> None:
        assert self._display is not None
        keysym = keysym_for(char)
        keycode, shifted = self._keycode_for(keysym)
        if shifted:
            xtest.fake_input(self._display, X.KeyPress, self._shift)
        xtest.fake_input(self._display, X.KeyPress, keycode)
        xtest.fake_input(self._display, X.KeyRelease, keycode)
        if shifted:
            xtest.fake_input(self._display, X.KeyRelease, self._shift)

    def _layout_key(self, keysym: int) -> tuple[int, bool] | None:
        """(keycode, shifted) of a key of the layout typing ``keysym``, or None."""
        assert self._display is not None
        for keycode, index in self._display.keysym_to_keycodes(keysym):
            if index in (0, 1) and keycode not in self._spares:
                return keycode, index == 1
        return None

    def _keycode_for(self, keysym: int) -> tuple[int, bool]:
        found = self._layout_key(keysym)
        if found is not None:
            return found
        keycode = self._mapped.get(keysym)
        if keycode is None:
            raise DictationError("The keyboard map has no spare key to type this character.")
        return keycode, False

    def _missing(self, text: str) -> list[int]:
        """The keysyms of ``text`` that neither the layout nor a spare key types now, in order."""
        keysyms = dict.fromkeys(keysym_for(char) for char in text)
        return [k for k in keysyms if k not in self._mapped and self._layout_key(k) is None]

    def _segments(self, text: str) -> list[str]:
        """``text`` cut so that no piece needs more spare keys than there are."""
        pieces, start, needed = [], 0, set()
        for index, char in enumerate(text):
            needed.update(self._missing(char))
            if len(needed) > len(self._spares) and index > start:
                pieces.append(text[start:index])
                start, needed = index, set(self._missing(char))
        pieces.append(text[start:])
        return pieces

    def _map_missing(self, segment: str) -> None:
        """Map every keysym ``segment`` lacks onto spare keys at once, then let clients see it.

        The least recently mapped spares are reused; a client reads the new map when it
        handles the MappingNotify, so the keys are pressed only after a short settle.
        """
        assert self._display is not None
        missing = self._missing(segment)
        if not missing:
            return
        keep = {
            self._mapped[k] for k in dict.fromkeys(map(keysym_for, segment)) if k in self._mapped
        }
        for keysym in missing:
            keycode = next((c for c in self._spares if c not in keep), None)
            if keycode is None:
                raise DictationError("The keyboard map has no spare key to type this character.")
            self._spares.remove(keycode)
            self._spares.append(keycode)  # rotates: used again only after every other spare
            keep.add(keycode)
            self._mapped = {k: c for k, c in self._mapped.items() if c != keycode}
            self._mapped[keysym] = keycode
            self._display.change_keyboard_mapping(keycode, [(keysym, keysym)])
        self._display.sync()
        self._stop.wait(_SETTLE_SECONDS)

    def _spare_keycodes(self) -> list[int]:
        """Keycodes with no keysym at all, the highest first (up to 32)."""
        assert self._display is not None
        first = self._display.display.info.min_keycode
        count = self._display.display.info.max_keycode - first + 1
        mapping = self._display.get_keyboard_mapping(first, count)
        empty = [first + i for i, syms in enumerate(mapping) if not any(syms)]
        return empty[::-1][:32]

    def _restore(self) -> None:
        assert self._display is not None
        try:
            for keycode in set(self._mapped.values()):
                self._display.change_keyboard_mapping(keycode, [(X.NoSymbol, X.NoSymbol)])
            self._display.sync()
        except (error.XError, error.ConnectionClosedError, OSError):
            log.warning("could not restore the keyboard map", exc_info=True)
        self._mapped = {}
