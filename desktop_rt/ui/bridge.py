"""Engine values -> Qt signals: the only place where engine threads meet the UI thread.

Engine code calls :meth:`EngineBridge.publish` from any thread (server, capture, store writer);
each kind of value leaves on its own signal. The bridge lives on the UI thread, so Qt queues
every emission made elsewhere and the slots run on the UI thread, in order.
"""

from __future__ import annotations

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

    def publish(self, value: object) -> None:
        """Emit ``value`` on its signal; safe from any thread."""
        if isinstance(value, CaptionTurn):
            self.caption.emit(value)
        elif isinstance(value, LevelReading):
            self.level.emit(value)
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
