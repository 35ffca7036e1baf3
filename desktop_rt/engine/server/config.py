"""The settings of one :class:`~desktop_rt.engine.server.server.RealtimeServer`, fixed at start.

Sessions open at once are limited by default (:func:`default_session_limit`, from the machine's
memory and cores at start-up); ``max_sessions`` or models.toml's ``global_concurrency_limit``
override it, and a client over the limit is refused at the handshake with HTTP 429 and a JSON
error naming the limit. Inference's CPU budget is ``worker.cpu_budget``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import psutil

from desktop_rt.engine.asr.streaming import StreamingConfig
from desktop_rt.engine.asr.worker import WorkerConfig
from desktop_rt.engine.models.catalogue import ModelsConfig
from desktop_rt.engine.models.embedded import DEFAULT_MODEL_ID
from desktop_rt.engine.protocol.limits import SessionLimits
from desktop_rt.engine.server.tls import TlsFiles
from desktop_rt.machine import usable_cores

__all__ = ["ServerConfig", "default_session_limit"]

_SESSION_MEMORY_BYTES = 32 * 1024 * 1024  # a session's state, its audio backlog and events
_MEMORY_SHARE = 0.25  # of the machine's memory, at most, for sessions
_SESSIONS_PER_CORE = 16  # most are silent or idle at any time; the governor shares the rest
_SESSION_LIMIT_RANGE = (4, 256)


def default_session_limit(memory_bytes: int | None = None, cores: int | None = None) -> int:
    """Sessions a machine with this memory and these cores holds at once (its own if None):
    a quarter of its memory at 32 MB each, 16 per core, whichever is less, within 4..256."""
    memory = memory_bytes if memory_bytes is not None else psutil.virtual_memory().total
    cores = cores or usable_cores()
    by_memory = int(memory * _MEMORY_SHARE) // _SESSION_MEMORY_BYTES
    low, high = _SESSION_LIMIT_RANGE
    return max(low, min(high, by_memory, cores * _SESSIONS_PER_CORE))


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8777
    api_key: str | None = None
    allowed_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    """Host names besides loopback that requests may name in their Host header (a LAN name)."""
    model_id: str = DEFAULT_MODEL_ID
    limits: SessionLimits = field(default_factory=SessionLimits)
    streaming: StreamingConfig = StreamingConfig()
    worker: WorkerConfig = WorkerConfig()
    max_message_bytes: int = 32 * 1024 * 1024
    """Above the session's own 15 MiB append limit, so that limit answers with an error event."""
    max_outbox_events: int = 10_000
    """Events waiting for a client that stopped reading; past this it is disconnected."""
    ping_interval: float | None = 20.0
    models: ModelsConfig | None = None
    """The models to route between (the models file); None serves only ``model_id``."""
    model_name_timeout: float = 30.0
    """Seconds a client without ``?model=`` has to name its model in a ``session.update``."""
    max_pending_bytes: int = 32 * 1024 * 1024
    """Client frames kept while its model is chosen and loaded; past this the client waits."""
    activity_path: Path | None = None
    """The activity database (None: ``<data dir>/activity.sqlite3``)."""
    record_activity: bool = True
    max_request_bytes: int = 200_000_000
    """The largest ``POST /v1/audio/transcriptions`` body (200 MB, as OpenAI's limit is 25 MB)."""
    tls: TlsFiles | None = None
    """A certificate and key: serve ``wss://`` and ``https://`` (None: plain ``ws://``)."""
    max_sessions: int | None = None
    """Websocket sessions open at once, over all models (None: :func:`default_session_limit`;
    0: no limit). A ``global_concurrency_limit`` in models.toml takes precedence."""

    def __post_init__(self) -> None:
        if self.max_sessions is not None and self.max_sessions < 0:
            raise ValueError(f"max_sessions must be 0 (no limit) or more, not {self.max_sessions}")

    @property
    def session_limit(self) -> int:
        """The limit in force (0: none), without models.toml's."""
        return default_session_limit() if self.max_sessions is None else self.max_sessions

    def limited(self, catalog: ModelsConfig) -> ModelsConfig:
        """``catalog`` with this server's session limit, unless models.toml sets its own."""
        if catalog.global_concurrency_limit:
            return catalog
        return replace(catalog, global_concurrency_limit=self.session_limit)
