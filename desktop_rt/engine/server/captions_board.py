"""The caption page's view of the window's session, sans-I/O: server events in, JSON frames out.

:class:`CaptionBoard` is fed the server events of the app's own session (:meth:`~CaptionBoard.apply`)
and answers the frame viewers need for each change, or None when nothing they see changed:

- ``{"type": "line", "line": {"id", "committed", "tentative", "translation",
  "translation_tentative", "final"}}``: the whole current state of one line (a turn), new or
  changed;
- ``{"type": "remove", "id"}``: a turn cleared before it had words;
- ``{"type": "snapshot", "lines": [line, ...]}``: every line kept (:meth:`~CaptionBoard.snapshot`),
  what a new or resynced viewer gets first.

Committed text only grows (deltas, then the completed transcript); tentative text replaces the
previous tail. At most ``max_lines`` recent lines are kept: a viewer joining late sees the
last ones. A live translation's events (``...translation.delta/tentative/completed``) fill a
line's English text as the window's do: final words grow ``translation``, the not yet final ones
replace ``translation_tentative``; the page shows them under the original. Translation hook for
other producers: :meth:`~CaptionBoard.apply_translation` sets a line's whole ``translation``
(through :meth:`CaptionBroadcaster.observe_translation
<desktop_rt.engine.server.captions_feed.CaptionBroadcaster.observe_translation>`). A final line
the user corrected in the window (:meth:`~CaptionBoard.apply_correction`) gets the corrected
text as its committed text: viewers see the corrected line in place of the old one.

The board keeps the recognizer's text as it came; :func:`shown` maps a frame through the text
filter the window applies (``history.speech_text.clean_speech_text``, passed in by the caller
so this module imports nothing outside ``engine``), so a viewer sees what the window shows.
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
from desktop_rt.engine.protocol.translation import (
    TranslationCompleted,
    TranslationDelta,
    TranslationTentative,
)

__all__ = ["CaptionLine", "CaptionBoard", "Frame", "TextFilter", "shown", "snapshot_frame"]

Frame = dict[str, Any]
TextFilter = Callable[[str], str]
_TEXT_FIELDS = ("committed", "tentative", "translation", "translation_tentative")


@dataclass(frozen=True)
class CaptionLine:
    """One turn as viewers see it; ``final``: the turn is complete and will not change."""

    id: str
    committed: str = ""
    tentative: str = ""
    translation: str = ""
    translation_tentative: str = ""
    final: bool = False
    sent: bool = False
    """Its audio was committed: a clear of the input buffer no longer removes it."""

    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        del doc["sent"]
        return doc


def snapshot_frame(lines: list[CaptionLine]) -> Frame:
    return {"type": "snapshot", "lines": [line.to_json() for line in lines]}


def _shown_line(line: dict[str, Any], clean: TextFilter) -> dict[str, Any]:
    return {**line, **{key: clean(line[key]) for key in _TEXT_FIELDS}}


def shown(frame: Frame, clean: TextFilter) -> Frame:
    """``frame`` with every text of its line(s) passed through ``clean`` (each piece on its
    own, as the window cleans committed and tentative words apart); other frames unchanged."""
    out = dict(frame)
    if "line" in frame:
        out["line"] = _shown_line(frame["line"], clean)
    if "lines" in frame:
        out["lines"] = [_shown_line(line, clean) for line in frame["lines"]]
    return out


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
            TranslationDelta: self._translation_delta,
            TranslationTentative: self._translation_tentative,
            TranslationCompleted: self._translation_completed,
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
        line = replace(self._line(item_id), translation=text, translation_tentative="")
        return self._put(line)

    def apply_correction(self, item_id: str, text: str) -> Frame | None:
        """The user corrected the final line ``item_id``: its committed text is now ``text``.
        None (nothing changes) for a line no longer kept, not final yet, or already so."""
        line = self._lines.get(item_id)
        if line is None or not line.final or line.committed.strip() == text.strip():
            return None
        return self._put(replace(line, committed=text, tentative=""))

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

    def _translation_delta(self, event: TranslationDelta) -> Frame:
        line = self._line(event.item_id)
        text = line.translation + event.delta
        return self._put(replace(line, translation=text, translation_tentative=""))

    def _translation_tentative(self, event: TranslationTentative) -> Frame:
        return self._put(replace(self._line(event.item_id), translation_tentative=event.text))

    def _translation_completed(self, event: TranslationCompleted) -> Frame:
        return self.apply_translation(event.item_id, event.transcript)

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
