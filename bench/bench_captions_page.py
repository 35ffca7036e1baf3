#!/usr/bin/env python3
"""Caption page benchmark: commit-to-browser delay, and 20 viewers against the app's own captions.

    .venv/bin/python bench/bench_captions_page.py                # 0 then 20 viewers, 1 run each
    .venv/bin/python bench/bench_captions_page.py --runs 2 --viewers 0,20,50

The real model, the real embedded server and the window's own session path (a ``LiveSession``
with the LibriVox stream played at 1x through the file-backed source, hands-free), the caption
listener (``CaptionShareServer``) and a real headless chromium showing the page.

1. Draw delay: every time a line's committed text grows, the broadcaster's subscriber stamps it
   (wall clock); in the page a MutationObserver stamps each change of a line's committed text
   at the next animation frame (the frame it is painted in). Delay = page stamp - commit stamp,
   same machine clock. Target: median <= 150 ms on loopback.
2. The app's own captions: word latency = when a committed word reached the broadcaster (the
   same moment the window gets it) minus the end of its speech in the stream (offline
   faster-whisper word ends, as bench_app.py). Compared with 0 and N extra viewers (N websocket
   connections from a child process reading every frame): the viewers must not slow it.

Results: bench/results/captions-page-<date>.{md,json}, also printed.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent))
import _common as C  # noqa: E402
from _align import align_ends, alignment_words, percentile  # noqa: E402

TOKEN = "bench-viewer-token-0123456789"
DRAW_LOG_JS = """
window.__drawn = [];
const seen = new Map();
new MutationObserver(() => requestAnimationFrame(() => {
  const t = Date.now();
  for (const line of document.querySelectorAll('#captions .line')) {
    const n = line.querySelector('.committed').textContent.length;
    if (seen.get(line.dataset.id) !== n) { seen.set(line.dataset.id, n); window.__drawn.push([t, line.dataset.id, n]); }
  }
})).observe(document.getElementById('captions'), {subtree: true, childList: true, characterData: true});
true
"""


def log(*args: object) -> None:
    print("[bench_captions_page]", *args, file=sys.stderr, flush=True)


# ---- the viewers' child process -------------------------------------------------------------


async def viewers_main(url: str, count: int) -> None:
    from websockets.asyncio.client import connect

    frames = [0] * count
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    connections = [await connect(url, max_size=None) for _ in range(count)]

    async def read(i: int) -> None:
        async for _message in connections[i]:
            frames[i] += 1

    tasks = [asyncio.create_task(read(i)) for i in range(count)]
    print("ready", flush=True)
    await stop.wait()
    for task in tasks:
        task.cancel()
    print(json.dumps({"frames": frames}), flush=True)


# ---- one run --------------------------------------------------------------------------------


class CommitLog:
    """Broadcaster subscriber: (wall time, line id, committed length, new text) per growth."""

    def __init__(self) -> None:
        self.entries: list[tuple[float, str, int, str]] = []
        self._lengths: dict[str, int] = {}
        self.last = 0.0

    def __call__(self, frame: dict) -> None:
        if frame.get("type") != "line":
            return
        line, now = frame["line"], time.time()
        old = self._lengths.get(line["id"], 0)
        if len(line["committed"]) > old:
            self._lengths[line["id"]] = len(line["committed"])
            self.entries.append((now, line["id"], len(line["committed"]), line["committed"][old:]))
            self.last = now


def play(server, stream, commits: CommitLog) -> float:
    """The stream through the window's session path, hands-free (the app's server VAD cuts
    turns at pauses); returns its start time. Ends once no word came for 3 s after the clip."""
    from desktop_rt.engine.audio.sources import FileAudioSource
    from desktop_rt.engine.audio.vad import TurnDetectorSettings
    from desktop_rt.live.session import LiveSession, LiveSettings

    source = FileAudioSource(stream.audio, autoplay=False)
    closed = threading.Event()
    live = LiveSession(
        server,
        source,
        LiveSettings("en", TurnDetectorSettings()),
        writer=None,
        model=server.config.model_id,
        publish=lambda _u: None,
        on_closed=lambda _uid: closed.set(),
    )
    live.start()
    time.sleep(0.3)
    start = time.time()
    source.play()
    source.finished.wait(stream.seconds + 60)
    deadline = time.time() + 60
    while time.time() < deadline and time.time() - max(start, commits.last) < 3.0:
        time.sleep(0.1)
    live.stop()
    closed.wait(120)
    return start


def start_viewers(url: str, count: int) -> subprocess.Popen[str] | None:
    if count == 0:
        return None
    child = subprocess.Popen(
        [sys.executable, __file__, "--viewers-child", url, str(count)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    return child


def stop_viewers(child: subprocess.Popen[str] | None) -> list[int]:
    if child is None:
        return []
    child.send_signal(signal.SIGTERM)
    out, _ = child.communicate(timeout=30)
    return json.loads(out.strip().splitlines()[-1])["frames"]


def run_once(server, share, page, stream, reference_words, viewers: int) -> dict:
    commits = CommitLog()
    _snapshot, unsubscribe = server.captions.subscribe(commits)
    child = start_viewers(f"ws://127.0.0.1:{share.port}/captions/feed?token={TOKEN}", viewers)
    page.evaluate("window.__drawn = []")
    busy0, cpu0, wall0 = C.system_busy_seconds(), time.process_time(), time.time()
    start = play(server, stream, commits)
    time.sleep(1.0)  # the last frames reach the page
    own_cpu, wall = time.process_time() - cpu0, time.time() - wall0
    other = C.other_load(busy0, C.system_busy_seconds(), own_cpu, wall)
    unsubscribe()
    frames = stop_viewers(child)
    drawn = page.evaluate("window.__drawn")
    delays = []
    for at, line_id, length, _text in commits.entries:
        shown = [t for t, i, n in drawn if i == line_id and n >= length]
        if shown:
            delays.append(min(shown) - at * 1000)
    words = [
        {"text": word, "t": at - start}
        for at, _i, _n, text in commits.entries
        for word in text.split()
    ]
    ends = align_ends(words, reference_words)
    latencies = [w["t"] - end for w, end in zip(words, ends, strict=True) if end is not None]
    text = " ".join(t for _a, _i, _n, t in commits.entries)
    return {
        "viewers": viewers,
        "commits": len(commits.entries),
        "drawn_matched": len(delays),
        "draw_delay_ms_median": statistics.median(delays) if delays else None,
        "draw_delay_ms_p90": percentile(delays, 90),
        "draw_delay_ms_max": max(delays) if delays else None,
        "word_latency_s_median": statistics.median(latencies) if latencies else None,
        "word_latency_s_p90": percentile(latencies, 90),
        "wer": C.wer(stream.reference, text),
        "viewer_frames_min": min(frames) if frames else None,
        "app_cpu_s_per_audio_s": own_cpu / stream.seconds,
        "other_load_cores": other,
    }


# ---- report ---------------------------------------------------------------------------------


def render(report: dict) -> str:
    m = report["machine"]
    lines = [
        f"# Caption page benchmark — {report['date']}",
        "",
        f"Machine: {m['cpu_model']}, {m['usable_cores']} usable cores, {m['memory_gb']} GB; "
        f"load average at start {report['loadavg']}. Stream: {report['stream']} "
        f"({report['seconds']:.1f} s) at 1x, hands-free, real model, chromium headless.",
        "",
        "| viewers | draw delay median (ms) | p90 | max | commits drawn | app word latency median (s) | p90 | WER | app CPU s / audio s | other load (cores) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["runs"]:

        def f(value, fmt=".0f"):
            return "—" if value is None else format(value, fmt)

        lines.append(
            f"| {r['viewers']} + 1 browser | {f(r['draw_delay_ms_median'])} | "
            f"{f(r['draw_delay_ms_p90'])} | {f(r['draw_delay_ms_max'])} | "
            f"{r['drawn_matched']}/{r['commits']} | {f(r['word_latency_s_median'], '.2f')} | "
            f"{f(r['word_latency_s_p90'], '.2f')} | {r['wer']:.3f} | "
            f"{r['app_cpu_s_per_audio_s']:.2f} | {f(r['other_load_cores'], '.2f')} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--viewers", default="0,20", help="extra viewer counts, one run each")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--stream", default=C.QUICK_STREAM)
    parser.add_argument("--out", type=Path, default=BENCH / "results")
    parser.add_argument("--viewers-child", nargs=2, metavar=("URL", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.viewers_child:
        asyncio.run(viewers_main(args.viewers_child[0], int(args.viewers_child[1])))
        return
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from desktop_rt.engine.asr.whisper import WhisperBackend
    from desktop_rt.engine.models.embedded import ensure_default_model
    from desktop_rt.engine.server.captions_page import CaptionShareConfig, CaptionShareServer
    from desktop_rt.engine.server.server import RealtimeServer, ServerConfig
    from tests.support.browser import Chromium

    stream = C.build_stream(args.stream)
    model_dir = ensure_default_model()
    log(f"offline word ends of {stream.name} ({stream.seconds:.1f} s)…")
    reference_words = alignment_words(model_dir, stream, os.cpu_count() or 2, "en")
    report = {
        "date": dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "machine": C.machine_info(),
        "loadavg": C.loadavg(),
        "stream": stream.name,
        "seconds": stream.seconds,
        "runs": [],
    }
    backend = WhisperBackend(model_dir)
    config = CaptionShareConfig(TOKEN, host="127.0.0.1", port=0, max_viewers=500)
    with (
        RealtimeServer(ServerConfig(port=0, record_activity=False), backend) as server,
        CaptionShareServer(config) as share,
        Chromium(Path(tempfile.mkdtemp(prefix="bench-chromium-"))) as browser,
    ):
        share.follow(server.captions)
        page = browser.open(share.page_url("127.0.0.1"))
        page.evaluate(DRAW_LOG_JS)
        for _ in range(args.runs):
            for viewers in (int(v) for v in args.viewers.split(",")):
                log(f"run with {viewers} extra viewers…")
                report["runs"].append(
                    run_once(server, share, page, stream, reference_words, viewers)
                )
                log(json.dumps(report["runs"][-1]))
    backend.close()
    args.out.mkdir(parents=True, exist_ok=True)
    stem = args.out / f"captions-page-{dt.date.today().isoformat()}"
    stem.with_suffix(".json").write_text(json.dumps(report, indent=1))
    text = render(report)
    stem.with_suffix(".md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
