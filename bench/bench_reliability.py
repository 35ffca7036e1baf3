#!/usr/bin/env python3
"""Reliability volumes of issue 19, black-box, against a real ``desktop-rt serve`` child.

    .venv/bin/python bench/bench_reliability.py                    # every part (~4 min on 2 cores,
                                                                   # app-kills ~20 min more)
    .venv/bin/python bench/bench_reliability.py --only fuzz,files  # some parts
    .venv/bin/python bench/bench_reliability.py --fuzz 500 --disconnects 60 --leak 50   # smoke

Parts: ``fuzz`` (hostile events, each followed by a ``clear`` sentinel: an ``error`` must come
before the sentinel's ``cleared``), ``disconnects`` (abrupt: mid-handshake, mid-append frame,
right after a commit; threads and fds of the server before and after, then a normal session),
``leak`` (server_vad sessions with speech in batches; RSS as the system sees it after the
server's own trim), ``files`` (damaged files through ``desktop-rt transcribe``: exit code, no
traceback, never exit 0 with an empty transcript), ``flood`` (cites bench_fairness.py's latest
result, or runs it with ``--run-flood``), ``kills`` (kill -9 of the server mid-transcription:
bench/_kills.py), ``app-kills`` (kill -9 of ``desktop-rt gui`` while it transcribes hands-free
from a PulseAudio virtual microphone; the committed words it showed against its history:
bench/_app_kills.py). The server's peak RSS (VmHWM), its log lines and tracebacks, and the
machine's load go into bench/results/reliability-<date>.md and .json.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402
import _hostile as H  # noqa: E402
import numpy as np  # noqa: E402
from _app_kills import app_kills  # noqa: E402
from _kills import kills  # noqa: E402
from _serve_child import Serve, open_session, until  # noqa: E402
from bench_endpoints import log  # noqa: E402
from websockets.exceptions import ConnectionClosed  # noqa: E402
from websockets.frames import OP_TEXT, Frame  # noqa: E402

BENCH = Path(__file__).resolve().parent
PARTS = ("fuzz", "disconnects", "leak", "files", "flood", "kills", "app-kills")
CONCURRENCY = 10
SERVER_VAD = {"turn_detection": {"type": "server_vad"}}


# ---- 1. fuzzing ---------------------------------------------------------------------------------


async def fuzz_session(url: str, events: list[tuple[str, H.Frame]], tally: dict) -> None:
    ws = await open_session(url)
    for i, (kind, frame) in enumerate(events):
        try:
            await ws.send(frame)
            await ws.send(json.dumps({"type": "input_audio_buffer.clear", "event_id": f"s{i}"}))
            seen = await until(ws, "input_audio_buffer.cleared")
        except ConnectionClosed:
            tally["closed"][kind] = tally["closed"].get(kind, 0) + 1
            ws = await open_session(url)
            continue
        errors = [e for e in seen if e["type"] == "error"]
        tally["sent"][kind] = tally["sent"].get(kind, 0) + 1
        if len(errors) != 1:
            tally["missing"][kind] = tally["missing"].get(kind, 0) + 1
            tally["examples"].append({"kind": kind, "frame": repr(frame[:200]), "got": seen[:3]})
    await ws.close()


async def fuzz(server: Serve, total: int, sessions: int) -> dict:
    events = list(H.hostile_events(total, seed=19))
    per = -(-total // sessions)
    tally: dict = {"sent": {}, "missing": {}, "closed": {}, "examples": []}
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(chunk: list[tuple[str, H.Frame]]) -> None:
        async with gate:
            await fuzz_session(server.url, chunk, tally)

    start = time.monotonic()
    await asyncio.gather(*(one(events[i : i + per]) for i in range(0, total, per)))
    return {
        "events": total,
        "sessions": sessions,
        "seconds": round(time.monotonic() - start, 1),
        "missing_error": sum(tally["missing"].values()),
        "closed_by_server": sum(tally["closed"].values()),
        **tally | {"examples": tally["examples"][:10]},
    }


# ---- 2. abrupt disconnects ----------------------------------------------------------------------


def mid_handshake(port: int, i: int) -> None:
    request = (
        f"GET /v1/realtime HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request[: 1 + i % len(request)])
        if i % 2:  # half of them reset the connection instead of closing it
            sock.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
            )


async def mid_append(url: str, audio: str, i: int) -> None:
    ws = await open_session(url)
    payload = json.dumps({"type": "input_audio_buffer.append", "audio": audio}).encode()
    wire = Frame(OP_TEXT, payload).serialize(mask=True, extensions=[])
    ws.transport.write(wire[: 2 + (i * 7919) % (len(wire) - 2)])  # a frame cut anywhere
    ws.transport.abort()


async def mid_commit(url: str, audio: str) -> None:
    ws = await open_session(url)
    await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": audio}))
    await ws.send(json.dumps({"type": "input_audio_buffer.commit"}))
    await until(ws, "input_audio_buffer.committed")  # the server has it and is transcribing
    ws.transport.abort()


async def normal_session(url: str, audio: str) -> dict:
    ws = await open_session(url)
    await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": audio}))
    await ws.send(json.dumps({"type": "input_audio_buffer.commit"}))
    seen = await until(ws, "conversation.item.input_audio_transcription.completed", 300)
    await ws.close()
    return {"ok": True, "transcript": seen[-1].get("transcript", "")}


async def disconnects(server: Serve, total: int, audio: str) -> dict:
    await normal_session(server.url, audio)  # warm: the worker and its threads start lazily
    await asyncio.to_thread(server.settle)
    before = server.resources()
    gate = asyncio.Semaphore(CONCURRENCY)
    failures: dict[str, int] = {}

    async def one(i: int) -> None:
        kind = ("handshake", "append", "commit")[i % 3]
        async with gate:
            try:
                if kind == "handshake":
                    await asyncio.to_thread(mid_handshake, server.port, i)
                elif kind == "append":
                    await mid_append(server.url, audio, i)
                else:
                    await mid_commit(server.url, audio)
            except (OSError, ConnectionClosed, TimeoutError) as exc:
                failures[type(exc).__name__] = failures.get(type(exc).__name__, 0) + 1

    start = time.monotonic()
    await asyncio.gather(*(one(i) for i in range(total)))
    seconds = round(time.monotonic() - start, 1)
    await asyncio.to_thread(server.settle)
    after = server.resources()
    normal = await normal_session(server.url, audio)
    return {
        "disconnects": total,
        "seconds": seconds,
        "client_failures": failures,
        "before": before,
        "after": after,
        "normal_session_after": normal,
    }


# ---- 3. server_vad sessions ---------------------------------------------------------------------


async def vad_session(url: str, audio: str) -> None:
    ws = await open_session(url)
    await ws.send(
        json.dumps({"type": "session.update", "session": {"audio": {"input": SERVER_VAD}}})
    )
    await until(ws, "session.updated")
    await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": audio}))
    await ws.close()


async def leak(server: Serve, total: int, batch: int, audio: str) -> dict:
    async def one_batch() -> None:
        await asyncio.gather(*(vad_session(server.url, audio) for _ in range(batch)))
        await asyncio.to_thread(server.settle)

    await one_batch()  # warm-up: the first VAD, allocator pools
    before = server.rss_mb()
    curve = []
    start = time.monotonic()
    for n in range(total // batch):
        await one_batch()
        if (n + 1) % 10 == 0:
            curve.append(server.rss_mb())
    after = server.rss_mb()
    return {
        "sessions": total,
        "batch": batch,
        "seconds": round(time.monotonic() - start, 1),
        "rss_before_mb": before,
        "rss_after_mb": after,
        "growth_mb": round(after - before, 1),
        "rss_every_10_batches_mb": curve,
    }


# ---- 5. flood -----------------------------------------------------------------------------------


def flood(run: bool) -> dict:
    """bench_fairness.py's flood, run now (its files go to a temporary folder) or its latest result."""
    if run:
        import bench_fairness

        with tempfile.TemporaryDirectory() as tmp:
            bench_fairness.main(["--out", tmp])
            data = json.loads(next(Path(tmp).glob("fairness-*.json")).read_text())
        source = "run now: bench/bench_fairness.py (defaults)"
    else:
        latest = max((BENCH / "results").glob("fairness-*.json"), key=lambda p: p.stat().st_mtime)
        data = json.loads(latest.read_text())
        source = f"cited: {latest.relative_to(C.ROOT)}"
    keep = ("date", "loadavg_start", "loadavg_end", "ratio", "floods", "solo", "beside", "args")
    return {"source": source, **{k: data.get(k) for k in keep}}


# ---- 7. kill -9 of the desktop app -------------------------------------------------------------


def app_speech() -> np.ndarray:
    """About 50 s of speech in six clips with 1 s pauses, which end hands-free turns."""
    clips = ["beckett", "ss-0870", "ss-0880", "ss-0890", "ss-0920", "ss-0930"]
    layout: list = [x for clip in clips for x in (clip, 1.0)]
    return C.assemble_stream("app-kills", layout).audio


# ---- report -------------------------------------------------------------------------------------


def run_server_parts(args: argparse.Namespace, parts: set[str], config_dir: Path) -> dict:
    out: dict = {}
    server = Serve(config_dir)
    out["server_start"] = server.resources()
    try:
        if "fuzz" in parts:
            log(f"fuzz: {args.fuzz} events ...")
            out["fuzz"] = asyncio.run(fuzz(server, args.fuzz, args.fuzz_sessions))
            out["fuzz"]["alive"] = server.alive()
            out["fuzz"]["peak_rss_mb"] = server.peak_rss_mb()
        if "disconnects" in parts:
            log(f"disconnects: {args.disconnects} ...")
            out["disconnects"] = asyncio.run(
                disconnects(server, args.disconnects, H.speech_b64(C.read_clip("ss-0880"), 1.0))
            )
            out["disconnects"]["alive"] = server.alive()
            out["disconnects"]["peak_rss_mb"] = server.peak_rss_mb()
        if "leak" in parts:
            log(f"leak: {args.leak} server_vad sessions ...")
            out["leak"] = asyncio.run(
                leak(server, args.leak, args.batch, H.speech_b64(C.read_clip("ss-0880"), 1.0))
            )
            out["leak"]["alive"] = server.alive()
            out["leak"]["peak_rss_mb"] = server.peak_rss_mb()
        out["health_at_end"] = server.health()
    finally:
        out["server_alive_at_end"] = server.alive()
        out["server_log"] = {"lines": server.lines, "tracebacks": server.tracebacks}
        out["server_log"]["error_lines"] = server.errors
        server.stop()
    return out


def render(r: dict) -> str:
    lines = [
        "# Reliability volumes (issue 19)\n",
        f"{r['date']}; machine {r['machine']}; load average {r['loadavg_start']} -> {r['loadavg_end']}\n",
    ]
    if f := r.get("fuzz"):
        lines.append(
            f"- **fuzz**: {f['events']} hostile events over {f['sessions']} sessions in {f['seconds']} s: "
            f"server alive {f['alive']}; {f['missing_error']} without exactly one `error` reply; "
            f"{f['closed_by_server']} closed the session; peak RSS {f['peak_rss_mb']} MB. "
            f"Per kind: {f['sent']}"
        )
    if d := r.get("disconnects"):
        lines.append(
            f"- **disconnects**: {d['disconnects']} abrupt (mid-handshake, mid-append frame, after a "
            f"commit) in {d['seconds']} s: threads/fds/RSS before {d['before']}, after {d['after']}; "
            f"alive {d['alive']}; a normal session after: {d['normal_session_after']['ok']} "
            f"({len(d['normal_session_after']['transcript'].split())} words); peak RSS {d['peak_rss_mb']} MB"
        )
    if k := r.get("leak"):
        lines.append(
            f"- **server_vad leak**: {k['sessions']} sessions in batches of {k['batch']} "
            f"({k['seconds']} s): RSS {k['rss_before_mb']} -> {k['rss_after_mb']} MB "
            f"(growth {k['growth_mb']} MB; every 10 batches {k['rss_every_10_batches_mb']}); "
            f"peak RSS {k['peak_rss_mb']} MB"
        )
    if log_ := r.get("server_log"):
        lines.append(f"- **server log** over the run: {log_}")
    if b := r.get("files"):
        lines.append(
            f"- **damaged files**: {len(b['files'])} through `desktop-rt transcribe`: exit codes "
            f"{b['exit_codes']}; {b['tracebacks']} tracebacks; {b['exit0_empty']} exit 0 with an "
            "empty transcript\n\n| file | exit | words | message |\n|---|---|---|---|"
        )
        for row in b["files"]:
            message = row["message"].replace("|", "/")
            lines.append(f"| {row['file']} | {row['exit']} | {row['words']} | {message} |")
        lines.append("")
    if fl := r.get("flood"):
        lines.append(
            f"- **flood** ({fl['source']}, {fl['date']}, load {fl['loadavg_start']}): a 1x client's "
            f"median word lag {fl['solo']['median']:.2f} s alone, {fl['beside']['median']:.2f} s beside "
            f"a {fl['args']['flood_speed']:g}x flooder (p90 {fl['beside']['p90']:.2f} s, final "
            f"{fl['beside']['final']:.2f} s late, {fl['floods']} flooder sessions): ratio "
            f"{fl['ratio']:.2f} (target <= 1.2)"
        )
    if kl := r.get("kills"):
        lines.append(
            f"- **kill -9 of `desktop-rt serve`** mid-transcription, {kl['kills']} times: integrity_check "
            f"ok every time: {kl['all_integrity_ok']}; activity rows of finished sessions written before "
            f"the kill {kl['rows_written_before_kill']}, lost: "
            f"{kl['rows_lost']}; restart after the last: {kl['restart_after_last']}"
        )
    if ak := r.get("app-kills"):
        lines.append(
            f"- **kill -9 of the desktop app** (`desktop-rt gui`, hands-free, virtual microphone), "
            f"{ak['kills']} times (speech playing at every kill; {ak['mid_turn']} with a caption "
            f"line still open): integrity_check ok "
            f"every time: {ak['all_integrity_ok']}; committed words shown before the kills "
            f"{ak['shown_words']}, lost: {ak['lost_words']} ({ak['lost_in_rounds_killed_at_once']} "
            f"of them in rounds killed at once after a caption); "
            f"restart after the last, then SIGTERM: exit {ak['restart_after_last_exit']}"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--only", default=",".join(PARTS), help=f"parts, comma-separated: {PARTS}")
    p.add_argument("--fuzz", type=int, default=10_000, help="hostile events")
    p.add_argument("--fuzz-sessions", type=int, default=50)
    p.add_argument("--disconnects", type=int, default=1000)
    p.add_argument("--leak", type=int, default=500, help="server_vad sessions")
    p.add_argument("--batch", type=int, default=10)
    p.add_argument("--kills", type=int, default=20, help="kill -9s of the server")
    p.add_argument("--app-kills", type=int, default=20, help="kill -9s of the desktop app")
    p.add_argument(
        "--run-flood", action="store_true", help="run bench_fairness.py (~2 min), not cite it"
    )
    p.add_argument("--tag", default="", help="suffix of the result files' names")
    p.add_argument("--out", default=str(BENCH / "results"))
    args = p.parse_args(argv)
    parts = set(args.only.split(","))
    report: dict = {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "machine": C.machine_info(),
        "loadavg_start": C.loadavg(),
        "args": vars(args),
    }
    with tempfile.TemporaryDirectory() as config_dir, tempfile.TemporaryDirectory() as data_dir:
        os.environ["DESKTOP_RT_DATA_DIR"] = data_dir  # the children's activity db: not the user's
        if parts & {"fuzz", "disconnects", "leak"}:
            report |= run_server_parts(args, parts, Path(config_dir))
        if "files" in parts:
            log("damaged files ...")
            speech = C.assemble_stream("x", ["ss-0880", 0.3, "ss-0890"]).audio
            report["files"] = H.bad_files(Path(config_dir), speech)
        if "kills" in parts:
            log(f"kills: {args.kills} ...")
            audio = H.speech_b64(C.read_clip("ss-0880"), 3.0)
            report["kills"] = kills(Path(config_dir), Path(data_dir), args.kills, audio)
    if "app-kills" in parts:
        log(f"app kills: {args.app_kills} ...")
        with tempfile.TemporaryDirectory() as root:  # its own fresh HOME, config and data
            report["app-kills"] = app_kills(Path(root), args.app_kills, app_speech())
    if "flood" in parts:
        log("flood ...")
        report["flood"] = flood(args.run_flood)
    report["loadavg_end"] = C.loadavg()
    text = render(report)
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"reliability-{dt.date.today().isoformat()}{'-' + args.tag if args.tag else ''}"
    (out / f"{stem}.md").write_text(text)
    (out / f"{stem}.json").write_text(json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
