"""Engine values -> Qt signals: the only place where engine threads meet the UI thread.

Engine code calls :meth:`EngineBridge.publish` from any thread (server, capture, store writer);
each kind of value leaves on its own signal. The bridge lives on the UI thread, so Qt queues
every emission made elsewhere and the slots run on the UI thread, in order.

Level readings are coalesced: while one waits to be delivered, the next ones merge into it
(loudest level, likeliest speech), so at most one is queued however late the UI thread is, and
a stalled UI thread does not wake to a backlog of stale readings. :attr:`EngineBridge.published`
counts the values handed over, by kind; :attr:`EngineBridge.levels_delivered` the readings
that reached the UI thread.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from desktop_rt.engine.audio.sources import SourceStatus
from desktop_rt.engine.models.repair_notice import RepairNotice
from desktop_rt.live.capture import LevelReading
from desktop_rt.live.embedded_server import ServerState
from desktop_rt.live.transcript_recorder import CaptionTurn, SessionNotice, SpeechActivity

__all__ = ["ServerState", "StoreProblem", "SessionClosed", "EngineBridge"]


@dataclass(frozen=True)
class StoreProblem:
    """The history could not be saved (``message``), or it recovered (``message`` empty)."""

    message: str


@dataclass(frozen=True)
class SessionClosed:
    session_uid: str


class EngineBridge(QObject):
    """Separate signals for captions, speech activity, errors, device and server status, levels."""

    caption = Signal(object)  # CaptionTurn
    speech = Signal(bool)
    error = Signal(str)
    notice = Signal(object)  # SessionNotice other than errors
    mic_status = Signal(object)  # SourceStatus
    server_state = Signal(object)  # ServerState
    level = Signal(object)  # LevelReading
    store_problem = Signal(str)  # "" when saving works again
    session_closed = Signal(str)  # session uid
    model_repair = Signal(object)  # RepairNotice
    _level_due = Signal()  # a reading waits in _pending_level (queued to the UI thread)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._lock = threading.Lock()
        self._pending_level: LevelReading | None = None
        self.published: Counter[str] = Counter()
        """Values handed to :meth:`publish` so far, by type name (any thread)."""
        self.levels_delivered = 0
        """Level readings emitted on :attr:`level` (fewer than published: coalesced)."""
        self._level_due.connect(self._deliver_level)

    def publish(self, value: object) -> None:
        """Emit ``value`` on its signal; safe from any thread."""
        with self._lock:
            self.published[type(value).__name__] += 1
        if isinstance(value, CaptionTurn):
            self.caption.emit(value)
        elif isinstance(value, LevelReading):
            self._post_level(value)
        elif isinstance(value, SpeechActivity):
            self.speech.emit(value.speaking)
        elif isinstance(value, SessionNotice):
            if value.kind == "error":
                self.error.emit(value.message)
            else:
                self.notice.emit(value)
        elif isinstance(value, SourceStatus):
            self.mic_status.emit(value)
        elif isinstance(value, ServerState):
            self.server_state.emit(value)
        elif isinstance(value, StoreProblem):
            self.store_problem.emit(value.message)
        elif isinstance(value, SessionClosed):
            self.session_closed.emit(value.session_uid)
        elif isinstance(value, RepairNotice):
            self.model_repair.emit(value)
        else:
            raise TypeError(f"the bridge does not carry {type(value).__name__}")

    def _post_level(self, reading: LevelReading) -> None:
        with self._lock:
            waiting = self._pending_level
            self._pending_level = reading if waiting is None else _merged(waiting, reading)
        if waiting is None:
            self._level_due.emit()

    def _deliver_level(self) -> None:
        with self._lock:
            reading, self._pending_level = self._pending_level, None
        if reading is not None:
            self.levels_delivered += 1
            self.level.emit(reading)


def _merged(first: LevelReading, then: LevelReading) -> LevelReading:
    """One reading for two intervals: the louder level, the likelier speech, the later clock."""
    speeches = [p for p in (first.speech, then.speech) if p is not None]
    speech = max(speeches) if speeches else None
    return LevelReading(max(first.dbfs, then.dbfs), speech, then.clock)
