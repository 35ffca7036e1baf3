"""The caption page's view of the window's session, sans-I/O: server events in, JSON frames out.

:class:`CaptionBoard` is fed the server events of the app's own session (:meth:`~CaptionBoard.apply`)
and answers the frame viewers need for each change, or None when nothing they see changed:

- ``{"type": "line", "line": {"id", "committed", "tentative", "translation", "final"}}``: the
  whole current state of one line (a turn), new or changed;
- ``{"type": "remove", "id"}``: a turn cleared before it had words;
- ``{"type": "snapshot", "lines": [line, ...]}``: every line kept (:meth:`~CaptionBoard.snapshot`),
  what a new or resynced viewer gets first.

Committed text only grows (deltas, then the completed transcript); tentative text replaces the
previous tail. At most ``max_lines`` recent lines are kept: a viewer joining late sees the
last ones. Translation hook: :meth:`~CaptionBoard.apply_translation` sets a line's
``translation`` text; whoever produces translations calls it (through
:meth:`CaptionBroadcaster.observe_translation <desktop_rt.engine.server.captions_feed.CaptionBroadcaster.observe_translation>`),
and the page shows that line under the original when it is not empty.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from desktop_rt.engine.protocol.events import (
    InputAudioBufferCleared,
    InputAudioBufferCommitted,
    ServerEvent,
    TranscriptionCompleted,
    TranscriptionDelta,
    TranscriptionTentative,
)

__all__ = ["CaptionLine", "CaptionBoard", "Frame", "snapshot_frame"]

Frame = dict[str, Any]


@dataclass(frozen=True)
class CaptionLine:
    """One turn as viewers see it; ``final``: the turn is complete and will not change."""

    id: str
    committed: str = ""
    tentative: str = ""
    translation: str = ""
    final: bool = False
    sent: bool = False
    """Its audio was committed: a clear of the input buffer no longer removes it."""

    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        del doc["sent"]
        return doc


def snapshot_frame(lines: list[CaptionLine]) -> Frame:
    return {"type": "snapshot", "lines": [line.to_json() for line in lines]}


class CaptionBoard:
    """See the module docstring. Not thread-safe: its owner serializes the calls."""

    def __init__(self, max_lines: int = 200):
        self.max_lines = max_lines
        self._lines: OrderedDict[str, CaptionLine] = OrderedDict()
        self._handlers: dict[type, Callable[[Any], Frame | None]] = {
            TranscriptionDelta: self._delta,
            TranscriptionTentative: self._tentative,
            TranscriptionCompleted: self._completed,
            InputAudioBufferCommitted: self._committed,
            InputAudioBufferCleared: self._cleared,
        }

    def apply(self, event: ServerEvent) -> Frame | None:
        """The frame for what ``event`` changed, or None (an event viewers do not see)."""
        for kind in type(event).__mro__:  # TranscriptionFailed is a TranscriptionCompleted
            handler = self._handlers.get(kind)
            if handler is not None:
                return handler(event)
        return None

    def apply_translation(self, item_id: str, text: str) -> Frame:
        """The translation hook: ``item_id``'s translation is now ``text`` (replaces it)."""
        return self._put(replace(self._line(item_id), translation=text))

    def snapshot(self) -> Frame:
        return snapshot_frame(list(self._lines.values()))

    @property
    def lines(self) -> list[CaptionLine]:
        return list(self._lines.values())

    # ---- handlers ---------------------------------------------------------------------------

    def _line(self, item_id: str) -> CaptionLine:
        return self._lines.get(item_id) or CaptionLine(item_id)

    def _put(self, line: CaptionLine) -> Frame:
        self._lines[line.id] = line
        while len(self._lines) > self.max_lines:
            self._lines.popitem(last=False)
        return {"type": "line", "line": line.to_json()}

    def _delta(self, event: TranscriptionDelta) -> Frame:
        line = self._line(event.item_id)
        # the delta was the head of the tentative text; the session sends the new tail next
        return self._put(replace(line, committed=line.committed + event.delta, tentative=""))

    def _tentative(self, event: TranscriptionTentative) -> Frame:
        return self._put(replace(self._line(event.item_id), tentative=event.text))

    def _completed(self, event: TranscriptionCompleted) -> Frame:
        line = self._line(event.item_id)
        return self._put(replace(line, committed=event.transcript, tentative="", final=True))

    def _committed(self, event: InputAudioBufferCommitted) -> Frame | None:
        self._put(replace(self._line(event.item_id), sent=True))
        return None  # nothing viewers see changed

    def _cleared(self, _event: InputAudioBufferCleared) -> Frame | None:
        """Open turns lose their tentative text; one without committed words goes."""
        frames: list[Frame] = []
        for line in list(self._lines.values()):
            if line.sent or line.final:
                continue
            if line.committed and line.tentative:
                frames.append(self._put(replace(line, tentative="")))
            elif not line.committed:
                del self._lines[line.id]
                frames.append({"type": "remove", "id": line.id})
        if not frames:
            return None
        return frames[0] if len(frames) == 1 else self.snapshot()
