#!/usr/bin/env python3
"""What the endpoints other tools use cost: a remote upstream's proxy, and REST against the CLI.

    .venv/bin/python bench/bench_endpoints.py            # 600 round trips per path, 2 REST runs
    .venv/bin/python bench/bench_endpoints.py --quick    # 200 round trips, 1 REST run

The upstream is a real ``desktop-rt serve`` child on loopback (plain ws://, the embedded model).

1. Remote upstream. The same client event (``input_audio_buffer.clear``, answered at once with
   ``input_audio_buffer.cleared``) sent and answered N times on two open sessions: one straight
   to the upstream, one to an in-process ``RealtimeServer`` whose ``remote`` model points at the
   upstream, in blocks of 50 alternating between the two. A round trip is two proxied events
   (client to server and back), so the added latency per event is half the difference of the
   two paths' round trips; reported at the median and at p99 (on a loaded machine the p99s'
   difference is noise, so half the proxied p99, upstream included, is given as a bound).
   Target: <= 5 ms per event.
2. REST. The 60 s ``long`` stream (bench/_common.py) as a WAV: ``POST /v1/audio/transcriptions``
   with the official ``openai`` SDK to the running upstream (time to the full JSON answer)
   against ``desktop-rt transcribe FILE -q`` as a child (model load included, as a user runs
   it). Target: REST <= 1.1 x the CLI's wall time. Runs interleave. Then the same file with
   ``stream=True``: time to the first ``transcript.text.delta`` (target <= 1.5 s).

The machine's load (load average, other processes' cores from /proc/stat) goes into the report,
because numbers taken on a busy machine are not comparable. Results:
bench/results/endpoints-<date>.md and .json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import soundfile as sf

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

BENCH = Path(__file__).resolve().parent
BLOCK = 50
PROXY_TARGET_MS = 5.0
REST_TARGET = 1.1


def log(*args: object) -> None:
    print(*args, file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def own_cpu() -> float:
    """CPU seconds of this process and its waited-for children (the upstream, the CLI runs)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def start_upstream(config_dir: Path) -> tuple[subprocess.Popen[str], int]:
    env = {**os.environ, "DESKTOP_RT_CONFIG_DIR": str(config_dir), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop_rt.cli", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.stdout is not None:
        line = proc.stdout.readline()
        if not line:
            break
        if match := re.search(r"listening on ws://127\.0\.0\.1:(\d+)/", line):
            return proc, int(match.group(1))
    proc.kill()
    raise SystemExit("the upstream desktop-rt serve did not start")


async def round_trips(url: str, count: int) -> list[float]:
    """``count`` clear/cleared round trips on one open session, in milliseconds."""
    from websockets.asyncio.client import connect

    out = []
    async with connect(url, max_size=None, compression=None) as ws:
        while json.loads(await ws.recv())["type"] != "session.created":
            pass
        clear = json.dumps({"type": "input_audio_buffer.clear"})
        for _ in range(count):
            start = time.perf_counter()
            await ws.send(clear)
            while json.loads(await ws.recv())["type"] != "input_audio_buffer.cleared":
                pass
            out.append((time.perf_counter() - start) * 1000)
    return out


async def proxy_latency(port: int, total: int) -> dict[str, object]:
    from desktop_rt.engine.models.catalogue import EMBEDDED_ENTRY, ModelEntry, ModelsConfig
    from desktop_rt.engine.models.kinds import open_backend
    from desktop_rt.engine.server.server import RealtimeServer, ServerConfig

    entry = ModelEntry(
        "up",
        "remote",
        options=(("url", f"ws://127.0.0.1:{port}/v1/realtime"), ("upstream_model", "whisper-base")),
    )
    config = ServerConfig(
        port=0,
        record_activity=False,
        models=ModelsConfig((EMBEDDED_ENTRY, entry), max_loaded_models=2),
    )
    direct: list[float] = []
    proxied: list[float] = []
    with RealtimeServer(config, lambda: open_backend(None)) as local:
        paths = {
            "direct": (f"ws://127.0.0.1:{port}/v1/realtime?model=whisper-base", direct),
            "proxied": (local.url + "?model=up", proxied),
        }
        for name, (url, _sink) in paths.items():  # warm: sessions, the remote's first connect
            await round_trips(url, 10)
            log(f"proxy: {name} warmed")
        for block in range(total // BLOCK):
            order = list(paths.values()) if block % 2 == 0 else list(paths.values())[::-1]
            for url, sink in order:
                sink.extend(await round_trips(url, BLOCK))
    result: dict[str, object] = {"round_trips": len(direct)}
    for name, values in (("direct", direct), ("proxied", proxied)):
        result[name] = {
            "median_ms": round(statistics.median(values), 3),
            "p99_ms": round(percentile(values, 0.99), 3),
        }
    for stat in ("median_ms", "p99_ms"):
        added = result["proxied"][stat] - result["direct"][stat]  # type: ignore[index]
        result[f"added_per_event_{stat}"] = round(added / 2, 3)
    return result


def rest_once(port: int, wav: Path) -> tuple[float, str]:
    from openai import OpenAI

    client = OpenAI(api_key="unused", base_url=f"http://127.0.0.1:{port}/v1", timeout=600)
    start = time.perf_counter()
    with wav.open("rb") as audio:
        text = client.audio.transcriptions.create(model="whisper-1", file=audio).text
    return time.perf_counter() - start, text


def first_delta(port: int, wav: Path, runs: int) -> dict[str, object]:
    """REST with ``stream=True``: seconds from the request (the upload: a few MB on loopback,
    a few ms) to the first ``transcript.text.delta`` and to ``transcript.text.done``."""
    from openai import OpenAI

    client = OpenAI(api_key="unused", base_url=f"http://127.0.0.1:{port}/v1", timeout=600)
    firsts: list[float] = []
    dones: list[float] = []
    for run in range(runs):
        start = time.perf_counter()
        first = None
        with wav.open("rb") as audio:
            events = client.audio.transcriptions.create(model="whisper-1", file=audio, stream=True)
            for event in events:
                if event.type == "transcript.text.delta" and first is None:
                    first = time.perf_counter() - start
        dones.append(time.perf_counter() - start)
        firsts.append(first if first is not None else float("nan"))
        log(f"rest stream: run {run + 1}: first delta {firsts[-1]:.2f} s, done {dones[-1]:.2f} s")
    return {
        "first_delta_seconds": [round(x, 2) for x in firsts],
        "done_seconds": [round(x, 2) for x in dones],
    }


def cli_once(wav: Path, out: Path, config_dir: Path) -> tuple[float, str]:
    env = {**os.environ, "DESKTOP_RT_CONFIG_DIR": str(config_dir), "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "desktop_rt.cli", "transcribe", str(wav), "-q", "-o", str(out)]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, env=env)
    return time.perf_counter() - start, out.read_text()


def rest_vs_cli(port: int, runs: int, folder: Path) -> dict[str, object]:
    stream = C.build_stream("long")
    wav = folder / "long.wav"
    sf.write(wav, stream.audio, C.SAMPLE_RATE, subtype="PCM_16")
    rest: list[float] = []
    cli: list[float] = []
    wers: dict[str, float] = {}
    for run in range(runs):
        order = ("rest", "cli") if run % 2 == 0 else ("cli", "rest")
        for system in order:
            if system == "rest":
                seconds, text = rest_once(port, wav)
                rest.append(seconds)
            else:
                seconds, text = cli_once(wav, folder / "long.txt", folder / "cli-config")
                cli.append(seconds)
            wers[system] = round(C.wer(stream.reference, text), 4)
            log(f"rest: run {run + 1} {system}: {seconds:.2f} s, WER {wers[system]}")
    ratio = statistics.median(rest) / statistics.median(cli)
    streamed = first_delta(port, wav, runs)
    return {
        "stream": streamed,
        "audio_seconds": round(stream.seconds, 1),
        "rest_seconds": [round(x, 2) for x in rest],
        "cli_seconds": [round(x, 2) for x in cli],
        "wer": wers,
        "rest_over_cli": round(ratio, 3),
    }


def render(report: dict) -> str:
    p, r, m = report["proxy"], report["rest"], report["machine"]
    lines = [
        f"# Endpoints: remote proxy and REST ({report['date']})",
        "",
        f"Machine: {m['cpu_model']}, {m['usable_cores']} usable cores; load average at start "
        f"{report['load_start']}, at end {report['load_end']}; other processes used "
        f"{report['other_cores']} cores on average during the run.",
        "",
        "## Remote upstream: added latency per event (target <= 5 ms)",
        "",
        "| path | round trip median | round trip p99 |",
        "|---|---|---|",
        f"| direct to the upstream | {p['direct']['median_ms']} ms | {p['direct']['p99_ms']} ms |",
        f"| through the remote model | {p['proxied']['median_ms']} ms | {p['proxied']['p99_ms']} ms |",
        "",
        f"Added per event ({p['round_trips']} round trips, two events each): median "
        f"**{p['added_per_event_median_ms']} ms**, p99 **{p['added_per_event_p99_ms']} ms** "
        f"(a difference of two noisy tails; bound: half a proxied round trip at p99, upstream "
        f"included, is {round(p['proxied']['p99_ms'] / 2, 3)} ms).",
        "",
        f"## REST: {r['audio_seconds']} s file against `desktop-rt transcribe` (target <= 1.1 x)",
        "",
        f"REST (server running, full JSON answer): {r['rest_seconds']} s; CLI (child process, "
        f"model load included): {r['cli_seconds']} s; WER {r['wer']}. REST / CLI medians: "
        f"**{r['rest_over_cli']} x**.",
        "",
        "## REST with stream=true: first `transcript.text.delta` (target <= 1.5 s after upload)",
        "",
        f"First delta: {r['stream']['first_delta_seconds']} s after the request (the upload "
        f"takes milliseconds on loopback); `transcript.text.done`: {r['stream']['done_seconds']} s.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--round-trips", type=int, default=None)
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--out", type=Path, default=BENCH / "results")
    args = parser.parse_args()
    total = args.round_trips or (200 if args.quick else 600)
    runs = args.runs or (1 if args.quick else 2)
    load_start, busy0, wall0 = C.loadavg(), C.system_busy_seconds(), time.monotonic()
    own0 = own_cpu()
    with tempfile.TemporaryDirectory(prefix="bench-endpoints-") as tmp:
        folder = Path(tmp)
        upstream, port = start_upstream(folder / "config")
        try:
            proxy = asyncio.run(proxy_latency(port, total))
            log("proxy:", proxy)
            rest = rest_vs_cli(port, runs, folder)
        finally:
            upstream.terminate()
            upstream.wait(30)
    wall = time.monotonic() - wall0
    other = C.other_load(busy0, C.system_busy_seconds(), own_cpu() - own0, wall)
    report = {
        "date": datetime.now().strftime("%Y-%m-%d %H:%M"),
        "machine": C.machine_info(),
        "load_start": load_start,
        "load_end": C.loadavg(),
        "other_cores": round(other, 2) if other is not None else None,
        "proxy": proxy,
        "rest": rest,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    stem = (
        args.out
        / f"endpoints-{datetime.now().strftime('%Y-%m-%d-%H%M')}{'-quick' if args.quick else ''}"
    )
    stem.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    stem.with_suffix(".md").write_text(render(report))
    print(render(report))


if __name__ == "__main__":
    main()
