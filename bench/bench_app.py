"""Desktop app benchmark: launch to ready-to-listen, word-to-window latency, memory over an hour.

    .venv/bin/python bench/bench_app.py                 # all three parts
    .venv/bin/python bench/bench_app.py --parts memory  # launch,latency,memory,x11 (comma list)

(a) launch: ``python -m desktop_rt.cli`` as a child process (offscreen Qt, fresh temp data and
    config dirs, a WAV file as the microphone), timed from spawn to the controller's
    ``ready to listen`` log line (server up, model loaded, microphone feeding a session).
    "first" = empty data dir, so the embedded model is assembled from its packages; "second" =
    the same dirs again. ``--runs`` of each, every run in new dirs.
(b) latency: in this process, the real window + controller + embedded server + model, hands-free,
    a FileAudioSource playing the LibriVox stream at 1x. Every caption update the caption view
    shows is timestamped; a word's latency = time its committed text first showed - time its
    end was played (offline faster-whisper word end on the same stream, beam 5).
(c) memory: a CaptionView + TranscriptRecorder + StoreWriter (SQLite in a temp dir) fed an
    hour of realistic events (3 words/s, turns of 5-15 s, tentative updates, deltas, completion)
    as fast as they go; RSS every simulated 10 minutes and the SQLite file size.
(x11) not in the default parts: the real window under Xvfb with its real microphone path (a
    PulseAudio null sink played at 1x), word latency and the longest Qt event-loop stall
    (bench/_app_x11.py).
(--beside transcribe) right after the window part: ``desktop-rt transcribe --speed 1`` on the
    same audio, its committed words timed and scored by the same code; the report gives both
    and what the window adds (bench/_app_beside.py).

Results: bench/results/app-<date>.md (+ .json), also printed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

ROOT = C.ROOT
READY_MARK = "ready to listen"


def log(*args) -> None:
    print("[bench_app]", *args, file=sys.stderr, flush=True)


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


# =============================================================================================
# (a) launch to ready-to-listen
# =============================================================================================
def launch_once(data: Path, config: Path, timeout: float) -> dict:
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        DESKTOP_RT_DATA_DIR=str(data),
        DESKTOP_RT_CONFIG_DIR=str(config),
        HF_HUB_OFFLINE="1",
        DESKTOP_RT_AUDIO_FILE=str(C.DATA / "ss-0870.wav"),
        PYTHONUNBUFFERED="1",
    )
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop_rt.cli"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    ready: list[float] = []
    lines: list[str] = []

    def reader() -> None:
        for line in proc.stderr:
            lines.append(line.rstrip())
            if READY_MARK in line and not ready:
                ready.append(time.monotonic() - t0)

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    deadline = t0 + timeout
    while not ready and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = proc.wait()
    th.join(5)
    if not ready:
        log("no ready line; stderr tail:\n" + "\n".join(lines[-20:]))
    return {"ready_s": ready[0] if ready else None, "exit_code": rc}


def part_launch(args) -> dict:
    out = {"first": [], "second": []}
    for i in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="bench-app-") as tmp:
            data, config = Path(tmp) / "data", Path(tmp) / "config"
            for which in ("first", "second"):
                r = launch_once(data, config, args.launch_timeout)
                log(f"launch run {i + 1} {which}: {r}")
                out[which].append(r)
    return out


# =============================================================================================
# (b) word latency, mic feed -> caption view
# =============================================================================================
class TimedFileSource:
    """Wraps FileAudioSource to note when the clip's first block is delivered (the clip's t=0)."""

    def __new__(cls, audio, pace):
        from desktop_rt.engine.audio.sources import FileAudioSource

        class _Timed(FileAudioSource):
            t0: float | None = None

            def _next_block(self):
                before = self._position
                block = super()._next_block()
                if self.t0 is None and before == 0 and self._position > 0:
                    # The block just delivered covers the last block-length of "real" time.
                    self.t0 = time.monotonic() - self.block / self.samplerate / self.pace
                return block

        return _Timed(audio, pace=pace, autoplay=False, name="bench stream")


def pump(app, cond, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        app.processEvents()
        if cond():
            return True
        time.sleep(0.005)
    return cond()


def part_latency(args) -> dict:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from desktop_rt.config import HANDS_FREE, AudioSettings, ServerSettings, Settings
    from desktop_rt.engine.models.embedded import ensure_default_model
    from desktop_rt.ui.app import build_app

    sys.path.insert(0, str(ROOT / "bench"))
    from _align import align_ends, alignment_words, percentile

    app = QApplication.instance() or QApplication([])
    from _app_inputs import stream_named

    model_dir = ensure_default_model()
    stream = stream_named(args.stream)
    log(f"aligning {stream.name} offline ({stream.seconds:.1f} s)…")
    reference = alignment_words(model_dir, stream, os.cpu_count() or 1, None)
    runs = []
    for run in range(args.latency_runs):
        tmp = tempfile.mkdtemp(prefix="bench-app-lat-")
        source = TimedFileSource(stream.audio, args.speed)
        settings = Settings().with_group(
            server=ServerSettings(port=0), audio=AudioSettings(mode=HANDS_FREE)
        )
        desk = build_app(
            settings=settings,
            source_factory=lambda _s, source=source: source,
            history_path=Path(tmp) / "history.sqlite3",
            persist_settings=False,
        )
        updates: list[tuple[float, str, str]] = []
        # Connected after the window's own slot, so it runs right after the view showed the turn.
        desk.controller.bridge.caption.connect(
            lambda turn, updates=updates: updates.append(
                (time.monotonic(), turn.item_id, turn.committed)
            )
        )
        desk.window.show()
        desk.start()
        if not pump(app, lambda desk=desk: desk.controller.listening, 180):
            raise SystemExit("the app never started listening")
        source.play()
        pump(app, source.finished.is_set, stream.seconds / args.speed + 60)
        # Wait for the last turn to complete: no caption update for 4 s.
        pump(app, lambda u=updates: bool(u) and time.monotonic() - u[-1][0] > 4.0, 120)
        desk.window.close()
        pump(app, desk.controller.stopped.is_set, 60)
        desk.dispose()  # delete the window on this thread now, as the app does when it quits

        emitted = [{"text": tok, "t": t} for tok, t in C.first_shown(updates)]
        ends = align_ends(emitted, reference)
        lat = [
            w["t"] - source.t0 - end / args.speed
            for w, end in zip(emitted, ends, strict=True)
            if end is not None
        ]
        text = " ".join(w["text"] for w in emitted)
        r = {
            "words": len(emitted),
            "matched": len(lat),
            "median_s": percentile(lat, 50),
            "p90_s": percentile(lat, 90),
            "min_s": min(lat) if lat else None,
            "max_s": max(lat) if lat else None,
            "wer": C.wer(stream.reference, text),
            "turns": len({item for _, item, _ in updates}),
            "updates": len(updates),
        }
        log(f"latency run {run + 1}: {r}")
        runs.append(r)
        desk.window.deleteLater()
        app.processEvents()
    return {"stream": stream.name, "seconds": stream.seconds, "speed": args.speed, "runs": runs}


# =============================================================================================
# (c) memory over an hour of captions
# =============================================================================================
def simulated_events(seconds: float, seed: int = 7):
    """(simulated time, event) for ``seconds`` of speech: 3 words/s, turns of 5-15 s, 0.6 s pauses."""
    from desktop_rt.engine.protocol.events import (
        InputAudioBufferCommitted,
        InputAudioBufferSpeechStarted,
        InputAudioBufferSpeechStopped,
        TranscriptionCompleted,
        TranscriptionDelta,
        TranscriptionTentative,
    )

    rng = random.Random(seed)
    vocab = C.norm_tokens(" ".join((C.DATA / f"{n}.txt").read_text() for n in C.LIBRIVOX))
    t, prev, n = 0.0, None, 0
    while t < seconds:
        item = f"item_{n:05d}"
        n += 1
        length = rng.uniform(5, 15)
        start = t
        yield t, InputAudioBufferSpeechStarted(item_id=item, audio_start_ms=int(t * 1000))
        words = [rng.choice(vocab) for _ in range(int(length * 3))]
        committed = 0
        # Every 1/3 s one word more is heard (tentative); every ~1 s the older words commit.
        for k in range(1, len(words) + 1):
            t = start + k / 3
            if k % 3 == 0:
                delta = "".join(" " + w for w in words[committed : k - 2])
                if delta:
                    yield t, TranscriptionDelta(item_id=item, delta=delta)
                    committed = k - 2
            yield (
                t,
                TranscriptionTentative(
                    item_id=item, text="".join(" " + w for w in words[committed:k])
                ),
            )
        t = start + length
        yield t, InputAudioBufferSpeechStopped(item_id=item, audio_end_ms=int(t * 1000))
        yield t, InputAudioBufferCommitted(item_id=item, previous_item_id=prev)
        t += 0.5
        yield (
            t,
            TranscriptionCompleted(
                item_id=item, transcript="".join(" " + w for w in words), audio_seconds=length
            ),
        )
        prev = item
        t += 0.6


def db_kb(db: Path) -> int:
    """The SQLite file with its write-ahead log."""
    return round(sum(p.stat().st_size for p in (db, Path(f"{db}-wal")) if p.exists()) / 1024)


def part_memory(args) -> dict:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from desktop_rt.history.writer import StoreWriter
    from desktop_rt.live.transcript_recorder import CaptionTurn, TranscriptRecorder
    from desktop_rt.ui.widgets.caption_view import CaptionView

    app = QApplication.instance() or QApplication([])
    tmp = Path(tempfile.mkdtemp(prefix="bench-app-mem-"))
    db = tmp / "history.sqlite3"
    writer = StoreWriter(db)
    recorder = TranscriptRecorder(
        "rec_bench", writer, model="whisper-base", language="en", mode="hands_free"
    )
    view = CaptionView()
    view.resize(900, 600)
    view.show()
    app.processEvents()
    total = args.memory_minutes * 60
    step = 600
    rows = [
        {
            "minute": 0,
            "rss_mb": round(rss_mb(), 1),
            "db_kb": 0,
            "turns_on_screen": 0,
            "doc_chars": 0,
        }
    ]
    log(f"memory: start RSS {rows[0]['rss_mb']} MB")
    next_mark, events, t_wall = step, 0, time.monotonic()
    words = 0
    for t, event in simulated_events(total):
        while t >= next_mark:
            app.processEvents()
            writer.flush(60)
            rows.append(
                {
                    "minute": next_mark // 60,
                    "rss_mb": round(rss_mb(), 1),
                    "db_kb": db_kb(db),
                    "turns_on_screen": len(view.turns()),
                    "doc_chars": view.document().characterCount(),
                }
            )
            log(f"memory: {rows[-1]}")
            next_mark += step
        for update in recorder.handle(event):
            if isinstance(update, CaptionTurn):
                view.show_turn(update)
        events += 1
        if events % 50 == 0:
            app.processEvents()
    recorder.end()
    writer.close(60)
    app.processEvents()
    words = len(C.norm_tokens(recorder.committed_text))
    end = {
        "rss_mb": round(rss_mb(), 1),
        "db_kb": db_kb(db),
        "turns_on_screen": len(view.turns()),
        "turns_total": len(recorder.captions()),
        "words": words,
        "events": events,
        "wall_s": round(time.monotonic() - t_wall, 1),
    }
    log(f"memory end: {end}")
    return {"simulated_minutes": args.memory_minutes, "rows": rows, "end": end}


# =============================================================================================
# Report
# =============================================================================================
def fmt(v, spec=".2f", suffix=" s") -> str:
    return "—" if v is None else f"{v:{spec}}{suffix}"


def render(report: dict) -> str:
    m = report["machine"]
    lines = [
        f"# desktop app benchmark — {report['date']}",
        "",
        f"{m['cpu_model']}, {m['usable_cores']} cores, {m['memory_gb']} GB, {m['os']}, Python {m['python']}.",
        f"Load average at start: {report['load_start']}, at end: {report['load_end']}. "
        "Other work was running on this machine: numbers are upper bounds, not comparable with a quiet run.",
        "",
    ]
    if "launch" in report:
        lines += [
            "## (a) Launch to ready-to-listen",
            "",
            "`python -m desktop_rt.cli`, offscreen, fresh data/config dirs, a WAV as the microphone; "
            "spawn → the controller's `ready to listen` log line.",
            "",
            "| launch | runs (s) | median |",
            "|---|---|---|",
        ]
        for which, label in (
            ("first", "first (model assembled)"),
            ("second", "second (model on disk)"),
        ):
            vals = [r["ready_s"] for r in report["launch"][which]]
            ok = [v for v in vals if v is not None]
            lines.append(
                f"| {label} | {', '.join(fmt(v, '.1f', '') for v in vals)} | "
                f"{fmt(statistics.median(ok) if ok else None, '.1f')} |"
            )
        lines.append("")
    if "latency" in report:
        lat = report["latency"]
        lines += [
            "## (b) Word end in the mic feed → committed word in the window",
            "",
            f"Stream `{lat['stream']}` ({lat['seconds']:.1f} s) at {lat['speed']:g}x, hands-free, real window, "
            "server and model; reference word ends: offline faster-whisper (beam 5) on the same audio.",
            "",
            "| run | words | matched | median | p90 | min | max | WER | turns |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for i, r in enumerate(lat["runs"], 1):
            lines.append(
                f"| {i} | {r['words']} | {r['matched']} | {fmt(r['median_s'])} | {fmt(r['p90_s'])} | "
                f"{fmt(r['min_s'])} | {fmt(r['max_s'])} | {r['wer']:.3f} | {r['turns']} |"
            )
        lines.append("")
    if "memory" in report:
        mem = report["memory"]
        lines += [
            "## (c) Memory over an hour of simulated captions",
            "",
            f"CaptionView + TranscriptRecorder + StoreWriter (SQLite), {mem['simulated_minutes']} simulated "
            "minutes: 3 words/s, turns of 5–15 s, tentative text every word, deltas every second, "
            f"fed as fast as possible ({mem['end']['events']} events in {mem['end']['wall_s']} s).",
            "",
            "| minute | RSS (MB) | SQLite + WAL (KB) | turns on screen | document chars |",
            "|---|---|---|---|---|",
        ]
        for r in mem["rows"]:
            lines.append(
                f"| {r['minute']} | {r['rss_mb']} | {r['db_kb']} | {r['turns_on_screen']} | {r['doc_chars']} |"
            )
        e = mem["end"]
        lines += [
            "",
            f"End: RSS {e['rss_mb']} MB, SQLite {e['db_kb']} KB, {e['turns_total']} turns / "
            f"{e['words']} words in the history, {e['turns_on_screen']} turns on screen.",
            "",
        ]
    if "x11" in report:
        from _app_x11 import render_x11

        lines += render_x11(report["x11"])
    if "beside" in report:
        from _app_beside import render_beside

        lines += render_beside(report)
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--parts", default="launch,latency,memory")
    p.add_argument("--runs", type=int, default=3, help="launch runs (each first + second)")
    p.add_argument("--launch-timeout", type=float, default=300)
    p.add_argument("--latency-runs", type=int, default=1)
    p.add_argument("--stream", default="librivox", help="librivox, long, eval[@SECONDS]")
    p.add_argument("--speed", type=float, default=1.0)
    p.add_argument("--memory-minutes", type=int, default=60)
    p.add_argument(
        "--engine-nice",
        choices=("all", "none", "model"),
        default="model",
        help="x11: only the model's native threads niced, as shipped (model: loaded on a niced "
        "thread), none, or every engine thread (all: the app until 2026-12-01)",
    )
    p.add_argument(
        "--no-engine-nice",
        dest="engine_nice",
        action="store_const",
        const="none",
        help="x11: --engine-nice none",
    )
    p.add_argument(
        "--engine-policy",
        choices=("other", "batch", "idle"),
        default=None,
        help="x11: the model's native threads' scheduling policy (SCHED_OTHER, SCHED_BATCH, "
        "SCHED_IDLE) with their nice value; default: as shipped (embedded_server.ENGINE_PRIORITY)",
    )
    p.add_argument(
        "--switch-interval-ms",
        type=float,
        default=None,
        help="x11: sys.setswitchinterval in the app, ms; default: as shipped (ui.app.SWITCH_INTERVAL)",
    )
    p.add_argument(
        "--beside",
        choices=("transcribe",),
        default=None,
        help="after the window part (x11, else latency), `desktop-rt transcribe --speed 1` on "
        "the same audio, scored alike: what the window adds",
    )
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    args = p.parse_args(argv)
    parts = args.parts.split(",")
    if args.beside and not {"x11", "latency"} & set(parts):
        p.error("--beside needs a window part: --parts x11 or latency")
    # Isolate the in-process parts from the user's files (the model is assembled here once).
    os.environ.setdefault(
        "DESKTOP_RT_DATA_DIR", str(Path(tempfile.gettempdir()) / "desktop-rt-bench-data")
    )
    os.environ.setdefault("DESKTOP_RT_CONFIG_DIR", tempfile.mkdtemp(prefix="bench-app-config-"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    report = {
        "date": dt.date.today().isoformat(),
        "machine": C.machine_info(),
        "load_start": C.loadavg(),
    }
    if "launch" in parts:
        report["launch"] = part_launch(args)
    if "memory" in parts:
        report["memory"] = part_memory(args)
    if "latency" in parts:
        report["latency"] = part_latency(args)
    if "x11" in parts:
        from _app_x11 import part_x11

        report["x11"] = part_x11(args)
    if args.beside:
        from _app_beside import part_beside

        report["beside"] = part_beside(args, report)
    report["load_end"] = C.loadavg()
    text = render(report)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = args.out / f"app-{report['date']}"
    stem.with_suffix(".md").write_text(text + "\n")
    stem.with_suffix(".json").write_text(json.dumps(report, indent=1))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
