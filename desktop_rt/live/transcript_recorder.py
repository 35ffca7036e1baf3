"""What the desktop window makes of one local session's events: captions and history rows.

:class:`TranscriptRecorder` is fed the server events of one local session (server thread) and
the push-to-talk :class:`~desktop_rt.live.capture.TurnMark` s of the feed (feed thread). It
returns what changed as plain values for the UI (:class:`CaptionTurn`, :class:`SpeechActivity`,
:class:`SessionNotice`) and writes every committed delta through to the history
(:class:`~desktop_rt.history.writer.StoreWriter`); tentative words are never saved. Text passes
:func:`~desktop_rt.history.speech_text.clean_speech_text` on its way out (sound tags and runs of
punctuation never reach the window or the history). Turn times are seconds since the session
began: from the key presses (push-to-talk, matched to items in commit order) or the server VAD's
speech marks (hands-free); the session's ``mode`` lists the modes turns were made in, in order
of first use. A live translation's events fill a turn's English line (``translation``), saved
with the turn as its final words arrive (docs/design/translation.md). The words' probabilities
(the deltas' ``logprobs``) travel with each caption and row, one per shown word
(:mod:`~desktop_rt.history.confidence`). See docs/design/app.md.
"""

from __future__ import annotations

import collections
import dataclasses
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass

from desktop_rt.config import HANDS_FREE, PUSH_TO_TALK
from desktop_rt.engine.protocol.events import (
    ErrorEvent,
    InputAudioBufferCleared,
    InputAudioBufferCommitted,
    InputAudioBufferSpeechStarted,
    InputAudioBufferSpeechStopped,
    LogProb,
    SessionCreated,
    SessionUpdated,
    TranscriptionCompleted,
    TranscriptionDelta,
    TranscriptionTentative,
)
from desktop_rt.engine.protocol.translation import (
    TranslationCompleted,
    TranslationDelta,
    TranslationTentative,
)
from desktop_rt.history.confidence import word_probabilities
from desktop_rt.history.speech_text import clean_speech_text
from desktop_rt.history.writer import StoreWriter
from desktop_rt.live.capture import TurnMark

__all__ = ["CaptionTurn", "SpeechActivity", "SessionNotice", "Update", "TranscriptRecorder"]


@dataclass(frozen=True)
class CaptionTurn:
    """The whole current state of one turn. ``removed``: it was cleared and had no words."""

    item_id: str
    index: int
    committed: str
    tentative: str = ""
    final: bool = False
    start: float | None = None
    end: float | None = None
    removed: bool = False
    speaker: str | None = None
    """The stream's label in meeting mode ("You", "Others"); None for one stream."""
    translation: str = ""
    """Its English translation so far, when live translation is on."""
    translation_tentative: str = ""
    probabilities: tuple[float | None, ...] = dataclasses.field(default=(), compare=False)
    """One per word of ``committed`` (split on spaces); None where unknown, () for none."""
    session_uid: str = dataclasses.field(default="", compare=False)
    """The history session it is saved in (to correct it there)."""

    @property
    def text(self) -> str:
        return self.committed + self.tentative


@dataclass(frozen=True)
class SpeechActivity:
    speaking: bool


@dataclass(frozen=True)
class SessionNotice:
    """``kind``: "created", "updated" or "error"; ``message`` is for people."""

    kind: str
    message: str = ""
    code: str | None = None


Update = CaptionTurn | SpeechActivity | SessionNotice


@dataclass
class _Turn:
    item_id: str
    index: int
    committed: str = ""
    tentative: str = ""
    final: bool = False
    start: float | None = None
    end: float | None = None
    saved: bool = False
    sent: bool = False  # committed to the server (input_audio_buffer.committed seen)
    speaker: str | None = None
    translation: str = ""
    translation_tentative: str = ""
    tokens: list[tuple[str, float | None]] = dataclasses.field(default_factory=list)
    session_uid: str = ""

    @property
    def text(self) -> str:
        """The committed words, cleaned of non-speech output (what is shown and saved)."""
        return clean_speech_text(self.committed)

    def took(self, text: str, logprobs: tuple[LogProb, ...] | None, whole: bool = False) -> None:
        """Words committed (``whole``: all of them), with their probabilities when sent."""
        tokens: list[tuple[str, float | None]] = [(text, None)]
        if logprobs is not None and "".join(lp.token for lp in logprobs) == text:
            tokens = [(lp.token, math.exp(lp.logprob)) for lp in logprobs]
        if not whole:
            self.tokens += tokens
        elif "".join(t for t, _ in self.tokens) != text or logprobs is not None:
            self.tokens = tokens

    def caption(self, removed: bool = False) -> CaptionTurn:
        return CaptionTurn(
            self.item_id,
            self.index,
            self.text,
            clean_speech_text(self.tentative),
            self.final,
            self.start,
            self.end,
            removed,
            self.speaker,
            clean_speech_text(self.translation),
            clean_speech_text(self.translation_tentative),
            word_probabilities(self.tokens, self.text),
            self.session_uid,
        )


class TranscriptRecorder:
    """See the module docstring. ``handle`` and ``turn_mark`` may run on different threads."""

    def __init__(
        self,
        session_uid: str,
        writer: StoreWriter | None = None,
        *,
        model: str | None = None,
        language: str | None = None,
        mode: str | None = None,
        origin: float = 0.0,
        stream_to_clock: Callable[[float], float] | None = None,
        speaker: str | None = None,
    ):
        self.session_uid = session_uid
        self.speaker = speaker  # meeting mode: the label of this recorder's stream
        self._writer = writer
        self._meta = {"model": model, "language": language}
        self._mode = mode  # the session's mode until a turn shows which were used
        self._modes: list[str] = []  # modes turns were made in, in order of first use
        self._origin = origin
        self._stream_to_clock = stream_to_clock
        self._turns: dict[str, _Turn] = {}
        self._order: list[str] = []
        self._spans: collections.deque[tuple[float, float]] = collections.deque()
        self._open_start: float | None = None
        self._began = False
        self._lock = threading.Lock()

    # ---- reading ------------------------------------------------------------------------------

    def captions(self) -> list[CaptionTurn]:
        with self._lock:
            return [self._turns[i].caption() for i in self._order]

    @property
    def committed_text(self) -> str:
        with self._lock:
            texts = (self._turns[i].text.strip() for i in self._order)
            return " ".join(t for t in texts if t)

    @property
    def modes(self) -> str:
        """The modes used so far, comma-separated, in order of first use ("" if none yet)."""
        with self._lock:
            return ",".join(self._modes)

    # ---- inputs -------------------------------------------------------------------------------

    def turn_mark(self, mark: TurnMark) -> None:
        """A push-to-talk press (``started``), release (``committed``) or tap (``cleared``)."""
        at = max(0.0, mark.at - self._origin)
        with self._lock:
            if mark.kind == "started":
                self._open_start = at
            elif mark.kind == "committed":
                self._spans.append((self._open_start if self._open_start is not None else at, at))
                self._open_start = None
                self._used(PUSH_TO_TALK)
            else:
                self._open_start = None

    def handle(self, event: object) -> list[Update]:
        with self._lock:
            return self._handle(event)

    def set_origin(self, clock: float) -> None:
        """Where the session began on the feed clock (turn times count from there)."""
        self._origin = clock

    def save_unfinished(self) -> int:
        """Save each unfinished turn's text, its tentative tail included, as not completed; the
        count saved. For a quit that cannot wait for the recognizer: words heard but not yet
        committed are kept rather than lost (a later commit of the turn replaces them)."""
        with self._lock:
            unfinished = [t for t in self._turns.values() if not t.final and t.tentative]
            for turn in unfinished:
                self._save(
                    turn, completed=False, text=clean_speech_text(turn.committed + turn.tentative)
                )
            return len(unfinished)

    def end(self) -> None:
        """The session is over: record its end time."""
        if self._writer is not None and self._began:
            self._writer.end_session(self.session_uid)

    # ---- internals ----------------------------------------------------------------------------

    def _turn(self, item_id: str) -> _Turn:
        turn = self._turns.get(item_id)
        if turn is None:
            turn = _Turn(item_id, len(self._order), start=self._open_start, speaker=self.speaker)
            turn.session_uid = self.session_uid
            self._turns[item_id] = turn
            self._order.append(item_id)
        return turn

    def _clock(self, ms: int) -> float:
        seconds = ms / 1000
        if self._stream_to_clock is not None:
            seconds = self._stream_to_clock(seconds)
        return max(0.0, seconds - self._origin)

    def _handle(self, event: object) -> list[Update]:
        if isinstance(event, (TranslationDelta, TranslationTentative, TranslationCompleted)):
            return self._translated(event)
        if isinstance(event, TranscriptionDelta):
            turn = self._turn(event.item_id)
            turn.committed += event.delta
            turn.took(event.delta, event.logprobs)
            # The words just committed were the head of the tentative text; the session sends the
            # new tail right after a delta when there is one, so drop the stale tail now.
            turn.tentative = ""
            self._save(turn)
            return [turn.caption()]
        if isinstance(event, TranscriptionTentative):
            turn = self._turn(event.item_id)
            turn.tentative = event.text
            return [turn.caption()]
        if isinstance(event, TranscriptionCompleted):
            turn = self._turn(event.item_id)
            turn.committed, turn.tentative, turn.final = event.transcript, "", True
            turn.took(event.transcript, event.logprobs, whole=True)
            if turn.end is None and turn.start is not None and event.audio_seconds:
                turn.end = turn.start + event.audio_seconds
            self._save(turn, completed=True)
            return [turn.caption()]
        if isinstance(event, InputAudioBufferCommitted):
            turn = self._turn(event.item_id)
            turn.sent = True
            if self._spans:
                turn.start, turn.end = self._spans.popleft()
            self._save(turn)
            return [turn.caption()]
        if isinstance(event, InputAudioBufferSpeechStarted):
            self._used(HANDS_FREE)
            turn = self._turn(event.item_id)
            turn.start = self._clock(event.audio_start_ms)
            return [SpeechActivity(True)]
        if isinstance(event, InputAudioBufferSpeechStopped):
            turn = self._turn(event.item_id)
            turn.end = self._clock(event.audio_end_ms)
            return [SpeechActivity(False)]
        if isinstance(event, InputAudioBufferCleared):
            return self._cleared()
        if isinstance(event, ErrorEvent):
            return [SessionNotice("error", event.message, event.code)]
        if isinstance(event, SessionCreated):
            return [SessionNotice("created")]
        if isinstance(event, SessionUpdated):
            return [SessionNotice("updated")]
        return []

    def _translated(
        self, event: TranslationDelta | TranslationTentative | TranslationCompleted
    ) -> list[Update]:
        """The turn's English line: final words appended, the tentative tail replaced."""
        turn = self._turn(event.item_id)
        if isinstance(event, TranslationDelta):
            turn.translation += event.delta
            turn.translation_tentative = ""
        elif isinstance(event, TranslationTentative):
            turn.translation_tentative = event.text
        else:
            turn.translation, turn.translation_tentative = event.transcript, ""
        if turn.saved and self._writer is not None and not isinstance(event, TranslationTentative):
            english = clean_speech_text(turn.translation).strip()
            self._writer.save_turn(self.session_uid, turn.item_id, translation=english)
        return [turn.caption()]

    def _cleared(self) -> list[Update]:
        updates: list[Update] = []
        for item_id in list(self._order):
            turn = self._turns[item_id]
            if turn.sent or turn.final:
                continue
            turn.tentative = ""
            if turn.committed:
                updates.append(turn.caption())
                continue
            del self._turns[item_id]
            self._order.remove(item_id)
            updates.append(turn.caption(removed=True))
        for index, item_id in enumerate(self._order):
            self._turns[item_id].index = index
        return updates

    def _used(self, mode: str) -> None:
        """A turn was made in ``mode`` (lock held): the saved session lists it from now on."""
        if mode in self._modes:
            return
        self._modes.append(mode)
        if self._began and self._writer is not None:
            self._writer.set_session_mode(self.session_uid, ",".join(self._modes))

    def _save(self, turn: _Turn, completed: bool | None = None, text: str | None = None) -> None:
        text = turn.text if text is None else text
        if self._writer is None or not (text or turn.saved):
            return
        if not self._began:
            self._began = True
            mode = ",".join(self._modes) or self._mode
            self._writer.begin_session(self.session_uid, mode=mode, **self._meta)
        turn.saved = True
        self._writer.save_turn(
            self.session_uid,
            turn.item_id,
            text=text,
            start=turn.start,
            end=turn.end,
            completed=completed,
            speaker=self.speaker,
            translation=clean_speech_text(turn.translation).strip() or None,
            probabilities=word_probabilities(turn.tokens, text),
        )
