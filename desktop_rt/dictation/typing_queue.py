"""Which committed words to type, once each, in order, with a space between turns.

:class:`TypingQueue` is fed every caption update of the live session (a
:class:`~desktop_rt.live.transcript_recorder.CaptionTurn`, the whole state of one turn) and
returns the text to type now, or "". Only turns *claimed* by dictation are typed: a turn is
claimed when it first appears between :meth:`~TypingQueue.begin` (the shortcut started
dictating) and the end of the claim, which is :meth:`~TypingQueue.cancel`, or, after
:meth:`~TypingQueue.release`, the moment every claimed turn is final (the release's own turn may
appear only when it is committed). Turns that appeared outside a claim are never typed.

The invariant: text is typed once and never retracted. A turn's committed text only grows;
what is typed is what it grew by since the last update. Should an update not extend what was
typed (cleaning changed an earlier word, or the completed text of a turn heard whole differs),
only the words beyond those already typed are typed. With ``at_turn_end`` a turn is typed
only once final, its completed text whole (the preview shows its words meanwhile). The first
text of a turn gets a leading space when something was typed before it. No I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from desktop_rt.live.transcript_recorder import CaptionTurn

__all__ = ["TypingQueue"]


@dataclass
class _Claimed:
    typed: str = ""  # the turn's committed text as far as it was typed (stripped at the left)
    final: bool = False
    tentative: str = ""


class TypingQueue:
    """See the module docstring. Not thread-safe: call it from one thread."""

    def __init__(self, at_turn_end: bool = False) -> None:
        self._at_turn_end = at_turn_end
        self._claiming = False
        self._released = False
        self._claimed: dict[str, _Claimed] = {}
        self._current: set[str] = set()  # the turns claimed since the last begin()
        self._ignored: set[str] = set()
        self._typed_any = False
        self._latest: str | None = None  # the claimed turn updated last

    @property
    def claiming(self) -> bool:
        return self._claiming

    @property
    def tentative(self) -> str:
        """The tentative words of the latest claimed turn (for the preview)."""
        turn = self._claimed.get(self._latest or "")
        return turn.tentative if turn is not None and not turn.final else ""

    def begin(self) -> None:
        """The shortcut started dictating: turns appearing from now on are claimed."""
        self._claiming, self._released = True, False
        self._current = set()

    def release(self) -> None:
        """The shortcut stopped dictating: claim until the claimed turns are final."""
        self._released = True
        self._end_claim_if_done()

    def cancel(self) -> None:
        """Claim nothing more (the window's own talk key started a turn)."""
        self._claiming = self._released = False

    def update(self, turn: CaptionTurn) -> str:
        """The text to type for this update of ``turn`` ("" for none)."""
        claimed = self._claim(turn.item_id)
        if claimed is None:
            return ""
        self._latest = turn.item_id
        claimed.tentative = turn.tentative.strip()
        if self._at_turn_end and not (turn.final or turn.removed):  # typed when it ends
            claimed.tentative = turn.text.strip()
            return ""
        text = self._grown(claimed, turn.committed.lstrip())
        if turn.final or turn.removed:
            claimed.final = True
            claimed.tentative = ""
            self._end_claim_if_done()
        return text

    def _claim(self, item_id: str) -> _Claimed | None:
        claimed = self._claimed.get(item_id)
        if claimed is not None or item_id in self._ignored:
            return claimed
        if not self._claiming:
            self._ignored.add(item_id)
            return None
        claimed = self._claimed[item_id] = _Claimed()
        self._current.add(item_id)
        return claimed

    def _grown(self, claimed: _Claimed, committed: str) -> str:
        typed = claimed.typed
        if committed.startswith(typed):
            new = committed[len(typed) :]
        else:  # an earlier word changed: type only the words beyond those typed
            words = committed.split()
            new = " ".join(words[len(typed.split()) :])
            new = " " + new if new and typed else new
        if not new.strip():
            return ""
        claimed.typed = typed + new
        if not typed:
            new = new.lstrip()
            if self._typed_any:
                new = " " + new
        self._typed_any = True
        return new

    def _end_claim_if_done(self) -> None:
        if not (self._claiming and self._released):
            return
        if self._current and all(self._claimed[i].final for i in self._current):
            self._claiming = self._released = False
