"""Whole-file recognition: a file's speech windows, each transcribed once, in order.

Call order: ``FileTranscriber(backend, language=..., prompt=...)``, then
``transcribe(chunks, total_seconds=..., progress=...)`` once per file. A planning thread scores
speech and groups it into windows (:mod:`.file_windows`) while the calling thread transcribes
them, each with the text before it as the prompt and, where the backend's traits say
``whole_context``, as a whole window (Whisper: its full 30 s context); once a window has
detected a language, the rest of the file keeps it. Words come back in file time, in order,
through ``progress`` as each window is done and all together in the :class:`FileResult`.
Invariants: every window is transcribed once, in file order; at most
``FileOptions.queued_windows`` windows wait between the threads, so memory does not grow with
the file. Works with any AsrBackend.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE, Word
from desktop_rt.engine.asr.backend import AsrBackend
from desktop_rt.engine.asr.file_windows import SpeechWindow, WindowOptions, WindowPlanner
from desktop_rt.engine.asr.runaway import drop_echoed_endings, drop_runaway
from desktop_rt.engine.audio.vad import SpeechProbability

__all__ = ["FileOptions", "FileProgress", "FileResult", "FileTranscriber", "ProgressFn"]

_MARK_SECONDS = 2.0  # in a long pause, the planner reports where it is at least this often
_MAX_PASSES = 4  # backend calls per window: the first, and the rest after its last word
_MIN_PROGRESS_SECONDS = 1.0  # a pass whose words end earlier than this is not followed up
_PUT_POLL = 0.1  # seconds between checks for a stopped run while the queue is full


@dataclass(frozen=True)
class FileOptions:
    """How a file is cut into windows and how much earlier text prompts each one."""

    windows: WindowOptions = field(default_factory=WindowOptions)
    # text before a window given as its prompt, after the user's (Whisper keeps 223 tokens);
    # 0: windows are prompted with the user's prompt only
    prompt_chars: int = 800
    queued_windows: int = 2  # planned windows waiting to be transcribed, at most
    min_rest_speech_seconds: float = 0.5  # speech after a pass's last word that is heard again
    # windows heard whole where the backend's traits say whole_context (Whisper: the full 30 s
    # context); False: with the cheaper context of streaming passes (the whole-turn decode's)
    whole_windows: bool = True


@dataclass(frozen=True)
class FileProgress:
    """How far a file's recognition has come; ``words``: those of the window just done."""

    done_seconds: float  # file time before which everything is transcribed
    total_seconds: float | None  # the file's declared length, if known
    words: tuple[Word, ...] = ()

    @property
    def fraction(self) -> float | None:
        if not self.total_seconds:
            return None
        return min(1.0, self.done_seconds / self.total_seconds)


@dataclass(frozen=True)
class FileResult:
    """A whole file's words (file time, in order) and what recognising it found."""

    words: tuple[Word, ...]
    language: str | None  # the language given, or the one detected
    seconds: float  # audio read
    windows: int  # windows transcribed

    @property
    def text(self) -> str:
        return "".join(w.text for w in self.words).strip()


ProgressFn = Callable[[FileProgress], None]


@dataclass(frozen=True)
class _Mark:
    settled: float  # file time before which every window was queued


@dataclass(frozen=True)
class _End:
    seconds: float


@dataclass(frozen=True)
class _Failed:
    error: BaseException


_Item = SpeechWindow | _Mark | _End | _Failed


class FileTranscriber:
    """Recognises whole files with one backend (see the module); not thread-safe."""

    def __init__(
        self,
        backend: AsrBackend,
        *,
        language: str | None = None,
        prompt: str | None = None,
        options: FileOptions = FileOptions(),
        scorer: Callable[[], SpeechProbability] | None = None,
    ):
        self.backend = backend
        self.language = language
        self.prompt = prompt
        self.options = options
        self._scorer = scorer  # makes a speech scorer per file; None: Silero

    def transcribe(
        self,
        chunks: Iterable[np.ndarray],
        *,
        total_seconds: float | None = None,
        progress: ProgressFn | None = None,
    ) -> FileResult:
        """Recognise the file whose audio ``chunks`` yields (float32 mono 16 kHz, in order)."""
        run = _Run(self, total_seconds, progress)
        planner = WindowPlanner(self._scorer() if self._scorer else None, self.options.windows)
        items: queue.Queue[_Item] = queue.Queue(maxsize=max(1, self.options.queued_windows))
        stop = threading.Event()
        thread = threading.Thread(
            target=_plan, args=(iter(chunks), planner, items, stop), name="file-planner"
        )
        thread.daemon = True
        thread.start()
        try:
            while True:
                item = items.get()
                if isinstance(item, _Failed):
                    raise item.error
                if isinstance(item, _End):
                    run.report(item.seconds)
                    return run.result(item.seconds)
                if isinstance(item, _Mark):
                    run.report(item.settled)
                else:
                    run.window(item)
        finally:
            stop.set()
            thread.join()


class _Run:
    """One file's recognition on the calling thread: prompt, language, words, progress."""

    def __init__(
        self, owner: FileTranscriber, total: float | None, progress: ProgressFn | None
    ) -> None:
        self.backend = owner.backend
        self.language = owner.language
        self.options = owner.options
        self.context = owner.prompt.strip() if owner.prompt else ""
        self.base_prompt = self.context
        self.whole = owner.options.whole_windows and owner.backend.traits.whole_context
        self.total = total
        self.progress = progress
        self.words: list[Word] = []
        self.windows = 0
        self.done = 0.0

    def window(self, window: SpeechWindow) -> None:
        """Transcribe one window and report its words in file time.

        A backend may stop before the window's end (Whisper does when it takes the last
        sentence for unfinished); the speech after its last word is then transcribed again
        on its own, as faster-whisper seeks to the last word, a few times at most. Where the
        last word's times end early, that rest can hear its ending as a word of its own
        ("mailbox." then "Box."): dropped (:func:`drop_echoed_endings`)."""
        words: list[Word] = []
        part = window
        for _ in range(_MAX_PASSES):
            heard, covered = self._pass(part)
            words += heard
            if not heard:
                break
            rest = part.after(covered)
            if (
                rest.speech_seconds < self.options.min_rest_speech_seconds
                or rest.seconds > part.seconds - _MIN_PROGRESS_SECONDS
            ):
                break
            part = rest
        words = drop_echoed_endings(words)
        self.words.extend(words)
        self.windows += 1
        self.report(window.end, tuple(words))

    def _pass(self, window: SpeechWindow) -> tuple[list[Word], float]:
        """One backend call: the words in file time, and the window time they cover."""
        prompt = self._prompt()
        heard = (
            self.backend.transcribe(window.audio, prompt=prompt, language=self.language, whole=True)
            if self.whole
            else self.backend.transcribe(window.audio, prompt=prompt, language=self.language)
        )
        kept = drop_runaway(heard, window.seconds, prompt)
        if self.language is None and kept and self.backend.detected_language is not None:
            self.language = self.backend.detected_language[0]
        if len(kept) < len(heard):
            self.context = self.base_prompt  # a looping window must not prompt the next one
        elif self.options.prompt_chars > 0:
            text = "".join(w.text for w in kept)
            self.context = (self.context + text)[-self.options.prompt_chars :]
        covered = max((w.end for w in kept), default=0.0)
        return list(_in_file_time(kept, window)), covered

    def _prompt(self) -> str | None:
        return self.context.lstrip() or None

    def report(self, done: float, words: tuple[Word, ...] = ()) -> None:
        self.done = max(self.done, done)
        if self.progress is not None:
            self.progress(FileProgress(self.done, self.total, words))

    def result(self, seconds: float) -> FileResult:
        return FileResult(tuple(self.words), self.language, seconds, self.windows)


def _in_file_time(words: Iterable[Word], window: SpeechWindow) -> Iterator[Word]:
    """Window-relative words moved to file time, clamped to the window, in order."""
    floor = window.start
    for w in words:
        start = min(max(window.file_time(w.start), floor), window.end)
        end = min(max(window.file_time(w.end), start), window.end)
        floor = start
        yield Word(w.text, start, end, w.probability)


def _plan(
    chunks: Iterator[np.ndarray],
    planner: WindowPlanner,
    items: queue.Queue[_Item],
    stop: threading.Event,
) -> None:
    """The planning thread: decode, score and group the file; queue windows, marks, the end."""
    try:
        marked = 0.0
        samples = 0
        for chunk in chunks:
            if stop.is_set():
                return
            samples += len(chunk)
            for window in planner.feed(chunk):
                _put(items, window, stop)
            if planner.settled - marked >= _MARK_SECONDS:
                marked = planner.settled
                with contextlib.suppress(queue.Full):  # a mark may be skipped
                    items.put_nowait(_Mark(marked))
        for window in planner.finish():
            _put(items, window, stop)
        _put(items, _End(samples / SAMPLE_RATE), stop)
    except BaseException as exc:  # handed to the calling thread, which raises it
        _put(items, _Failed(exc), stop)
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()


def _put(items: queue.Queue[_Item], item: _Item, stop: threading.Event) -> None:
    """Queue ``item``, waiting while the queue is full, unless the run was stopped."""
    while not stop.is_set():
        try:
            items.put(item, timeout=_PUT_POLL)
            return
        except queue.Full:
            continue
