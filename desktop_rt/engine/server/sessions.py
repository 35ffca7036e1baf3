"""The running server's in-process sessions, for websocket clients and the window alike.

:class:`SessionHub` is made by the server once it runs; every call is on the server loop.
``open(lease, meter, deliver, on_closed=..., on_revoked=...)`` starts a session on a leased
model and returns its :class:`~desktop_rt.engine.server.bridge.SessionBridge`: events go to
``deliver`` once ``meter`` counted them; ``on_closed`` runs once when the bridge closes (the
meter then holds the session's audio seconds); an unload by hand runs ``on_revoked(message)``,
then sends a ``model_unloaded`` error event and closes the bridge. A websocket client's session
starts with OpenAI's defaults (PCM16 at 24 kHz) and the server's limits; ``input_format`` and
``limits`` replace them (the window's session), and ``whole_turns=False`` skips the whole-turn
decode (a meeting's microphone). ``record`` writes a session's activity row;
``close_all`` closes every open bridge (the server stops). When a session closes, memory the
allocator holds free is given back to the system half a second later (:class:`_Trimmer`).
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
from collections.abc import Callable, Sequence

from desktop_rt.engine.asr.worker import InferenceWorker
from desktop_rt.engine.audio.codecs import AudioFormat
from desktop_rt.engine.models.router import Lease, ModelRouter
from desktop_rt.engine.models.runtimes import InProcessRuntime
from desktop_rt.engine.protocol.events import ErrorEvent, ServerEvent, TranscriptionCompleted
from desktop_rt.engine.protocol.formats import DEFAULT_FORMAT
from desktop_rt.engine.protocol.limits import SessionLimits
from desktop_rt.engine.protocol.session import RealtimeSession
from desktop_rt.engine.server.activity import ActivityLog, ActivityMeter
from desktop_rt.engine.server.bridge import EventSink, SessionBridge, english_translator

__all__ = ["SessionHub", "unloaded_event"]


def unloaded_event(message: str) -> ErrorEvent:
    """What a session's client hears when its model is unloaded by hand."""
    return ErrorEvent(message, "model_unloaded", "model", "server_error")


def _worker_of(lease: Lease) -> InferenceWorker:
    runtime = lease.runtime
    if not isinstance(runtime, InProcessRuntime) or runtime.worker is None:
        raise TypeError(f"the model '{lease.model_id}' does not run in this process")
    return runtime.worker


class _Trimmer:
    """glibc's ``malloc_trim(0)``, run ``delay`` seconds after a session closed (once per delay).

    A server_vad session loads two Silero contexts (native memory) that are freed
    when its handler unwinds, after the close; glibc keeps such freed heap instead of returning
    it, so without a trim a busy server's RSS only grows (docs/design/server.md, "Memory after
    sessions"). Without glibc (macOS) it does nothing.
    """

    def __init__(self, delay: float = 0.5) -> None:
        self._delay = delay
        self._pending = False
        self._trim: Callable[[int], int] | None = None
        name = ctypes.util.find_library("c")
        if name is not None:
            self._trim = getattr(ctypes.CDLL(name), "malloc_trim", None)

    def soon(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._trim is not None and not self._pending:
            self._pending = True
            loop.call_later(self._delay, self._run)

    def _run(self) -> None:
        self._pending = False
        if self._trim is not None:
            self._trim(0)


class SessionHub:
    """See the module docstring. ``router`` and ``activity`` are the server's."""

    def __init__(
        self, router: ModelRouter, activity: ActivityLog | None, limits: SessionLimits
    ) -> None:
        self.router = router
        self.activity = activity
        self._limits = limits
        self._bridges: set[SessionBridge] = set()
        self._trim = _Trimmer()

    def __len__(self) -> int:
        """How many sessions are open."""
        return len(self._bridges)

    @property
    def limits(self) -> SessionLimits:
        """What each websocket client's session may take (the server's configuration)."""
        return self._limits

    def open(
        self,
        lease: Lease,
        meter: ActivityMeter,
        deliver: EventSink,
        *,
        on_closed: Callable[[], None],
        on_revoked: Callable[[str], None],
        emit_tentative: bool = False,
        input_format: AudioFormat = DEFAULT_FORMAT,
        limits: SessionLimits | None = None,
        whole_turns: bool = True,
    ) -> SessionBridge:
        """A started session on ``lease``'s in-process model, wired to ``deliver``;
        ``whole_turns=False``: its turns are not decoded whole at their end (their completed
        text is the committed deltas)."""
        worker = _worker_of(lease)
        runtime = lease.runtime
        assert isinstance(runtime, InProcessRuntime)  # _worker_of checked it
        transcriber = None if whole_turns else runtime.transcriber(turn_decode=False)
        translator = english_translator(lease.runtime)
        session = RealtimeSession(
            translates=translator is not None,
            model=lease.model_id,
            limits=limits or self._limits,
            emit_tentative=emit_tentative,
            input_format=input_format,
        )
        meter.session_id = session.session_id

        def sink(events: Sequence[ServerEvent]) -> None:
            for event in events:
                if isinstance(event, TranscriptionCompleted):
                    meter.completed(event.transcript)
            deliver(events)

        def closed() -> None:
            self._bridges.discard(bridge)
            meter.audio_seconds = session.received_seconds
            on_closed()
            self._trim.soon(loop)

        def revoke(message: str) -> None:
            on_revoked(message)
            sink([unloaded_event(message)])
            bridge.close()

        loop = asyncio.get_running_loop()
        bridge = SessionBridge(session, worker, loop, sink, closed, translator, transcriber)
        self._bridges.add(bridge)
        lease.on_revoke = revoke
        return bridge

    def record(
        self,
        meter: ActivityMeter,
        model: str | None,
        client: str,
        close_code: int | None,
        reason: str,
    ) -> None:
        """Write one session's activity row (nothing when activity is not recorded)."""
        if self.activity is not None:
            self.activity.record(meter.row(model, client, close_code, reason))

    def close_all(self) -> None:
        for bridge in list(self._bridges):
            bridge.close()
