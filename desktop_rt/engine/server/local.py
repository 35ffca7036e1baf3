"""The desktop window's own session: one in-process client on the server's session path.

:func:`open_local_bridge` is what a :class:`~desktop_rt.engine.server.bridge.LocalSession`
awaits on the server loop: it leases the model (loading it if need be), then opens the session
through the :class:`~desktop_rt.engine.server.sessions.SessionHub` that also serves websocket
clients. A model that cannot be had, or that runs in another program, is answered with one
``error`` event and no bridge. Local sessions take no concurrency slot; each leaves one
activity row (client ``local``), then ``on_closed`` runs. Their input is PCM16 at 16 kHz until
an update says otherwise (what ``LocalSession.append`` sends), and they have no input queue; their
backlog holds up to ``LOCAL_BACKLOG_SECONDS`` of audio (not a client's 30 s): on a slow or busy
machine the window's captions fall behind and catch up in pauses, and only audio beyond that is
dropped (``audio_backlog_full``). The user's speech is what the app exists to keep.
Every event also goes to ``captions`` (the caption page's broadcaster) when one is given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from desktop_rt.engine.models.router import RouterError
from desktop_rt.engine.models.runtimes import InProcessRuntime
from desktop_rt.engine.protocol.events import ErrorEvent, ServerEvent
from desktop_rt.engine.server.activity import ActivityMeter
from desktop_rt.engine.server.bridge import LOCAL_FORMAT, SessionBridge
from desktop_rt.engine.server.captions_feed import CaptionBroadcaster
from desktop_rt.engine.server.sessions import SessionHub

__all__ = ["LOCAL_BACKLOG_SECONDS", "open_local_bridge"]

LOCAL_BACKLOG_SECONDS = 600.0
"""Audio the window's session may have waiting for the model: 10 minutes, 38 MB as float32."""

EventCallback = Callable[[ServerEvent], None]


def _refused(code: str, message: str) -> ErrorEvent:
    return ErrorEvent(message, code, "model", "server_error")


async def open_local_bridge(
    hub: SessionHub,
    model_id: str,
    on_event: EventCallback,
    *,
    emit_tentative: bool,
    on_closed: Callable[[], None] | None,
    captions: CaptionBroadcaster | None = None,
    whole_turns: bool = True,
) -> SessionBridge | None:
    """The window's session on ``model_id``, or None (after an ``error`` event) if it cannot be."""
    meter = ActivityMeter()
    reason = "the session ended"

    def finish(why: str) -> None:
        hub.record(meter, model_id, "local", None, why)
        if on_closed is not None:
            on_closed()

    try:
        lease = await hub.router.acquire(model_id)
    except RouterError as exc:
        on_event(_refused(exc.code, f"The model '{model_id}' cannot be used: {exc}"))
        finish(f"{exc.code}: {exc}")
        return None
    if not isinstance(lease.runtime, InProcessRuntime):
        lease.release()
        message = (
            f"The model '{model_id}' runs in another program; the window can only use "
            f"models loaded in desktop-rt itself."
        )
        on_event(_refused("model_not_local", message))
        finish("model_not_local")
        return None

    def deliver(events: Sequence[ServerEvent]) -> None:
        for event in events:
            on_event(event)
            if captions is not None:
                captions.observe(event)

    def revoked(message: str) -> None:
        nonlocal reason
        reason = f"model_unloaded: {message}"

    def closed() -> None:
        lease.release()
        finish(reason)

    return hub.open(
        lease,
        meter,
        deliver,
        on_closed=closed,
        on_revoked=revoked,
        emit_tentative=emit_tentative,
        input_format=LOCAL_FORMAT,
        limits=replace(hub.limits, max_queued_bytes=0, max_backlog_seconds=LOCAL_BACKLOG_SECONDS),
        whole_turns=whole_turns,
    )
