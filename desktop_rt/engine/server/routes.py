"""Plain GET routes besides ``/health`` and ``/v1/models``; both need the key when one is set.

- ``GET /v1/activity?limit=N&model=ID``: activity rows, newest first, as
  ``{"object": "list", "data": [row, ...]}``; 503 when the database cannot be read (a damaged
  one is moved aside and a new one started, so asking again works).
- ``GET /unload?model=ID``: unload that model (no ``model``: every model) now, ending its
  sessions with an error event; answers ``{"unloaded": [ids]}``. A request from a web page
  (``Origin`` or ``Sec-Fetch-Site`` other than ``none``) gets 403: it has effects.

Each handler returns ``(status, JSON object)``; ``HandshakeGate`` turns that into the response.
``inference_health`` is what ``GET /health`` says of the primary model's inference worker.
"""

from __future__ import annotations

import asyncio
import sqlite3
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.http11 import Request

from desktop_rt.engine.asr.worker import InferenceWorker
from desktop_rt.engine.models.router import ModelRouter, UnknownModelError
from desktop_rt.engine.server.activity import ActivityLog, ActivityUnavailable

__all__ = ["activity_route", "unload_route", "inference_health"]


def _error(
    message: str, code: str, param: str | None = None, type_: str = "invalid_request_error"
) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "code": code, "param": param}}


def _query(request: Request) -> dict[str, list[str]]:
    return parse_qs(urlsplit(request.path).query)


async def activity_route(
    activity: ActivityLog | None, request: Request
) -> tuple[HTTPStatus, dict[str, Any]]:
    query = _query(request)
    try:
        limit = int(query.get("limit", ["100"])[0])
        if not 1 <= limit <= 1000:
            raise ValueError
    except ValueError:
        return HTTPStatus.BAD_REQUEST, _error(
            "limit must be a whole number from 1 to 1000", "invalid_value", "limit"
        )
    rows = []
    if activity is not None:
        try:
            rows = await asyncio.wrap_future(
                activity.rows_future(limit, query.get("model", [None])[0])
            )
        except (ActivityUnavailable, sqlite3.Error, OSError) as exc:
            return HTTPStatus.SERVICE_UNAVAILABLE, _error(
                f"The activity log cannot be read now: {exc}.",
                "activity_unavailable",
                type_="server_error",
            )
    return HTTPStatus.OK, {"object": "list", "data": [row.to_json() for row in rows]}


async def unload_route(router: ModelRouter, request: Request) -> tuple[HTTPStatus, dict[str, Any]]:
    headers = request.headers
    if headers.get("Origin") is not None or headers.get("Sec-Fetch-Site") not in (None, "none"):
        return HTTPStatus.FORBIDDEN, _error(
            "/unload cannot be called from a web page", "origin_not_allowed"
        )
    model = _query(request).get("model", [None])[0]
    try:
        stopped = await router.unload(model)
    except UnknownModelError:
        return HTTPStatus.NOT_FOUND, _error(
            f"No model '{model}' here; models: {', '.join(router.ids)}.", "model_not_found", "model"
        )
    return HTTPStatus.OK, {"unloaded": stopped}


def inference_health(worker: InferenceWorker | None) -> dict[str, Any]:
    """``lag_seconds``: the most audio any session has waiting for the recognizer;
    ``inference``: the CPU budget, each stream's lag and what passes cost over the budget window
    (``null`` while no worker runs). docs/protocol.md, *Health*."""
    if worker is None or not worker.running:
        return {"lag_seconds": 0.0, "inference": None}
    lags, cost = worker.lags(), worker.cost_summary()
    return {
        "lag_seconds": round(max(lags.values(), default=0.0), 2),
        "inference": {
            "cpu_budget": worker.config.cpu_budget,
            "busy_fraction": round(cost.busy_fraction, 3),
            "passes": cost.passes,
            "wall_seconds_per_pass": round(cost.wall_per_pass, 4),
            "cpu_seconds_per_pass": round(cost.cpu_per_pass, 4),
            "wall_seconds_per_audio_second": round(cost.wall_per_audio_second, 4),
            "streams": [{"id": name, "lag_seconds": round(lag, 2)} for name, lag in lags.items()],
        },
    }
