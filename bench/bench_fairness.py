#!/usr/bin/env python3
"""Fairness benchmark (issue 19): a real-time client's word latency beside a flooding client
and beside a session that sets a 10 MB prompt.

    .venv/bin/python bench/bench_fairness.py                  # solo, 20x flooder, 10 MB prompt
    .venv/bin/python bench/bench_fairness.py --flood-speed 5 --cpu-budget 1.0 --prompt-mb 0

One websocket client streams the stream at real time alone, then again while another client
sends the same audio at ``--flood-speed`` times real time, connection after connection, until
the first is done (it meets ``audio_backlog_full`` as it should). Word latency as in
``bench_server.py`` (offline word times, aligned). The target: beside the flooder the real-time
client keeps its median within 1.2x of its solo median. The same client runs a third time beside
a session that sends ``session.update`` with a ``--prompt-mb`` MB transcription prompt (its
answer, ``session.updated`` or an ``error``, is recorded) and then streams speech at real time
until the first is done; the same target holds. As a control, the client also runs beside the
same session without a prompt: what two real-time sessions cost each other, prompt or not. The governor's budget is
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
from bench_server import WIRE_RATE, fmt, fmt_summary, log, run_client, summary  # noqa: E402

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


async def prompt_session(url: str, stream: C.Stream, megabytes: float, answer: dict) -> None:
    """A session that asks for a huge prompt, then streams ``stream`` at 1x, round after round,
    until cancelled; the server's answer to the prompt goes into ``answer``."""
    import base64

    import soxr
    from websockets.asyncio.client import connect

    from desktop_rt.engine.audio.codecs import float_to_pcm16

    size = int(megabytes * 1e6)
    prompt = ("lorem ipsum dolor sit amet " * (size // 27 + 1))[:size]
    wire = soxr.resample(stream.audio, C.SAMPLE_RATE, WIRE_RATE, quality="HQ")
    step = int(WIRE_RATE * C.CHUNK_SECONDS)
    chunks = [
        base64.b64encode(float_to_pcm16(wire[i : i + step])).decode()
        for i in range(0, len(wire), step)
    ]
    async with connect(url, max_size=None, open_timeout=60) as ws:
        assert json.loads(await ws.recv())["type"] == "session.created"
        transcription = {"language": "en", "prompt": prompt} if size else {"language": "en"}
        wire_format = {"type": "audio/pcm", "rate": WIRE_RATE}
        audio_input = {"format": wire_format, "transcription": transcription}
        session = {"type": "transcription", "audio": {"input": audio_input}}
        await ws.send(json.dumps({"type": "session.update", "session": session}))
        while (event := json.loads(await ws.recv()))["type"] not in ("session.updated", "error"):
            pass
        answer["type"] = event["type"]
        answer["error"] = event.get("error", {}).get("code")
        drain = asyncio.ensure_future(_drain(ws))
        try:
            while True:
                for chunk in chunks:
                    await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": chunk}))
                    await asyncio.sleep(C.CHUNK_SECONDS)
        finally:
            drain.cancel()


async def _drain(ws) -> None:
    async for _ in ws:
        pass


async def beside_prompt(url: str, stream: C.Stream, megabytes: float, language: str | None) -> dict:
    """The real-time client's run while the huge-prompt session streams beside it."""
    answer: dict = {}
    other = asyncio.ensure_future(prompt_session(url, stream, megabytes, answer))
    try:
        raw = await run_client(url, stream, 1.0, language)
    finally:
        other.cancel()
        await asyncio.gather(other, return_exceptions=True)
    raw["answer"] = answer
    return raw


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--stream", default=C.QUICK_STREAM, help=f"one of {', '.join(C.STREAM_LAYOUTS)}")
    p.add_argument("--flood-speed", type=float, default=20.0, help="the flooder's pace (x)")
    p.add_argument("--cpu-budget", type=float, default=0.8, help="WorkerConfig.cpu_budget")
    p.add_argument("--language", default="en", help="language of both clients (default en)")
    p.add_argument(
        "--prompt-mb", type=float, default=10.0, help="the prompt session's prompt (0: skip it)"
    )
    p.add_argument("--out", default=str(BENCH / "results"), help="where the .md and .json go")
    p.add_argument("--tag", default="", help="suffix of the result files' names")
    return p.parse_args(argv)


def measure(url: str, stream: C.Stream, ref_words: list, args: argparse.Namespace) -> dict:
    """Solo, beside the flooder and (``--prompt-mb``) beside a plain and a huge-prompt session."""
    report: dict = {}

    def one(key: str, label: str, raw_run) -> dict:
        log(f"{label} ...")
        raw = asyncio.run(raw_run)
        report[key] = summary(raw["words"], ref_words, stream, 1.0, raw["final"])
        log(f"    {fmt_summary(report[key])}")
        return raw

    one("solo", "solo", run_client(url, stream, 1.0, args.language))
    flood = beside_flooder(url, stream, args.flood_speed, args.language)
    report["floods"] = one("beside", f"beside a {args.flood_speed:g}x flooder", flood)["floods"]
    if args.prompt_mb:
        one(
            "beside_plain",
            "beside a plain 1x session",
            beside_prompt(url, stream, 0, args.language),
        )
        huge = beside_prompt(url, stream, args.prompt_mb, args.language)
        raw = one("beside_prompt", f"beside a session with a {args.prompt_mb:g} MB prompt", huge)
        report["prompt_answer"] = raw["answer"]
    alone = report["solo"]["median"]
    for key, ratio in (
        ("beside", "ratio"),
        ("beside_plain", "plain_ratio"),
        ("beside_prompt", "prompt_ratio"),
    ):
        median = report.get(key, {}).get("median")
        report[ratio] = median / alone if alone and median is not None else None
    return report


def render(report: dict, args: argparse.Namespace) -> str:
    stream = report["stream"]
    runs = [("solo", report["solo"]), ("beside flooder", report["beside"])]
    if "beside_prompt" in report:
        runs.append(("beside a plain 1x session", report["beside_plain"]))
        runs.append((f"beside a {args.prompt_mb:g} MB prompt", report["beside_prompt"]))
    text = (
        f"# Fairness: a real-time client beside a {args.flood_speed:g}x flooder and a huge prompt\n\n"
        f"{stream['name']}, {stream['seconds']:.0f} s; cpu budget {args.cpu_budget}; "
        f"machine {report['machine']}; load {report['loadavg_start']} -> {report['loadavg_end']}\n\n"
        f"| run | first word | median | p90 | final | WER |\n|---|---|---|---|---|---|\n"
    )
    for name, s in runs:
        text += (
            f"| {name} | {fmt(s['first_word'])} | {fmt(s['median'])} | {fmt(s['p90'])} | "
            f"{fmt(s['final'])} | {s['wer'] * 100:.1f}% |\n"
        )
    text += (
        f"\nmedian ratio {fmt(report['ratio'])} (target <= {TARGET}); "
        f"{report['floods']} flooder sessions completed\n"
    )
    if "beside_prompt" in report:
        text += (
            f"\nbeside the prompt session: median ratio {fmt(report['prompt_ratio'])}; beside a "
            f"plain 1x session {fmt(report['plain_ratio'])} (target <= {TARGET}); the server "
            f"answered its prompt with {report['prompt_answer']}\n"
        )
    return text


def main(argv=None) -> int:
    args = parse_args(argv)

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
        report |= measure(server.url, stream, ref_words, args)
    backend.close()
    report["loadavg_end"] = C.loadavg()
    text = render(report, args)
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"fairness-{dt.date.today().isoformat()}{'-' + args.tag if args.tag else ''}"
    (out / f"{stem}.md").write_text(text)
    (out / f"{stem}.json").write_text(json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
