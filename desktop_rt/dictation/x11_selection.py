"""The X11 CLIPBOARD as the paste typer uses it: read its text, own it, serve it, give it back.

:class:`X11Clipboard` works on a display connection owned by one thread (python-xlib
connections are not thread-safe) and must be driven from that thread: :meth:`~X11Clipboard.read`
asks the current owner for its text (ICCCM ``ConvertSelection`` to ``UTF8_STRING``, answered by
a ``SelectionNotify``); :meth:`~X11Clipboard.own` makes this client the owner of some text;
:meth:`~X11Clipboard.pump` answers other clients' requests for it (``TARGETS`` and the text
targets) and counts the text handed out (:attr:`~X11Clipboard.text_served`), which tells the
paste typer that the target application took the paste; :meth:`~X11Clipboard.release` gives
ownership up. Another client's copy takes the selection away (``SelectionClear``). Text only:
content the owner cannot give as text (an image, files) reads as :data:`UNREADABLE`.
"""

from __future__ import annotations

import select
import time
from dataclasses import dataclass
from typing import Any, Literal

from Xlib import X, Xatom, display
from Xlib.protocol import event as xevent
from Xlib.protocol import request

__all__ = ["ClipboardContent", "X11Clipboard", "EMPTY", "UNREADABLE"]

ContentKind = Literal["empty", "text", "unreadable"]


@dataclass(frozen=True)
class ClipboardContent:
    """What the clipboard held: nothing, text, or something that is not text (or no answer)."""

    kind: ContentKind
    text: str = ""


EMPTY = ClipboardContent("empty")
UNREADABLE = ClipboardContent("unreadable")
_TEXT_TARGETS = ("UTF8_STRING", "STRING", "TEXT", "text/plain;charset=utf-8", "text/plain")


class X11Clipboard:
    """See the module docstring."""

    def __init__(self, connection: display.Display):
        self._display = connection
        self._window = connection.screen().root.create_window(0, 0, 1, 1, 0, X.CopyFromParent)
        self._clipboard = connection.intern_atom("CLIPBOARD")
        self._targets = connection.intern_atom("TARGETS")
        self._utf8 = connection.intern_atom("UTF8_STRING")
        self._text = connection.intern_atom("TEXT")
        self._incr = connection.intern_atom("INCR")
        self._landing = connection.intern_atom("DESKTOP_RT_CLIPBOARD")
        self._text_atoms = {connection.intern_atom(name): name for name in _TEXT_TARGETS}
        self.content: str | None = None
        """The text this client serves while it owns the clipboard (None: it does not)."""
        self.text_served = 0
        """How many requests for the text were answered since this object was made."""
        self._notified: Any = None

    # ---- reading ----------------------------------------------------------------------------

    def read(self, timeout: float) -> ClipboardContent:
        """The clipboard's text now (this client's own when it is the owner)."""
        owner = self._display.get_selection_owner(self._clipboard)
        if owner != self._window:
            self.content = None  # someone copied since, its SelectionClear not read yet
        if self.content is not None:
            return ClipboardContent("text", self.content)
        if owner == X.NONE:
            return EMPTY
        self._notified = None
        self._window.convert_selection(self._clipboard, self._utf8, self._landing, X.CurrentTime)
        self._display.flush()
        deadline = time.monotonic() + timeout
        while self._notified is None and time.monotonic() < deadline:
            self.pump(deadline - time.monotonic())
        notified, self._notified = self._notified, None
        if notified is None or notified.property == X.NONE:
            return UNREADABLE  # no answer, or no text (an image, files)
        reply = self._window.get_full_property(self._landing, X.AnyPropertyType)
        self._window.delete_property(self._landing)
        if reply is None or reply.property_type == self._incr or reply.format != 8:
            return UNREADABLE  # INCR: a very large clipboard, not restored by this client
        value = reply.value
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        return ClipboardContent("text", text)

    # ---- owning -----------------------------------------------------------------------------

    def own(self, text: str) -> None:
        """Serve ``text`` as the clipboard from now on."""
        self.content = text
        self._window.set_selection_owner(self._clipboard, X.CurrentTime)
        self._display.flush()

    def release(self) -> None:
        """Leave the clipboard empty (when this client owns it)."""
        if self.content is not None:
            self.content = None
            request.SetSelectionOwner(
                display=self._display.display,
                window=X.NONE,
                selection=self._clipboard,
                time=X.CurrentTime,
            )
            self._display.flush()

    def restore(self, previous: ClipboardContent) -> None:
        """Put back what :meth:`read` found: its text (served by this client) or nothing."""
        if previous.kind == "text":
            self.own(previous.text)
        else:
            self.release()

    # ---- events -----------------------------------------------------------------------------

    def pump(self, timeout: float) -> None:
        """Handle the events that arrive within ``timeout`` seconds (at least those queued)."""
        if not self._display.pending_events():
            readable, _, _ = select.select([self._display.fileno()], [], [], max(0.0, timeout))
            if not readable:
                return
        for _ in range(self._display.pending_events()):
            self.handle(self._display.next_event())

    def handle(self, event: Any) -> None:
        """One X event read from this connection (others are ignored)."""
        if event.type == X.SelectionNotify and event.requestor == self._window:
            self._notified = event
        elif event.type == X.SelectionClear and event.atom == self._clipboard:
            self.content = None  # another client copied something
        elif event.type == X.SelectionRequest:
            self._answer(event)

    def _answer(self, request: Any) -> None:
        """Give ``request``'s client the text (or the targets), or refuse it."""
        prop = request.property if request.property != X.NONE else request.target
        content = self.content
        if content is None or request.selection != self._clipboard:
            prop = X.NONE
        elif request.target == self._targets:
            atoms = [self._targets, *self._text_atoms]
            request.requestor.change_property(prop, Xatom.ATOM, 32, atoms)
        elif request.target in self._text_atoms:
            request.requestor.change_property(prop, *self._encoded(request.target, content))
            self.text_served += 1
        else:
            prop = X.NONE
        notify = xevent.SelectionNotify(
            time=request.time,
            requestor=request.requestor,
            selection=request.selection,
            target=request.target,
            property=prop,
        )
        request.requestor.send_event(notify)
        self._display.flush()

    def _encoded(self, target: int, text: str) -> tuple[int, int, bytes]:
        """(type, format, data) of ``text`` for ``target``: ``STRING`` is Latin-1 (ICCCM);
        ``TEXT`` lets the owner choose, and gets UTF-8."""
        if target == Xatom.STRING:
            return Xatom.STRING, 8, text.encode("latin-1", "replace")
        return (self._utf8 if target == self._text else target), 8, text.encode("utf-8")
