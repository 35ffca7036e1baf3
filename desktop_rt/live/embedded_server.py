"""The app's embedded server: started on the user's port, else on any free one.

Call :func:`lower_thread_priority` first on the helper thread that starts the server (the
server, worker and model threads inherit it), then :func:`start_embedded_server`, which blocks
until the server listens. Nothing here touches Qt.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from desktop_rt.config import ServerSettings
from desktop_rt.engine.asr.backend import AsrBackend

if TYPE_CHECKING:
    from desktop_rt.engine.server.server import RealtimeServer

__all__ = ["ENGINE_NICENESS", "lower_thread_priority", "start_embedded_server"]

log = logging.getLogger(__name__)

ENGINE_NICENESS = 5


def lower_thread_priority(niceness: int = ENGINE_NICENESS) -> None:
    """Make the calling thread (and threads it creates) yield the CPU to the UI and the microphone.

    On Linux ``setpriority(PRIO_PROCESS, 0, ...)`` acts on the calling thread only; elsewhere this
    does nothing. Inference then runs as fast as before on an idle machine, but a busy one keeps
    the window responsive.
    """
    if sys.platform != "linux":
        return
    try:
        os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + niceness)
    except (AttributeError, OSError) as exc:
        log.debug("could not lower the engine's priority: %s", exc)


def start_embedded_server(
    settings: ServerSettings, model: str, backend: AsrBackend
) -> tuple[RealtimeServer, str]:
    """Start a server for ``model`` on ``backend`` (the caller keeps owning it).

    Returns the running server and a note for people: "" or why it took another port. Raises
    :class:`~desktop_rt.engine.server.server.ServerError` when it could not start on any port.
    """
    from desktop_rt.engine.server.server import RealtimeServer, ServerConfig, ServerError

    config = ServerConfig(
        port=settings.port,
        api_key=settings.api_key,
        allowed_origins=settings.allowed_origins,
        model_id=model,
    )
    error = ServerError("the server could not start")
    for port in dict.fromkeys((settings.port, 0)):  # the chosen port, else any free one
        server = RealtimeServer(replace(config, port=port), backend)
        try:
            server.start()
        except ServerError as exc:
            error = exc
            continue
        note = (
            f"Port {settings.port} is busy, so the server took port {server.port} instead."
            if port != settings.port
            else ""
        )
        return server, note
    raise error
