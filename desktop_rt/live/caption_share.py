"""Sharing the window's captions with other screens, without Qt: the caption listener's life.

:class:`CaptionShare` owns at most one
:class:`~desktop_rt.engine.server.captions_page.CaptionShareServer`. :meth:`~CaptionShare.apply`
(blocking: call it on a helper thread) makes the listener match the :class:`ShareSettings`:
started, restarted on a new port or token, or stopped; it returns a :class:`ShareState` for the
window. :meth:`~CaptionShare.follow` (any thread, never blocks) points it at the captions of the
running server, again after every restart of the server. Viewers get the text through the
window's own non-speech filter (:func:`~desktop_rt.history.speech_text.clean_speech_text`), so
the page shows what the window shows.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from desktop_rt.config import ShareSettings
from desktop_rt.engine.server.captions_feed import CaptionBroadcaster
from desktop_rt.engine.server.captions_page import (
    CaptionShareConfig,
    CaptionShareError,
    CaptionShareServer,
)
from desktop_rt.history.speech_text import clean_speech_text

__all__ = ["ShareState", "CaptionShare"]


@dataclass(frozen=True)
class ShareState:
    """``url``: the page with its token while shared ("" when off); ``message`` is for people."""

    shared: bool
    url: str = ""
    message: str = ""


class CaptionShare:
    """See the module docstring."""

    def __init__(self, address: str | None = None):
        self._address = address
        """The host put in the page's URL; None: this machine's LAN address."""
        self._server: CaptionShareServer | None = None
        self._source: CaptionBroadcaster | None = None
        self._lock = threading.Lock()

    @property
    def server(self) -> CaptionShareServer | None:
        return self._server

    def follow(self, source: CaptionBroadcaster | None) -> None:
        with self._lock:
            self._source = source
            if self._server is not None:
                self._server.follow(source)

    def apply(self, settings: ShareSettings) -> ShareState:
        """Share (or stop sharing) as ``settings`` say; blocks while a listener starts or stops."""
        if not settings.enabled or not settings.token:
            self.stop()
            return ShareState(False, message="Captions are not shared.")
        wanted = CaptionShareConfig(settings.token, port=settings.port, clean=clean_speech_text)
        current = self._server
        if current is not None and current.config.port == wanted.port:
            if current.config.token != wanted.token:
                current.replace_token(wanted.token)  # same port: old links stop working
            return self._state(current)
        self.stop()
        server = CaptionShareServer(wanted)
        try:
            server.start()
        except CaptionShareError as exc:
            return ShareState(False, message=str(exc))
        with self._lock:
            server.follow(self._source)
            self._server = server
        return self._state(server)

    def stop(self) -> None:
        with self._lock:
            server, self._server = self._server, None
        if server is not None:
            server.stop()

    def _state(self, server: CaptionShareServer) -> ShareState:
        return ShareState(
            True,
            server.page_url(self._address),
            "Anyone on this network who has the link can read the captions; "
            "nobody can control the app through it.",
        )
