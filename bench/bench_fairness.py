#!/usr/bin/env python3
"""Fairness benchmark (issue 19): a real-time client's word latency beside a flooding client.

    .venv/bin/python bench/bench_fairness.py                  # solo, then beside a 20x flooder
    .venv/bin/python bench/bench_fairness.py --flood-speed 5 --cpu-budget 1.0

One websocket client streams the stream at real time alone, then again while another client
sends the same audio at ``--flood-speed`` times real time, connection after connection, until
the first is done (it meets ``audio_backlog_full`` as it should). Word latency as in
``bench_server.py`` (offline word times, aligned). The target: beside the flooder the real-time
client keeps its median within 1.2x of its solo median. The governor's budget is
``--cpu-budget`` (docs/design/streaming.md, *Governor*). Numbers depend on the machine and its
load: the report records both.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402
from _align import alignment_words  # noqa: E402
from bench_server import fmt, fmt_summary, log, run_client, summary  # noqa: E402

BENCH = Path(__file__).resolve().parent
TARGET = 1.2


async def beside_flooder(url: str, stream: C.Stream, speed: float, language: str | None) -> dict:
    """The real-time client's run while flooders follow one another until it ends."""
    steady = asyncio.ensure_future(run_client(url, stream, 1.0, language))
    floods = 0
    while not steady.done():
        flood = asyncio.ensure_future(run_client(url, stream, speed, language))
        await asyncio.wait({steady, flood}, return_when=asyncio.FIRST_COMPLETED)
        if flood.done():
            floods += 1
        else:
            flood.cancel()
    raw = await steady
    raw["floods"] = floods
    return raw


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--stream", default=C.QUICK_STREAM, help=f"one of {', '.join(C.STREAM_LAYOUTS)}")
    p.add_argument("--flood-speed", type=float, default=20.0, help="the flooder's pace (x)")
    p.add_argument("--cpu-budget", type=float, default=0.8, help="WorkerConfig.cpu_budget")
    p.add_argument("--language", default="en", help="language of both clients (default en)")
    p.add_argument("--out", default=str(BENCH / "results"), help="where the .md and .json go")
    args = p.parse_args(argv)

    from desktop_rt.engine.asr.whisper import WhisperBackend
    from desktop_rt.engine.asr.worker import WorkerConfig
    from desktop_rt.engine.models.embedded import ensure_default_model
    from desktop_rt.engine.server.server import RealtimeServer, ServerConfig

    model = ensure_default_model()
    stream = C.build_stream(args.stream)
    ref_words = alignment_words(model, stream, 0, args.language)
    backend = WhisperBackend(model)
    backend.transcribe(stream.audio[: 2 * C.SAMPLE_RATE], language=args.language)  # warm-up
    config = ServerConfig(port=0, worker=WorkerConfig(cpu_budget=args.cpu_budget), max_sessions=0)
    report: dict = {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "machine": C.machine_info(),
        "loadavg_start": C.loadavg(),
        "stream": {"name": stream.name, "seconds": stream.seconds},
        "args": vars(args),
    }
    with RealtimeServer(config, backend) as server:
        log("solo ...")
        solo = asyncio.run(run_client(server.url, stream, 1.0, args.language))
        report["solo"] = summary(solo["words"], ref_words, stream, 1.0, solo["final"])
        log(f"    {fmt_summary(report['solo'])}")
        log(f"beside a {args.flood_speed:g}x flooder ...")
        raw = asyncio.run(beside_flooder(server.url, stream, args.flood_speed, args.language))
        report["beside"] = summary(raw["words"], ref_words, stream, 1.0, raw["final"])
        report["floods"] = raw["floods"]
        log(f"    {fmt_summary(report['beside'])}")
    backend.close()
    report["loadavg_end"] = C.loadavg()
    alone, beside = report["solo"]["median"], report["beside"]["median"]
    report["ratio"] = beside / alone if alone and beside is not None else None
    text = (
        f"# Fairness: a real-time client beside a {args.flood_speed:g}x flooder\n\n"
        f"{stream.name}, {stream.seconds:.0f} s; cpu budget {args.cpu_budget}; "
        f"machine {report['machine']}; load {report['loadavg_start']} -> {report['loadavg_end']}\n\n"
        f"| run | first word | median | p90 | final | WER |\n|---|---|---|---|---|---|\n"
        + "".join(
            f"| {name} | {fmt(s['first_word'])} | {fmt(s['median'])} | {fmt(s['p90'])} | "
            f"{fmt(s['final'])} | {s['wer'] * 100:.1f}% |\n"
            for name, s in (("solo", report["solo"]), ("beside flooder", report["beside"]))
        )
        + f"\nmedian ratio {fmt(report['ratio'])} (target <= {TARGET}); "
        f"{report['floods']} flooder sessions completed\n"
    )
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"fairness-{dt.date.today().isoformat()}"
    (out / f"{stem}.md").write_text(text)
    (out / f"{stem}.json").write_text(json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
