"""The history's rows as values: :class:`SessionRow` (a session with its turn count and the start
of its text) and :class:`TurnRow` (one turn, with its correction, translation and per-word
probabilities). Read them with :class:`~desktop_rt.history.store.TranscriptStore`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SessionRow", "TurnRow"]


@dataclass(frozen=True)
class SessionRow:
    id: int
    uid: str
    title: str
    started_at: str
    ended_at: str | None
    model: str | None
    language: str | None
    mode: str | None
    turn_count: int = 0
    preview: str = ""

    @property
    def modes(self) -> tuple[str, ...]:
        """The modes the session used, in order of first use (``mode`` holds them joined by ",")."""
        return tuple(m for m in (self.mode or "").split(",") if m)

    @property
    def display_title(self) -> str:
        return self.title or f"Session {self.started_at[:16].replace('T', ' ')}"


@dataclass(frozen=True)
class TurnRow:
    """One turn. ``text`` is what is shown and exported: the user's correction when there is one,
    then ``original_text`` holds what the recognizer wrote (None: not corrected).
    ``translation``: its live English line ("" for none). ``probabilities``: one per word of the
    recognizer's text (``original_text`` or ``text``, split on spaces), None where unknown; empty
    when none were saved."""

    id: int
    session_id: int
    item_id: str
    seq: int
    start: float
    end: float | None
    text: str
    completed: bool
    speaker: str | None = None
    original_text: str | None = None
    translation: str = ""
    probabilities: tuple[float | None, ...] = ()

    @property
    def corrected(self) -> bool:
        return self.original_text is not None

    @property
    def shown_probabilities(self) -> tuple[float | None, ...]:
        """Probabilities of the words of ``text``: none for a corrected turn (the user wrote it)."""
        return () if self.corrected else self.probabilities
