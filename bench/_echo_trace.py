"""bench_echo's record of the echo guard at work, and its replay.

:class:`TracingGuard` is the echo guard that also writes down, with the guard's clock, every
system-stream event it was shown, every microphone event held and every event it let out (with
the words it kept). :func:`leaks` names the system words that got through (the runs of two or
more that the echo measure counts) and, for each, when the microphone said them and when the
system stream's reference had them. :func:`replay` runs a saved trace through a fresh
:class:`~desktop_rt.live.echo_dedup.EchoDeduplicator` on the recorded clock, so a change of the
guard's rule can be checked on the very runs that missed, without the model.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable

from desktop_rt.engine.protocol.events import (
    InputAudioBufferSpeechStarted,
    TranscriptionCompleted,
    TranscriptionDelta,
    TranscriptionTentative,
)
from desktop_rt.live.echo_dedup import EchoDeduplicator, tokens

__all__ = ["TracingGuard", "leaks", "replay"]

Entry = list  # [t, "sys" | "mic" | "out", kind, item_id, text]
_KINDS: dict[type, str] = {
    InputAudioBufferSpeechStarted: "started",
    TranscriptionDelta: "delta",
    TranscriptionTentative: "tentative",
    TranscriptionCompleted: "completed",
}


def _entry(t: float, who: str, event: object) -> Entry | None:
    kind = next((name for cls, name in _KINDS.items() if isinstance(event, cls)), None)
    if kind is None:
        return None
    text = ""
    if isinstance(event, TranscriptionDelta):
        text = event.delta
    elif isinstance(event, TranscriptionTentative):
        text = event.text
    elif isinstance(event, TranscriptionCompleted):
        text = event.transcript
    item = event.item_id  # type: ignore[attr-defined]
    return [round(t, 3), who, kind, item, text]


def _event(kind: str, item: str, text: str) -> object:
    makers: dict[str, Callable[[], object]] = {
        "started": lambda: InputAudioBufferSpeechStarted(item, 0),
        "delta": lambda: TranscriptionDelta(item, text),
        "tentative": lambda: TranscriptionTentative(item, text),
        "completed": lambda: TranscriptionCompleted(item, text, 0.0),
    }
    return makers[kind]()


class TracingGuard(EchoDeduplicator):
    """The echo guard, writing down what it was shown and what it let out (``trace``), and
    the microphone's words as they were before it (``raw``)."""

    def __init__(self, **options: object) -> None:
        super().__init__(**options)  # type: ignore[arg-type]
        self.raw: dict[str, str] = {}
        self.trace: list[Entry] = []

    def _note(self, who: str, events: list[object]) -> list[object]:
        now = self._clock()
        self.trace.extend(e for e in (_entry(now, who, ev) for ev in events) if e is not None)
        return events

    def reference(self, event: object) -> None:
        self._note("sys", [event])
        super().reference(event)

    def mic_event(self, event: object) -> list[object]:
        if isinstance(event, TranscriptionDelta):
            self.raw[event.item_id] = self.raw.get(event.item_id, "") + event.delta
        self._note("mic", [event])
        return self._note("out", super().mic_event(event))

    def tick(self) -> list[object]:
        return self._note("out", super().tick())

    def flush(self) -> list[object]:
        return self._note("out", super().flush())


def _runs(system_text: str, mic_text: str) -> list[tuple[int, int]]:
    """(start, size) in the system's words of each run of >= 2 words also in the mic's text."""
    sys_words, mic_words = tokens(system_text), tokens(mic_text)
    matcher = difflib.SequenceMatcher(None, sys_words, mic_words, autojunk=False)
    return [(b.a, b.size) for b in matcher.get_matching_blocks() if b.size >= 2]


def _first(trace: list[Entry], who: str, kind: str, pair: str) -> float | None:
    """When ``who``'s text first held ``pair``: deltas joined per item, a tentative alone."""
    so_far: dict[str, str] = {}
    for t, whose, what, item, text in trace:
        if whose != who or what != kind:
            continue
        if kind == "delta":
            text = so_far[item] = so_far.get(item, "") + text
        if f" {pair} " in f" {' '.join(tokens(text))} ":
            return float(t)
    return None


def leaks(system_text: str, kept_text: str, trace: list[Entry]) -> list[dict]:
    """The system's word runs found in the kept microphone text; for each, the times (guard
    clock, seconds from the first event) the microphone's stream said it, the guard let it out,
    and the system's reference had it (committed, or in one tentative hypothesis)."""
    sys_words = tokens(system_text)
    t0 = trace[0][0] if trace else 0.0
    found = []
    for start, size in _runs(system_text, kept_text):
        run = sys_words[start : start + size]
        pair = " ".join(run[:2])
        times = {
            name: _first(trace, who, kind, pair)
            for name, who, kind in (
                ("mic_said_at", "mic", "delta"),
                ("guard_let_out_at", "out", "delta"),
                ("system_committed_at", "sys", "delta"),
                ("system_tentative_at", "sys", "tentative"),
            )
        }
        shown = {k: None if v is None else round(v - t0, 2) for k, v in times.items()}
        found.append({"words": " ".join(run), **shown})
    return found


def replay(
    trace: list[Entry], make_guard: Callable[[Callable[[], float]], EchoDeduplicator]
) -> str:
    """The microphone text a guard made by ``make_guard(clock)`` keeps from a recorded trace
    (ticks every 50 ms between events, as level readings tick the live guard)."""
    now = [trace[0][0] if trace else 0.0]
    guard = make_guard(lambda: now[0])
    kept: dict[str, str] = {}

    def take(events: list[object]) -> None:
        for event in events:
            if isinstance(event, TranscriptionDelta):
                kept[event.item_id] = kept.get(event.item_id, "") + event.delta

    for t, who, kind, item, text in sorted(trace, key=lambda entry: entry[0]):
        while now[0] + 0.05 < t:
            now[0] += 0.05
            take(guard.tick())
        now[0] = max(now[0], t)
        if who == "sys":
            guard.reference(_event(kind, item, text))
        elif who == "mic":
            take(guard.mic_event(_event(kind, item, text)))
        take(guard.tick())
    take(guard.flush())
    return " ".join(text.strip() for text in kept.values())
