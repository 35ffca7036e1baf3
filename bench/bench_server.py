#!/usr/bin/env python3
"""Realtime server benchmark: what the websocket path adds, and how many sessions stay realtime.

    .venv/bin/python bench/bench_server.py              # overhead (3 runs) + concurrency up to 6
    .venv/bin/python bench/bench_server.py --quick      # 1 overhead run, concurrency up to 3

1. Overhead. The same stream, paced at wall-clock speed, in the same process and run, through
   (a) the engine called directly (``StreamingTranscriber`` driven like a worker, as
   ``bench_streaming.py`` does) and (b) a websocket client of the embedded ``RealtimeServer``
   (24 kHz PCM16 appends of 100 ms, deltas stamped when the client receives them). Word latency
   = time the word reached the caller minus the stream time its speech ended (offline word
   timestamps, aligned as in ``bench_streaming.py``). The target: the server adds under 5 % to
   the median word latency. The order of (a) and (b) alternates between runs.
2. Concurrency. N websocket clients stream at once (N = 1, 2, ...), each the whole stream at
   real time. A session "stays realtime" when its median word latency is under 2 s; the run
   stops at the first N where one does not (``--keep-going``: every N up to the most).
   Per-session memory is the growth of this process's RSS over the idle server (model
   loaded), divided by N.

Numbers depend on the machine and on its load: the report records both.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import re
import statistics
import sys
import threading
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402
from _align import align_ends, alignment_words, percentile  # noqa: E402

BENCH = Path(__file__).resolve().parent
REALTIME_MEDIAN = 2.0
OVERHEAD_TARGET = 0.05
WIRE_RATE = 24_000


def log(*args) -> None:
    print(*args, file=sys.stderr, flush=True)


def latencies(words: list[dict], reference_words, speed: float) -> list[float]:
    words = [w for w in words if C.norm_tokens(w["text"])]
    ends = align_ends(words, reference_words)
    return [
        w["commit"] - end / speed for w, end in zip(words, ends, strict=True) if end is not None
    ]


def summary(
    words: list[dict], reference_words, stream: C.Stream, speed: float, final: float
) -> dict:
    lat = latencies(words, reference_words, speed)
    return {
        "first_word": lat[0] if lat else None,
        "median": percentile(lat, 50),
        "p90": percentile(lat, 90),
        "final": final,
        "wer": C.wer(stream.reference, "".join(w["text"] for w in words)),
        "words": len(lat),
    }


# ---- (a) the engine, called directly ---------------------------------------------------------


def run_direct(backend, stream: C.Stream, speed: float, language: str | None) -> dict:
    from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber

    tr = StreamingTranscriber(backend, StreamingConfig(language=language))

    def words(update):
        return [(w.text, w.start, w.end) for w in update.committed]

    res = C.run_paced(
        stream.audio,
        speed=speed,
        insert=tr.insert_audio,
        step=lambda: words(tr.process()),
        finish=lambda: words(tr.finish()),
    )
    return {"words": res.words, "final": res.final_latency, "inferences": tr.inferences}


# ---- (b) a websocket client ------------------------------------------------------------------


async def run_client(
    url: str, stream: C.Stream, speed: float, language: str | None, delay: float = 0.0
) -> dict:
    """Stream the audio at ``speed`` x real time; stamp every delta's words on arrival."""
    import base64

    import soxr
    from websockets.asyncio.client import connect

    from desktop_rt.engine.audio.codecs import float_to_pcm16

    await asyncio.sleep(delay)
    wire = soxr.resample(stream.audio, C.SAMPLE_RATE, WIRE_RATE, quality="HQ")
    step = int(WIRE_RATE * C.CHUNK_SECONDS)
    chunks = [
        base64.b64encode(float_to_pcm16(wire[i : i + step])).decode()
        for i in range(0, len(wire), step)
    ]
    words: list[dict] = []
    done: dict = {}
    async with connect(url, max_size=None, open_timeout=60) as ws:
        assert json.loads(await ws.recv())["type"] == "session.created"
        session = {
            "type": "transcription",
            "audio": {
                "input": {
                    "format": {"type": "audio/pcm", "rate": WIRE_RATE},
                    "transcription": {"language": language},
                }
            },
        }
        await ws.send(json.dumps({"type": "session.update", "session": session}))
        loop = asyncio.get_running_loop()
        t0 = 0.0

        async def receive() -> None:
            async for raw in ws:
                event = json.loads(raw)
                now = loop.time() - t0
                if event["type"] == "conversation.item.input_audio_transcription.delta":
                    for text in re.findall(r"\s*\S+", event["delta"]):
                        # an item's first delta has no leading space: keep words apart
                        words.append(
                            {"text": text if text[0].isspace() else " " + text, "commit": now}
                        )
                elif event["type"] == "conversation.item.input_audio_transcription.completed":
                    done["at"] = now
                elif event["type"] == "error":
                    log(f"    server error: {event['error']['message']}")

        while json.loads(await ws.recv())["type"] != "session.updated":
            pass
        t0 = loop.time()
        reader = asyncio.create_task(receive())
        chunk_wall = C.CHUNK_SECONDS / speed
        for k, chunk in enumerate(chunks):
            due = t0 + (k + 1) * chunk_wall
            if (wait := due - loop.time()) > 0:
                await asyncio.sleep(wait)
            await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": chunk}))
        audio_end = len(chunks) * chunk_wall
        await ws.send(json.dumps({"type": "input_audio_buffer.commit", "final": True}))
        await reader
    final = done.get("at", loop.time() - t0) - audio_end
    return {"words": words, "final": final}


def rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 1e6


class RssSampler:
    """Peak RSS of this process while a block runs (a benchmark may poll; tests may not)."""

    def __init__(self) -> None:
        self.peak = rss_mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, rss_mb())

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


# ---- the run ---------------------------------------------------------------------------------


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--quick", action="store_true", help="1 overhead run, at most 3 concurrent sessions"
    )
    p.add_argument(
        "--runs", type=int, default=None, help="overhead runs (default 3; 1 with --quick)"
    )
    p.add_argument(
        "--max-sessions",
        type=int,
        default=None,
        help="most concurrent sessions (default 6; 3 quick)",
    )
    p.add_argument("--stream", default=C.QUICK_STREAM, help=f"one of {', '.join(C.STREAM_LAYOUTS)}")
    p.add_argument("--speed", type=float, default=1.0, help="pace multiplier (1 = real time)")
    p.add_argument(
        "--threads",
        type=int,
        default=0,
        help="CTranslate2 threads (0: the engine default, measured once per machine)",
    )
    p.add_argument(
        "--cpu-budget",
        type=float,
        default=0.8,
        help="the inference worker's CPU budget (WorkerConfig.cpu_budget; 1: no spacing)",
    )
    p.add_argument(
        "--keep-going",
        action="store_true",
        help="run every session count up to --max-sessions, past the first that is not realtime",
    )
    p.add_argument(
        "--sessions",
        type=int,
        nargs="+",
        default=None,
        help="only these session counts (default: 1 up to --max-sessions); no overhead runs",
    )
    p.add_argument(
        "--trim-seconds",
        type=float,
        default=None,
        help="StreamingConfig.trim_seconds of every session (default: the engine's)",
    )
    p.add_argument("--language", default="en", help="language of every session (default en)")
    p.add_argument(
        "--model", default=None, help="CTranslate2 Whisper folder (default: the embedded model)"
    )
    p.add_argument("--out", default=str(BENCH / "results"), help="where the .md and .json go")
    args = p.parse_args(argv)
    runs = 0 if args.sessions else args.runs or (1 if args.quick else 3)
    max_sessions = args.max_sessions or (3 if args.quick else 6)
    counts = args.sessions or range(1, max_sessions + 1)

    from desktop_rt.engine.asr.streaming import StreamingConfig
    from desktop_rt.engine.asr.whisper import WhisperBackend, WhisperOptions
    from desktop_rt.engine.asr.worker import WorkerConfig
    from desktop_rt.engine.models.embedded import ensure_default_model
    from desktop_rt.engine.server.server import RealtimeServer, ServerConfig

    model = Path(args.model) if args.model else ensure_default_model()
    stream = C.build_stream(args.stream)
    report: dict = {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "machine": C.machine_info(),
        "loadavg_start": C.loadavg(),
        "stream": {"name": stream.name, "seconds": stream.seconds, "layout": stream.describe()},
        "args": vars(args),
        "overhead": [],
        "concurrency": [],
    }
    log(f"[{stream.name}] {stream.seconds:.1f} s: offline word timestamps for alignment ...")
    ref_words = alignment_words(model, stream, args.threads or 0, args.language)
    backend = WhisperBackend(model, WhisperOptions(threads=args.threads))
    backend.transcribe(stream.audio[: 2 * C.SAMPLE_RATE], language=args.language)  # warm-up
    streaming = StreamingConfig()
    if args.trim_seconds is not None:
        streaming = replace(streaming, trim_seconds=args.trim_seconds)
    config = ServerConfig(
        port=0,
        worker=WorkerConfig(cpu_budget=args.cpu_budget),
        max_sessions=0,
        streaming=streaming,
    )
    server = RealtimeServer(config, backend)
    server.start()
    try:
        for run in range(1, runs + 1):
            order = ["direct", "websocket"] if run % 2 else ["websocket", "direct"]
            entry: dict = {"run": run}
            for system in order:
                log(f"overhead run {run}/{runs}: {system} ...")
                if system == "direct":
                    raw = run_direct(backend, stream, args.speed, args.language)
                else:
                    raw = asyncio.run(run_client(server.url, stream, args.speed, args.language))
                entry[system] = summary(raw["words"], ref_words, stream, args.speed, raw["final"])
                log(f"    {fmt_summary(entry[system])}")
            d, w = entry["direct"]["median"], entry["websocket"]["median"]
            entry["added"] = (w - d) / d if d and w is not None else None
            report["overhead"].append(entry)

        idle = rss_mb()
        for n in counts:
            log(f"concurrency: {n} session(s) ...")

            async def all_clients(n=n):
                return await asyncio.gather(
                    *[
                        run_client(server.url, stream, args.speed, args.language, delay=0.3 * k)
                        for k in range(n)
                    ]
                )

            with RssSampler() as rss:
                raws = asyncio.run(all_clients())
            sessions = [
                summary(r["words"], ref_words, stream, args.speed, r["final"]) for r in raws
            ]
            medians = [s["median"] for s in sessions]
            realtime = all(m is not None and m < REALTIME_MEDIAN for m in medians)
            row = {
                "sessions": n,
                "medians": medians,
                "worst_median": max((m for m in medians if m is not None), default=None),
                "worst_p90": max(
                    (s["p90"] for s in sessions if s["p90"] is not None), default=None
                ),
                "mean_wer": statistics.mean(s["wer"] for s in sessions),
                "realtime": realtime,
                "rss_per_session_mb": (rss.peak - idle) / n,
            }
            report["concurrency"].append(row)
            log(
                f"    worst median {fmt(row['worst_median'])} s, realtime {realtime}, "
                f"{row['rss_per_session_mb']:.1f} MB/session"
            )
            if not realtime and not args.keep_going:
                break
    finally:
        server.stop()
        backend.close()
    report["loadavg_end"] = C.loadavg()
    text = render(report)
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"server-{dt.date.today().isoformat()}" + ("-quick" if args.quick else "")
    (out / f"{stem}.md").write_text(text)
    (out / f"{stem}.json").write_text(json.dumps(report, indent=1, default=str))
    log(f"wrote {out / (stem + '.md')}")
    return 0


def fmt(v, spec=".2f") -> str:
    return "–" if v is None else f"{v:{spec}}"


def fmt_summary(s: dict) -> str:
    return (
        f"first {fmt(s['first_word'])} s, median {fmt(s['median'])} s, p90 {fmt(s['p90'])} s, "
        f"final {fmt(s['final'])} s, WER {s['wer'] * 100:.1f}%"
    )


def render(report: dict) -> str:
    m = report["machine"]
    lines = [
        f"# Realtime server benchmark ({report['date']})",
        "",
        f"Machine: {m['cpu_model']}, {m['usable_cores']} usable cores, load average "
        f"{report['loadavg_start']} at start, {report['loadavg_end']} at end.",
        f"Stream: {report['stream']['name']} ({report['stream']['seconds']:.1f} s: {report['stream']['layout']}), "
        f"paced at {report['args']['speed']:g}x real time, 100 ms chunks, websocket audio at {WIRE_RATE} Hz.",
        "",
        "## What the websocket path adds (same process, same run)",
        "",
        "| run | path | first word s | median s | p90 s | final s | WER |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for e in report["overhead"]:
        for system in ("direct", "websocket"):
            s = e[system]
            lines.append(
                f"| {e['run']} | {system} | {fmt(s['first_word'])} | {fmt(s['median'])} | {fmt(s['p90'])} "
                f"| {fmt(s['final'])} | {s['wer'] * 100:.1f}% |"
            )
    added = [e["added"] for e in report["overhead"] if e["added"] is not None]
    if added:
        med = statistics.median(added)
        verdict = "meets" if med < OVERHEAD_TARGET else "misses"
        lines += [
            "",
            f"Median word latency added by the server: {med * 100:+.1f}% "
            f"(target < {OVERHEAD_TARGET * 100:.0f}%: {verdict}).",
        ]
    lines += [
        "",
        f"## Concurrent sessions (realtime: median word latency < {REALTIME_MEDIAN:g} s for every session)",
        "",
        "| sessions | worst median s | worst p90 s | mean WER | realtime | RSS per session MB |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in report["concurrency"]:
        lines.append(
            f"| {r['sessions']} | {fmt(r['worst_median'])} | {fmt(r['worst_p90'])} | "
            f"{r['mean_wer'] * 100:.1f}% | {'yes' if r['realtime'] else 'no'} | {r['rss_per_session_mb']:.1f} |"
        )
    ok = [r["sessions"] for r in report["concurrency"] if r["realtime"]]
    lines += ["", f"Sessions that stay realtime on this machine: {max(ok) if ok else 0}."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
