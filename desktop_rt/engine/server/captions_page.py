"""The caption page's own listener: a read-only page and feed for screens on the LAN.

:class:`CaptionShareServer` is a second websockets server, on its own thread and loop, apart
from the realtime API (why: docs/design/captions_page.md). Call order: construct with a
:class:`CaptionShareConfig` (its ``token`` is the viewers' secret, not the API key),
:meth:`~CaptionShareServer.start` (returns once listening; :class:`CaptionShareError` if it
cannot), :meth:`~CaptionShareServer.follow` a running server's
:class:`~desktop_rt.engine.server.captions_feed.CaptionBroadcaster` (again after a restart;
None shows nothing), :meth:`~CaptionShareServer.stop`.

Routes, every one needing ``?token=<token>`` (else 403 with no other content) and refusing an
``Origin`` other than the listener's own (403): ``GET /captions``, the page (HTML with its
script and style inline, from ``desktop_rt/resources/captions.*``); ``/captions/feed``, a
websocket sending :mod:`~desktop_rt.engine.server.captions_board` frames as JSON text. The feed
takes no commands: a viewer that sends anything is closed (1008). Anything else is 404.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from http import HTTPStatus
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from desktop_rt.engine.server.captions_feed import CaptionBroadcaster, ViewerFanout
from desktop_rt.errors import DesktopRtError

__all__ = [
    "PAGE_PATH",
    "FEED_PATH",
    "CaptionShareConfig",
    "CaptionShareError",
    "CaptionShareServer",
    "lan_address",
    "page_html",
]

PAGE_PATH = "/captions"
FEED_PATH = "/captions/feed"
_PAGE_HEADERS = {
    "Content-Type": "text/html; charset=utf-8",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",  # the token is in the URL
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    ),
}


log = logging.getLogger(__name__)


class _QuietHandshakes(logging.LoggerAdapter[logging.Logger]):
    """websockets' logger for this listener: a browser's idle preconnect that closes before
    sending a request is one DEBUG line, not an ERROR with a traceback."""

    def log(self, level: int, msg: object, *args: Any, **kwargs: Any) -> None:
        if msg == "opening handshake failed":
            level, kwargs["exc_info"] = logging.DEBUG, False
        super().log(level, msg, *args, **kwargs)


class CaptionShareError(DesktopRtError):
    """The caption listener could not start (port in use, bad address, no token)."""


@dataclass(frozen=True)
class CaptionShareConfig:
    token: str
    """The viewers' secret, in the page's URL; at least 16 characters."""
    host: str = "0.0.0.0"
    """Every interface: the point is other screens on the LAN."""
    port: int = 8778
    queue_size: int = 64
    """Frames waiting for one viewer; a viewer further behind gets the whole text again."""
    max_viewers: int = 200
    clean: Callable[[str], str] | None = None
    """The window's filter for non-speech text, applied to every text a viewer is sent (the
    app passes ``history.speech_text.clean_speech_text``); None sends the text as it came."""


def page_html() -> str:
    """The page: ``captions.html`` with ``captions.css`` and ``captions.js`` put inline."""
    folder = resources.files("desktop_rt").joinpath("resources")
    html = folder.joinpath("captions.html").read_text("utf-8")
    css = folder.joinpath("captions.css").read_text("utf-8")
    script = folder.joinpath("captions.js").read_text("utf-8")
    return html.replace("/*CAPTIONS_CSS*/", css).replace("/*CAPTIONS_JS*/", script)


def lan_address() -> str:
    """This machine's address on its LAN as other screens reach it (127.0.0.1 if none).

    A UDP socket "connected" to a public address picks the outgoing interface; no packet is sent.
    """
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed anywhere
        address = probe.getsockname()[0]
        if isinstance(address, str) and not address.startswith("0."):
            return address
    with contextlib.suppress(OSError):
        return socket.gethostbyname(socket.gethostname())
    return "127.0.0.1"


def _same_origin(origin: str | None, host: str) -> bool:
    """No Origin (not a browser), or a page of this very listener (``http(s)://<Host>``)."""
    if origin is None:
        return True
    parts = urlsplit(origin.strip())
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.strip().lower()


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class CaptionShareServer:
    """See the module docstring."""

    def __init__(self, config: CaptionShareConfig):
        if len(config.token) < 16:
            raise CaptionShareError("The viewer token must be at least 16 characters long.")
        self.config = config
        self.port: int | None = None
        self.fanout: ViewerFanout | None = None
        self._html = page_html()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Future[None] | None = None
        self._error: BaseException | None = None
        self._source: CaptionBroadcaster | None = None
        self._connections: set[ServerConnection] = set()

    def page_url(self, address: str | None = None) -> str:
        """The page's URL with its token, on ``address`` (default: :func:`lan_address`)."""
        host = address or lan_address()
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}{PAGE_PATH}?token={self.config.token}"

    @property
    def viewer_count(self) -> int:
        return len(self.fanout.viewers) if self.fanout is not None else 0

    def start(self) -> None:
        """Listen; returns once listening. Raises :class:`CaptionShareError`."""
        if self._thread is not None:
            raise CaptionShareError("The caption page is already shared.")
        self._ready.clear()
        self._thread = threading.Thread(target=self._main, name="desktop-rt-captions", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            error, self._error = self._error, None
            self._thread.join()
            self._thread = None
            where = f"{self.config.host}:{self.config.port}"
            raise CaptionShareError(
                f"Could not share captions on {where}: {error}. Another program may use that "
                "port; pick another one (0 picks a free one)."
            ) from error

    def follow(self, source: CaptionBroadcaster | None) -> None:
        """Show ``source``'s captions (any thread); before :meth:`start`, from the start."""
        self._source = source
        if self.fanout is not None:
            self.fanout.follow(source)

    def replace_token(self, token: str) -> None:
        """Use ``token`` from now on (any thread): pages opened with the old one are closed."""
        if len(token) < 16:
            raise CaptionShareError("The viewer token must be at least 16 characters long.")
        self.config = replace(self.config, token=token)
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop already closed
                loop.call_soon_threadsafe(self._close_viewers)

    def _close_viewers(self) -> None:
        for ws in list(self._connections):
            asyncio.get_running_loop().create_task(ws.close(1008, "this link was replaced"))

    def stop(self, timeout: float = 10.0) -> None:
        """Close every viewer and the listener (blocks until done, at most ``timeout``)."""
        loop, thread, stop = self._loop, self._thread, self._stop
        if loop is not None and stop is not None:
            with contextlib.suppress(RuntimeError):  # the loop already closed
                loop.call_soon_threadsafe(_settle, stop)
        if thread is not None:
            thread.join(timeout)
        self._thread = self._loop = self._stop = None
        self.fanout = None

    def __enter__(self) -> CaptionShareServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- the listener's thread ------------------------------------------------------------

    def _main(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._serve())
        except (OSError, ValueError) as exc:
            self._error = exc
        finally:
            self._ready.set()
            loop.close()

    async def _serve(self) -> None:
        cfg = self.config
        self._stop = asyncio.get_running_loop().create_future()
        fanout = ViewerFanout(asyncio.get_running_loop(), cfg.queue_size, cfg.clean)
        async with serve(
            self._viewer,
            cfg.host,
            cfg.port,
            process_request=self._process_request,
            compression=None,
            server_header="desktop-rt",
            max_size=4096,  # viewers send nothing worth reading
            logger=_QuietHandshakes(log),
        ) as server:
            self.port = next(iter(server.sockets)).getsockname()[1]
            self.fanout = fanout
            fanout.follow(self._source)
            self._ready.set()
            await self._stop
            await self._close(server, fanout)

    @staticmethod
    async def _close(server: Server, fanout: ViewerFanout) -> None:
        fanout.close()
        server.close(close_connections=True)
        await server.wait_closed()

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        """403 for a wrong token or a foreign origin; the page; None opens the feed."""
        parts = urlsplit(request.path)
        tokens = parse_qs(parts.query).get("token", [])
        good = len(tokens) == 1 and hmac.compare_digest(
            tokens[0].encode("utf-8", "surrogateescape"), self.config.token.encode("utf-8")
        )
        origins, hosts = request.headers.get_all("Origin"), request.headers.get_all("Host")
        if not good or len(origins) > 1 or len(hosts) != 1:
            return connection.respond(HTTPStatus.FORBIDDEN, "Forbidden\n")
        if not _same_origin(origins[0] if origins else None, hosts[0]):
            return connection.respond(HTTPStatus.FORBIDDEN, "Forbidden\n")
        path = parts.path.rstrip("/") or "/"
        if path == PAGE_PATH:
            response = connection.respond(HTTPStatus.OK, self._html)
            del response.headers["Content-Type"]
            response.headers.update(_PAGE_HEADERS)
            return response
        if path != FEED_PATH:
            return connection.respond(HTTPStatus.NOT_FOUND, "Not found\n")
        if self.viewer_count >= self.config.max_viewers:
            return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE, "Too many viewers\n")
        return None

    async def _viewer(self, ws: ServerConnection) -> None:
        """One page's feed: frames out; anything the page sends closes it (read-only)."""
        fanout = self.fanout
        if fanout is None:
            return
        viewer = fanout.join()
        self._connections.add(ws)

        async def send() -> None:
            while True:
                await ws.send(fanout.next_text(await viewer.queue.get()))

        sender = asyncio.get_running_loop().create_task(send())
        try:
            async for _message in ws:
                await ws.close(1008, "this caption feed is read-only")
                break
        except ConnectionClosed:
            pass
        finally:
            fanout.leave(viewer)
            self._connections.discard(ws)
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                await sender
