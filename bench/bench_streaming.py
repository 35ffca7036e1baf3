#!/usr/bin/env python3
"""Streaming benchmark: desktop-rt vs faster-whisper offline (the floor) vs whisperlivekit's
LocalAgreement processor (the peer), side by side, on the same model and audio.

    .venv/bin/python bench/bench_streaming.py            # 2 streams x 3 systems x 3 runs
    .venv/bin/python bench/bench_streaming.py --quick    # 1 run, short stream only
    bash bench/run_all.sh                                # sets up the peer venv, then the above

The parent process (project venv) builds the eval streams, takes the offline word timestamps
that latencies are measured against, and starts every (stream, system, run) as its own child
process (``--one SYSTEM --stream S --json``) so that peak RSS and CPU time are per system. The
peer's child runs in ``bench/.venv-peer`` (whisperlivekit imports torch). See bench/README.md
for the definitions of every metric.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402
from _align import OFFLINE_BEAM, align_ends, alignment_words, offline_words, percentile  # noqa: E402,F401
from _session_child import SESSION, child_desktop_rt_session, live_text, saved_text  # noqa: E402,F401
from _stream_children import (  # noqa: E402,F401
    child_desktop_rt,
    child_offline,
    paced_dict,
    run_child,
    run_replay,
    words_tuple,
)
from _stream_peer import PEER_MIN_CHUNK, PEER_TRIM, child_peer, pkg_version  # noqa: E402,F401
from _stream_report import (  # noqa: E402,F401
    COLUMNS,
    RATIO_KEYS,
    TARGETS,
    check_targets,
    fmt,
    median_of,
    metrics,
    ratio,
    render,
)
from _stream_systems import (  # noqa: E402,F401
    ALL_SYSTEMS,
    BENCH,
    DEFAULT_SYSTEMS,
    OFFLINE,
    OURS,
    PEER,
    PEER_PYTHON,
    PEER_VARIANTS,
    log,
)

# The modules: _stream_systems (names, the peer's python), _stream_children (one system's
# run in a child process), _stream_peer (whisperlivekit's child), _stream_report (metrics,
# targets, the markdown); this one is the command line and the parent's loop.


def run_parent(args) -> int:
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    for s in systems:
        if s not in ALL_SYSTEMS:
            raise SystemExit(f"unknown system {s!r}")
    streams = [C.QUICK_STREAM] if args.quick else [s.strip() for s in args.streams.split(",")]
    runs = 1 if args.quick and args.runs is None else (args.runs or 3)
    peer_python = Path(args.peer_python)
    if any(s in PEER_VARIANTS for s in systems) and not peer_python.exists():
        raise SystemExit(
            f"peer venv missing ({peer_python}); run bash bench/run_all.sh --setup-only"
        )

    if args.model is None:
        from desktop_rt.engine.models.embedded import ensure_default_model

        args.model = str(ensure_default_model())
    threads = args.threads or os.cpu_count() or 1
    date = dt.datetime.now().strftime("%Y-%m-%d")
    report = new_report(args, systems, streams, runs, threads)
    log(f"machine: {report['machine']}  loadavg {report['loadavg_start']}")
    t_start = time.monotonic()
    for sname in streams:
        run_stream(args, report, sname, systems, runs, threads)
    report["loadavg_end"] = C.loadavg()
    report["elapsed_s"] = round(time.monotonic() - t_start, 1)
    note_load(report)
    return write_report(args, report, date)


def new_report(args, systems: list[str], streams: list[str], runs: int, threads: int) -> dict:
    return {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "machine": C.machine_info(),
        "loadavg_start": C.loadavg(),
        "model": args.model,
        "args": {
            "speed": args.speed,
            "runs": runs,
            "threads": threads,
            "language": args.language,
            "systems": systems,
            "streams": streams,
            "quick": args.quick,
        },
        "streams": {},
        "configs": {},
    }


def run_stream(args, report: dict, sname: str, systems: list[str], runs: int, threads: int) -> None:
    """Every run of every system on stream ``sname``, into ``report["streams"][sname]``."""
    stream = C.build_stream(sname)
    log(f"[{sname}] {stream.seconds:.1f} s: offline word timestamps for alignment ...")
    ref_words = alignment_words(Path(args.model), stream, threads, args.language)
    sdata = {
        "seconds": stream.seconds,
        "layout": stream.describe(),
        "reference": stream.reference,
        "alignment_words": ref_words,
        "systems": {s: [] for s in systems},
    }
    report["streams"][sname] = sdata
    for run in range(1, runs + 1):
        # Rotate the order each run so no system always runs first/last on a busy machine.
        order = systems[(run - 1) % len(systems) :] + systems[: (run - 1) % len(systems)]
        for system in order:
            log(f"[{sname}] run {run}/{runs} {system} ...")
            entry = run_system(args, report, stream, sname, ref_words, system, threads)
            entry = {"run": run, **entry}
            sdata["systems"][system].append(entry)
    if OURS in systems and OFFLINE in systems:
        sdata["targets"] = check_targets(sdata["systems"][OURS], sdata["systems"][OFFLINE])


def child_command(args, system: str, sname: str, threads: int) -> list[str]:
    python = str(Path(args.peer_python)) if system in PEER_VARIANTS else sys.executable
    cmd = [
        python,
        str(Path(__file__).resolve()),
        "--one",
        system,
        "--stream",
        sname,
        "--json",
        "--speed",
        str(args.speed),
        "--threads",
        str(threads),
        "--model",
        args.model,
        "--engine-threads",
        str(args.engine_threads),
    ]
    if args.language:
        cmd += ["--language", args.language]
    return cmd


def run_system(
    args, report: dict, stream: C.Stream, sname: str, ref_words, system: str, threads: int
) -> dict:
    """One child's run, scored: ``{"raw", "metrics"}``, or ``{"error"}`` (not fatal)."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONUNBUFFERED="1")
    cmd = child_command(args, system, sname, threads)
    limit = stream.seconds / args.speed * 6 + 300
    entry: dict = {}
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, env=env, timeout=limit, cwd=C.ROOT
        )
        if proc.returncode != 0:
            raise RuntimeError(f"exit {proc.returncode}: {proc.stderr.strip()[-2000:]}")
        raw = json.loads(proc.stdout.strip().splitlines()[-1])
        entry["raw"] = raw
        entry["metrics"] = metrics(raw, stream, ref_words)
        report["configs"].setdefault(system, raw.get("config"))
        x = entry["metrics"]
        log(
            f"    median {fmt(x['median'])} s, p90 {fmt(x['p90'])} s, final {fmt(x['final'])} s, "
            f"WER {x['wer'] * 100:.1f}%, CPU {x['cpu_per_audio_s']:.2f} s/s, RSS {x['peak_rss_mb']:.0f} MB "
            f"(added {fmt(x['added_rss_mb'], '.0f')})"
        )
    except Exception as exc:  # a failed system is reported, not fatal
        entry["error"] = str(exc)
        log(f"    FAILED: {str(exc)[-1500:]}")
    return entry


def note_load(report: dict) -> None:
    """The most CPU other processes took during a run, and whether the machine was busy."""
    cores = report["machine"]["usable_cores"] or 1
    others = [
        r["metrics"].get("other_load") or 0.0
        for sd in report["streams"].values()
        for rs in sd["systems"].values()
        for r in rs
        if "metrics" in r
    ]
    report["max_other_load"] = max(others, default=None)
    report["busy"] = bool(
        (report["loadavg_start"] and report["loadavg_start"][0] > 0.5 * cores)
        or max(others, default=0.0) > 0.25
    )


def write_report(args, report: dict, date: str) -> int:
    """Print the markdown, write it and the JSON; 1 if any run failed."""
    text = render(report)
    print(text)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"streaming-{date}" + ("-quick" if args.quick else "")
    md_path, json_path = out_dir / f"{stem}.md", out_dir / f"{stem}.json"
    md_path.write_text(text)
    json_path.write_text(json.dumps(report, indent=1, default=str))
    log(f"wrote {md_path} and {json_path} ({report['elapsed_s']:.0f} s)")
    failed = any(
        "error" in r for s in report["streams"].values() for rs in s["systems"].values() for r in rs
    )
    return 1 if failed else 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true", help="1 run on the short (librivox) stream only")
    p.add_argument(
        "--runs",
        type=int,
        default=None,
        help="runs per system and stream (default 3; 1 with --quick)",
    )
    p.add_argument(
        "--streams", default="librivox,long", help=f"comma list of {', '.join(C.STREAM_LAYOUTS)}"
    )
    p.add_argument(
        "--systems",
        default=",".join(DEFAULT_SYSTEMS),
        help=f"comma list of {OURS}, {SESSION}, {OFFLINE}, {', '.join(sorted(PEER_VARIANTS))}",
    )
    p.add_argument("--speed", type=float, default=1.0, help="pace multiplier (1 = real time)")
    p.add_argument(
        "--threads",
        type=int,
        default=0,
        help="CTranslate2 threads for offline and the peer (0: one per core)",
    )
    p.add_argument(
        "--engine-threads",
        type=int,
        default=0,
        help="desktop-rt's inference threads (0: what the product measures on this machine)",
    )
    p.add_argument(
        "--language", default=None, help="language for every system (default: auto-detect)"
    )
    p.add_argument(
        "--model", default=None, help="CTranslate2 Whisper folder (default: the embedded model)"
    )
    p.add_argument("--peer-python", default=str(PEER_PYTHON), help="python of the peer venv")
    p.add_argument("--out", default=str(BENCH / "results"), help="where the .md and .json go")
    p.add_argument(
        "--render", metavar="JSON", help="only re-print the markdown report of a saved .json"
    )
    p.add_argument(
        "--replay",
        metavar="JSON",
        help=f"re-run {OURS}'s recorded chunk schedule of a saved run "
        "without the clock (deterministic repro); pick it with --stream and --run",
    )
    p.add_argument("--run", type=int, default=1, help="run number for --replay")
    p.add_argument("--one", metavar="SYSTEM", help=argparse.SUPPRESS)  # child mode
    p.add_argument("--stream", default=C.QUICK_STREAM, help=argparse.SUPPRESS)
    p.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    return p


def main(argv=None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    if args.speed <= 0:
        p.error("--speed must be positive")
    if args.render:
        print(render(json.loads(Path(args.render).read_text())))
        return 0
    if args.replay:
        return run_replay(args)
    if args.one:
        if args.model is None:
            from desktop_rt.engine.models.embedded import ensure_default_model

            args.model = str(ensure_default_model())
        args.threads = args.threads or os.cpu_count() or 1
        return run_child(args)
    return run_parent(args)


if __name__ == "__main__":
    sys.exit(main())
