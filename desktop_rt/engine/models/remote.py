"""Models served by a realtime transcription server elsewhere: :class:`RemoteRuntime`.

A ``remote`` entry names the server's ``options.url`` (``ws://`` or ``wss://``; a URL without a
path gets ``/v1/realtime``). Starting it starts nothing: it reads the API key from the
environment variable ``options.api_key_env`` (sent as ``Authorization: Bearer``) and builds the
TLS context, which verifies the server's certificate against the system's CAs plus
``options.ca_file``. A connection is joined to the URL with the client's query kept and
``model`` set to ``options.upstream_model`` (default: the entry's id). The client's own
credentials never leave this machine.
"""

from __future__ import annotations

import os
import ssl
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from desktop_rt.engine.models.entry import ModelEntry
from desktop_rt.engine.models.proxy import ProxiedRuntime, UpstreamTarget, upstream_query
from desktop_rt.engine.models.router_types import ModelLoadError

__all__ = ["RemoteRuntime", "remote_url", "REALTIME_PATH"]

REALTIME_PATH = "/v1/realtime"


def remote_url(base: str, request_path: str, model: str) -> str:
    """``base`` with its own query, then the client's (``model`` replaced by ``model``)."""
    parts = urlsplit(base)
    own = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "model"]
    client = parse_qsl(upstream_query(request_path, model), keep_blank_values=True)
    taken = {k for k, _ in own}
    query = urlencode(own + [(k, v) for k, v in client if k not in taken or k == "model"])
    path = parts.path if parts.path not in ("", "/") else REALTIME_PATH
    return urlunsplit((parts.scheme, parts.netloc, path, query, ""))


class RemoteRuntime(ProxiedRuntime):
    """One ``remote`` entry. ``start`` raises :class:`ModelLoadError` for a missing key or CA."""

    def __init__(self, entry: ModelEntry):
        self.entry = entry
        self.url = str(entry.option("url", ""))
        self._headers: tuple[tuple[str, str], ...] = ()
        self._ssl: ssl.SSLContext | None = None
        self._started = False

    @property
    def alive(self) -> bool:
        return self._started

    async def start(self) -> None:
        key_env = self.entry.option("api_key_env")
        if key_env:
            key = os.environ.get(str(key_env), "")
            if not key:
                raise ModelLoadError(
                    f"the environment variable {key_env} (options.api_key_env of "
                    f"'{self.entry.id}') is not set; set it to the remote server's API key"
                )
            if key != key.strip() or any(ch in key for ch in "\r\n"):
                raise ModelLoadError(
                    f"the environment variable {key_env} holds spaces or line breaks around "
                    f"the key; set it to the key alone"
                )
            self._headers = (("Authorization", f"Bearer {key}"),)
        if urlsplit(self.url).scheme == "wss":
            self._ssl = self._context()
        self._started = True

    def _context(self) -> ssl.SSLContext:
        context = ssl.create_default_context()
        ca_file = self.entry.option("ca_file")
        if ca_file:
            try:
                context.load_verify_locations(cafile=str(ca_file))
            except (OSError, ssl.SSLError) as exc:
                raise ModelLoadError(
                    f"options.ca_file of '{self.entry.id}' ({ca_file}) cannot be used as "
                    f"PEM certificates: {exc}"
                ) from None
        return context

    async def stop(self) -> None:
        self._started = False

    def upstream(self, request_path: str) -> UpstreamTarget:
        model = str(self.entry.option("upstream_model") or self.entry.id)
        url = remote_url(self.url, request_path, model)
        return UpstreamTarget(url, self._headers, self._ssl, what=f"the remote server {self.url}")
