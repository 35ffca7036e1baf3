"""The settings of one :class:`~desktop_rt.engine.server.server.RealtimeServer`, fixed at start."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from desktop_rt.engine.asr.streaming import StreamingConfig
from desktop_rt.engine.asr.worker import WorkerConfig
from desktop_rt.engine.models.catalogue import ModelsConfig
from desktop_rt.engine.models.embedded import DEFAULT_MODEL_ID
from desktop_rt.engine.protocol.limits import SessionLimits

__all__ = ["ServerConfig"]


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
