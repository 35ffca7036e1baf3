"""From an :class:`~desktop_rt.engine.audio.sources.AudioSource` to a realtime session, off the UI thread.

:class:`CaptureFeed`: the source's ``on_block`` only copies the block into a bounded queue (the
oldest blocks are dropped, and counted, when the consumer falls behind); the feed's thread drains
it in order with the commands (``talk_down``/``talk_up``, ``set_hands_free``, ``set_sink``). It
resamples to 16 kHz, reports levels, and gates push-to-talk (with a preroll; a tap too short to
be a turn is cleared); hands-free, every block goes to the session. A lost device commits what
was said so far, and so does an open one that stops delivering blocks for ``stall_seconds`` (a
:class:`~desktop_rt.live.stall_watch.StallWatch`; reported as SILENT, then OPEN when blocks come
back). Commands and blocks share the queue, so a commit always follows the last block captured
before the key was released. See docs/design/app.md.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, cast

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.audio.codecs import StreamResampler, level_dbfs
from desktop_rt.engine.audio.sources import LOST, OPEN, SILENT, AudioSource, SourceStatus
from desktop_rt.engine.audio.vad import FrameVad
from desktop_rt.live.stall_watch import StallWatch

__all__ = ["AudioSink", "LevelReading", "TurnMark", "CaptureFeed"]

log = logging.getLogger(__name__)


class AudioSink(Protocol):
    """Where captured audio goes: a :class:`~desktop_rt.engine.server.bridge.LocalSession`."""

    def append(self, samples16k: np.ndarray) -> None: ...

    def commit(self) -> None: ...

    def clear(self) -> None: ...


@dataclass(frozen=True)
class LevelReading:
    """``dbfs``: RMS level; ``speech``: highest speech probability in the interval (or None)."""

    dbfs: float
    speech: float | None
    clock: float


@dataclass(frozen=True)
class TurnMark:
    """A push-to-talk turn: ``kind`` is "started", "committed" or "cleared"; ``at`` on the feed clock."""

    kind: str
    at: float


_SinkSwitch = tuple[AudioSink | None, Callable[[float], None] | None]


@dataclass(frozen=True)
class _Command:
    name: str
    value: object = None


class CaptureFeed:
    """See the module docstring. Callbacks run on the feed's thread."""

    def __init__(
        self,
        source: AudioSource,
        sink: AudioSink | None = None,
        *,
        on_status: Callable[[SourceStatus], None] | None = None,
        on_level: Callable[[LevelReading], None] | None = None,
        on_turn: Callable[[TurnMark], None] | None = None,
        hands_free: bool = False,
        measure_speech: bool = True,
        max_queue_seconds: float = 60.0,  # a starved feed thread (a busy machine) loses nothing
        preroll_seconds: float = 0.5,
        min_turn_seconds: float = 0.1,
        level_interval: float = 0.05,
        stall_seconds: float = 1.0,
    ):
        self.source = source
        self._sink = sink
        self._anchors: list[tuple[int, int]] = [(0, 0)]  # (samples sent to the sink, feed clock)
        self._sink_sent = 0
        self._next_clock = 0
        self._on_status = on_status
        self._on_level = on_level
        self._on_turn = on_turn
        self._hands_free = hands_free
        self._measure_speech = measure_speech
        self._max_queue_seconds = max_queue_seconds
        self._preroll: collections.deque[np.ndarray] = collections.deque()
        self._preroll_samples = 0
        self._preroll_max = int(preroll_seconds * SAMPLE_RATE)
        self._min_turn = int(min_turn_seconds * SAMPLE_RATE)
        self._level_interval = level_interval
        self._items: collections.deque[object] = collections.deque()  # blocks, commands, statuses
        self._audio_queued = 0  # samples at the source rate waiting in _items
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._running = False
        self.dropped_blocks = 0
        self.clock_samples = 0  # 16 kHz samples captured since start (gated or not)
        self.appended_samples = 0  # 16 kHz samples sent to the sink since start
        self._turn_samples = 0  # sent since the last commit/clear
        self._talking = False
        self._gate_open = False
        self._vad: FrameVad | None = None
        self._watch = StallWatch(stall_seconds)
        self._started_at: float | None = None  # until the first block: when start() was called

    # ---- control (any thread) --------------------------------------------------------------

    @property
    def clock(self) -> float:
        """Seconds of audio captured since :meth:`start`."""
        return self.clock_samples / SAMPLE_RATE

    @property
    def talking(self) -> bool:
        return self._talking

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("the feed is already started")
        self._running = True
        self._started_at = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="desktop-rt-capture", daemon=True)
        self._thread.start()
        self.source.start(self._on_block, self._on_source_status)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the source, send what is queued, commit a turn still held, end the thread."""
        if self._thread is None:
            return
        self.source.stop()
        self._put(_Command("stop"))
        self._thread.join(timeout)
        self._thread = None
        log.info(
            "capture from %s stopped: %.1f s captured, %d blocks dropped",
            self.source.name,
            self.clock,
            self.dropped_blocks,
        )

    def set_sink(
        self, sink: AudioSink | None, on_attached: Callable[[float], None] | None = None
    ) -> None:
        """Send audio to another session from the next block on (None: nowhere).

        ``on_attached(clock)`` runs on the feed thread when the switch happens: ``clock`` is
        where the new session's audio begins on the feed clock.
        """
        self._put(_Command("sink", (sink, on_attached)))

    def clock_at(self, stream_seconds: float) -> float:
        """The feed clock (seconds) of the sample at ``stream_seconds`` of the current sink's audio."""
        target = stream_seconds * SAMPLE_RATE
        anchors = list(self._anchors)
        sent, clock = anchors[0]
        for a_sent, a_clock in anchors:
            if a_sent > target:
                break
            sent, clock = a_sent, a_clock
        return (clock + (target - sent)) / SAMPLE_RATE

    def talk_down(self) -> None:
        self._talking = True
        self._put(_Command("down"))

    def talk_up(self) -> None:
        self._talking = False
        self._put(_Command("up"))

    def set_hands_free(self, on: bool) -> None:
        self._put(_Command("hands_free", bool(on)))

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything queued so far was handled (tests, shutdown)."""
        done = threading.Event()
        self._put(_Command("flush", done))
        return done.wait(timeout)

    # ---- source callbacks (source thread): copy and return ----------------------------------

    def _on_block(self, samples: np.ndarray) -> None:
        block = np.array(samples, dtype=np.float32, copy=True).reshape(-1)
        self._watch.arrived(time.monotonic())
        with self._cond:
            self._items.append(block)
            self._audio_queued += len(block)
            limit = self._max_queue_seconds * self.source.samplerate
            while self._audio_queued > limit:
                for i, item in enumerate(self._items):
                    if isinstance(item, np.ndarray):
                        del self._items[i]
                        self._audio_queued -= len(item)
                        self.dropped_blocks += 1
                        if self.dropped_blocks == 1:
                            log.warning("capture fell behind: dropping the oldest audio")
                        break
            self._cond.notify()

    def _on_source_status(self, status: SourceStatus) -> None:
        self._put(status)

    def _put(self, item: object) -> None:
        with self._cond:
            self._items.append(item)
            self._cond.notify()

    # ---- the feed thread ---------------------------------------------------------------------

    def _run(self) -> None:
        resampler: StreamResampler | None = None
        rate = None
        level_buf: list[np.ndarray] = []
        speech_max: float | None = None
        level_due = 0
        while True:
            with self._cond:
                if not self._items:
                    self._cond.wait(self._watch.limit / 4)
                item = self._items.popleft() if self._items else None
                if isinstance(item, np.ndarray):
                    self._audio_queued -= len(item)
            self._check_stall()
            if isinstance(item, np.ndarray):
                self._note_first_audio()
                if resampler is None or rate != self.source.samplerate:
                    rate = self.source.samplerate
                    resampler = StreamResampler(rate)
                samples = resampler.process(item)
                if not len(samples):
                    continue
                self.clock_samples += len(samples)
                self._audio(samples)
                level_buf.append(samples)
                prob = self._speech(samples)
                if prob is not None:
                    speech_max = prob if speech_max is None else max(speech_max, prob)
                if self.clock_samples >= level_due:
                    level_due = self.clock_samples + int(self._level_interval * SAMPLE_RATE)
                    if self._on_level is not None:
                        self._on_level(
                            LevelReading(
                                level_dbfs(np.concatenate(level_buf)), speech_max, self.clock
                            )
                        )
                    level_buf, speech_max = [], None
            elif isinstance(item, SourceStatus):
                if item.state == OPEN:
                    self._watch.opened(time.monotonic())
                elif item.state != SILENT:
                    self._watch.closed()
                if item.state == LOST:
                    self._lost()
                if self._on_status is not None:
                    self._on_status(item)
            elif isinstance(item, _Command) and item.name == "stop":
                self._end_turn()
                return
            elif isinstance(item, _Command):
                self._command(item)

    def _command(self, cmd: _Command) -> None:
        if cmd.name == "down":
            if self._on_turn is not None:
                self._on_turn(TurnMark("started", self.clock - self._preroll_samples / SAMPLE_RATE))
            at = self.clock_samples - self._preroll_samples
            for block in self._preroll:
                at += len(block)
                self._send(block, at)
            self._preroll.clear()
            self._preroll_samples = 0
            self._gate_open = True
        elif cmd.name == "up":
            self._gate_open = False
            self._end_turn()
        elif cmd.name == "hands_free":
            self._hands_free = bool(cmd.value)
            if not self._hands_free:
                self._end_turn()
        elif cmd.name == "sink":
            self._sink, on_attached = cast(_SinkSwitch, cmd.value)
            self._turn_samples = 0
            self._sink_sent = 0
            self._anchors = [(0, self.clock_samples)]
            self._next_clock = self.clock_samples
            if on_attached is not None:
                on_attached(self.clock)
        elif cmd.name == "flush":
            cast(threading.Event, cmd.value).set()

    def _audio(self, samples: np.ndarray) -> None:
        if self._hands_free or self._gate_open:
            self._send(samples)
            return
        self._preroll.append(samples)
        self._preroll_samples += len(samples)
        while self._preroll and self._preroll_samples - len(self._preroll[0]) >= self._preroll_max:
            self._preroll_samples -= len(self._preroll.popleft())

    def _send(self, samples: np.ndarray, clock_end: int | None = None) -> None:
        """Append to the sink; ``clock_end``: feed clock (samples) where the block ends (None: now)."""
        if self._sink is None:
            return
        start = (self.clock_samples if clock_end is None else clock_end) - len(samples)
        if start != self._next_clock:  # a gap (push-to-talk) or injected audio: new anchor
            self._anchors.append((self._sink_sent, start))
        self._next_clock = start + len(samples)
        self._sink.append(samples)
        self._sink_sent += len(samples)
        self.appended_samples += len(samples)
        self._turn_samples += len(samples)

    def _end_turn(self) -> None:
        """Commit what was sent since the last commit (clear it when too short to be a turn)."""
        if self._sink is None or self._turn_samples == 0 or self._hands_free:
            return
        kind = "committed" if self._turn_samples >= self._min_turn else "cleared"
        if kind == "committed":
            self._sink.commit()
        else:
            self._sink.clear()
        self._turn_samples = 0
        if self._on_turn is not None:
            self._on_turn(TurnMark(kind, self.clock))

    def _lost(self) -> None:
        """The device went away mid-turn: finish the turn so its words are final and saved."""
        if self._hands_free:
            if self._sink is not None and self._turn_samples:
                # Trailing silence lets the session's own turn detection end the turn.
                silence = np.zeros(int(self.LOSS_SILENCE_SECONDS * SAMPLE_RATE), dtype=np.float32)
                self._sink.append(silence)
                self._sink_sent += len(silence)
                self._next_clock = -1  # the next real block starts a new anchor
                self._turn_samples = 0
            return
        self._end_turn()

    LOSS_SILENCE_SECONDS = 2.0

    def _note_first_audio(self) -> None:
        """Log once when audio first flows: a device can take seconds to start delivering."""
        if self._started_at is not None:
            waited, self._started_at = time.monotonic() - self._started_at, None
            log.info("capture from %s: first audio %.1f s after start", self.source.name, waited)

    def _check_stall(self) -> None:
        """Report a source that stopped delivering (and finish the turn), or its return."""
        change = self._watch.check(time.monotonic())
        if change is None:
            return
        name = self.source.name
        if change == "silent":
            self._lost()
            message = (
                f"Microphone silent: no audio from {name} for {self._watch.limit:g} s. Check that "
                "it is connected and not muted, then choose Retry; the text so far is kept."
            )
            status = SourceStatus(SILENT, name, message)
        else:
            status = SourceStatus(OPEN, name, f"{name} is delivering sound again")
        if self._on_status is not None:
            self._on_status(status)

    def _speech(self, samples: np.ndarray) -> float | None:
        if not self._measure_speech:
            return None
        if self._vad is None:
            try:
                self._vad = FrameVad()
            except Exception as exc:  # noqa: BLE001 - the meter then shows the level only
                log.warning("speech meter unavailable: %s", exc)
                self._measure_speech = False
                return None
        frames = self._vad.process(samples)
        if frames:
            self._last_speech = max(p for _, p in frames)
        return self._last_speech

    _last_speech: float | None = None
