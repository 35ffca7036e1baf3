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
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402
from _align import OFFLINE_BEAM, align_ends, alignment_words, offline_words, percentile  # noqa: E402,F401
from _session_child import SESSION, child_desktop_rt_session, live_text, saved_text  # noqa: E402

BENCH = Path(__file__).resolve().parent
PEER_PYTHON = BENCH / ".venv-peer" / "bin" / "python"
OURS, OFFLINE, PEER = "desktop-rt", "offline", "whisperlivekit"
# Extra peer variants, selectable with --systems:
#   whisperlivekit-b5   the peer's shipped decoding (beam 5) instead of our beam 1
#   whisperlivekit-vad  faster-whisper's vad_filter on in the peer (what its use_vad() sets)
PEER_VARIANTS = {PEER, "whisperlivekit-b5", "whisperlivekit-vad"}
DEFAULT_SYSTEMS = [OURS, OFFLINE, PEER]
PEER_MIN_CHUNK = 0.6  # = StreamingConfig.min_chunk_seconds
PEER_TRIM = ("segment", 15.0)  # whisperlivekit 0.2.26 defaults (buffer_trimming, _sec)

# Targets of issue 2 for desktop-rt, checked on every run.
TARGETS = {
    "first_word": 1.5,
    "median": 1.5,
    "p90": 3.0,
    "final": 1.0,
    "wer_minus_offline_pts": 1.0,
    "cpu_per_audio_s": 1.0,
    "peak_rss_mb": 600.0,
}


def log(*args) -> None:
    print(*args, file=sys.stderr, flush=True)


# =============================================================================================
# Children: one system, one stream, one run. They print one JSON object on stdout's last line.
# =============================================================================================
def words_tuple(words) -> list[tuple[str, float, float]]:
    return [(w.text, w.start, w.end) for w in words]


def child_desktop_rt(stream: C.Stream, args, memory: C.MemoryLog) -> dict:
    from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
    from desktop_rt.engine.asr.whisper import WhisperBackend, WhisperOptions, default_threads

    # DESKTOP_RT_WHISPER='{"min_context_seconds": 15}' overrides backend options (tuning runs).
    backend_overrides = json.loads(os.environ.get("DESKTOP_RT_WHISPER", "{}"))
    # desktop-rt runs with its own default thread count (one core left for capture, the speech
    # gate and the UI) unless --engine-threads sets one; the other systems get --threads.
    backend_overrides.setdefault("threads", args.engine_threads or default_threads())
    backend = WhisperBackend(args.model, WhisperOptions(**backend_overrides))
    memory.mark("model")
    backend.transcribe(stream.audio[: 2 * C.SAMPLE_RATE], language=args.language)  # warm-up
    memory.mark("warm-up")
    # DESKTOP_RT_STREAMING='{"min_chunk_seconds": 0.5}' overrides engine settings (tuning runs).
    overrides = json.loads(os.environ.get("DESKTOP_RT_STREAMING", "{}"))
    config = StreamingConfig(language=args.language, **overrides)
    tr = StreamingTranscriber(backend, config)
    memory.mark("engine")
    res = C.run_paced(
        stream.audio,
        speed=args.speed,
        insert=tr.insert_audio,
        step=lambda: words_tuple(tr.process().committed),
        finish=lambda: words_tuple(tr.finish().committed),
    )
    memory.mark("stream")
    out = paced_dict(res)
    out["inferences"] = tr.inferences
    out["rehearings"] = tr.rehearings
    cfg = {k: getattr(config, k) for k in config.__dataclass_fields__}
    out["config"] = {
        "streaming": cfg,
        "beam_size": backend.options.beam_size,
        "threads": backend.options.threads,
    }
    return out


def child_offline(stream: C.Stream, args, memory: C.MemoryLog) -> dict:
    """faster-whisper on the whole file once the audio has ended: latency = processing time."""
    from faster_whisper import WhisperModel

    model = WhisperModel(
        str(args.model),
        device="cpu",
        compute_type="int8",
        cpu_threads=args.threads,
        num_workers=1,
        local_files_only=True,
    )
    memory.mark("model")
    list(model.transcribe(stream.audio[: 2 * C.SAMPLE_RATE], language=args.language)[0])  # warm-up
    memory.mark("warm-up")
    busy0 = C.system_busy_seconds()
    cpu0, t0 = time.process_time(), time.monotonic()
    words = offline_words(model, stream.audio, args.language)
    took = time.monotonic() - t0
    cpu = time.process_time() - cpu0
    busy1 = C.system_busy_seconds()
    memory.mark("stream")
    return {
        "words": [{"text": t, "start": s, "end": e, "commit": None} for t, s, e in words],
        "latency_all_words": took,
        "final_latency": took,
        "cpu_seconds": cpu,
        "wall_seconds": took,
        "steps": 1,
        "max_backlog": 0.0,
        "slow_steps": [[0.0, round(took, 3)]],
        "other_load": C.other_load(busy0, busy1, cpu, took),
        "config": {"beam_size": OFFLINE_BEAM, "threads": args.threads, "vad_filter": False},
    }


def child_peer(stream: C.Stream, args, variant: str, memory: C.MemoryLog) -> dict:
    """whisperlivekit's LocalAgreement OnlineASRProcessor, driven as its AudioProcessor does.

    The ASR object is built as ``local_agreement.whisper_online.backend_factory`` builds it
    (same attributes) but without its warm-up download, and with two overrides so the model
    runs exactly like ours: int8 on the CPU with our thread count, loaded from the local
    folder only, and (unless the ``-b5`` variant) beam 1. Everything else — prompt, LocalAgreement,
    buffer trimming, temperature fallback, condition_on_previous_text — is the package's.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import whisperlivekit
    from faster_whisper import WhisperModel
    from whisperlivekit.local_agreement.backends import FasterWhisperASR
    from whisperlivekit.local_agreement.online_asr import OnlineASRProcessor

    memory.mark("imports")
    beam = 5 if variant.endswith("-b5") else 1

    class BenchFasterWhisperASR(FasterWhisperASR):
        def load_model(self, model_size=None, cache_dir=None, model_dir=None):
            return WhisperModel(
                str(model_dir),
                device="cpu",
                compute_type="int8",
                cpu_threads=args.threads,
                num_workers=1,
                local_files_only=True,
            )

        def transcribe(self, audio, init_prompt=""):
            # Upstream FasterWhisperASR.transcribe with beam_size made a parameter.
            segments, _info = self.model.transcribe(
                audio,
                language=self.original_language,
                initial_prompt=init_prompt,
                beam_size=beam,
                word_timestamps=True,
                condition_on_previous_text=True,
                **self.transcribe_kargs,
            )
            return list(segments)

    asr = BenchFasterWhisperASR(lan=args.language or "auto", model_dir=str(args.model))
    if variant.endswith("-vad"):
        asr.use_vad()
    asr.confidence_validation = False
    asr.tokenizer = None  # only used by "sentence" trimming
    asr.buffer_trimming, asr.buffer_trimming_sec = PEER_TRIM
    asr.backend_choice = "faster-whisper"
    memory.mark("model")
    asr.transcribe(stream.audio[: 2 * C.SAMPLE_RATE])  # warm-up
    memory.mark("warm-up")
    online = OnlineASRProcessor(asr)

    min_samples = int(PEER_MIN_CHUNK * C.SAMPLE_RATE)
    pending = [0]
    inferences = [0]

    def insert(chunk):
        online.insert_audio_chunk(chunk)
        pending[0] += len(chunk)

    def run_iter():
        pending[0] = 0
        inferences[0] += 1
        tokens, _ = online.process_iter()
        return [(t.text, t.start, t.end) for t in tokens]

    def step():
        # whisper_streaming's loop: process once at least min_chunk of new audio has arrived.
        return run_iter() if pending[0] >= min_samples else []

    def finish():
        # As AudioProcessor does at end of stream: one last pass over audio not yet
        # processed (finish() itself runs no inference), then flush the hypothesis.
        drained = run_iter() if pending[0] > 0 else []
        tokens, _ = online.finish()
        return drained + [(t.text, t.start, t.end) for t in tokens]

    res = C.run_paced(stream.audio, speed=args.speed, insert=insert, step=step, finish=finish)
    memory.mark("stream")
    out = paced_dict(res)
    out["inferences"] = inferences[0]
    out["config"] = {
        "package": f"whisperlivekit {getattr(whisperlivekit, '__version__', '') or pkg_version('whisperlivekit')}",
        "processor": "local_agreement.online_asr.OnlineASRProcessor (HypothesisBuffer)",
        "beam_size": beam,
        "min_chunk_seconds": PEER_MIN_CHUNK,
        "buffer_trimming": list(PEER_TRIM),
        "vad_filter": variant.endswith("-vad"),
        "vac": False,
        "threads": args.threads,
        "condition_on_previous_text": True,
    }
    return out


def run_replay(args) -> int:
    """Feed desktop-rt exactly the batches a recorded run got (its backlog), and print the result."""
    from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
    from desktop_rt.engine.asr.whisper import WhisperBackend, WhisperOptions

    report = json.loads(Path(args.replay).read_text())
    runs = report["streams"][args.stream]["systems"][OURS]
    raw = next(r["raw"] for r in runs if r["run"] == args.run)
    stream = C.build_stream(args.stream)
    backend = WhisperBackend(
        args.model or report["model"],
        WhisperOptions(threads=args.threads or report["args"]["threads"]),
    )
    tr = StreamingTranscriber(
        backend, StreamingConfig(language=args.language or report["args"]["language"])
    )
    words = C.replay(
        stream.audio,
        raw["schedule"],
        insert=tr.insert_audio,
        step=lambda: words_tuple(tr.process().committed),
        finish=lambda: words_tuple(tr.finish().committed),
    )
    text = "".join(w[0] for w in words)
    print(
        f"recorded: WER {C.wer(stream.reference, ''.join(w['text'] for w in raw['words'])) * 100:.1f}%"
    )
    print(f"replayed: WER {C.wer(stream.reference, text) * 100:.1f}%: {text.strip()}")
    return 0


def pkg_version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "?"


def paced_dict(res: C.PacedResult) -> dict:
    return {
        "words": res.words,
        "final_latency": res.final_latency,
        "cpu_seconds": res.cpu_seconds,
        "wall_seconds": res.wall_seconds,
        "audio_end_wall": res.audio_end_wall,
        "steps": res.steps,
        "max_backlog": res.max_backlog,
        "slow_steps": res.slow_steps,
        "schedule": res.schedule,
        "other_load": res.other_load,
    }


def run_child(args) -> int:
    memory = C.MemoryLog()
    memory.mark("start")
    stream = C.build_stream(args.stream)
    memory.data_loaded()  # from here on, what the process adds is the system's
    if args.one == OURS:
        out = child_desktop_rt(stream, args, memory)
    elif args.one == SESSION:
        out = child_desktop_rt_session(stream, args, memory)
    elif args.one == OFFLINE:
        out = child_offline(stream, args, memory)
    elif args.one in PEER_VARIANTS:
        out = child_peer(stream, args, args.one, memory)
    else:
        raise SystemExit(f"unknown system {args.one!r}")
    out.update(
        system=args.one,
        stream=args.stream,
        audio_seconds=stream.seconds,
        speed=args.speed,
        python=sys.executable,
    )
    out.update(memory.summary())
    if args.json:
        print(json.dumps(out))
    else:
        print("".join(w["text"] for w in out["words"]).strip())
        print({k: v for k, v in out.items() if k != "words"})
    return 0


# =============================================================================================
# Parent: alignment, metrics, report.
# =============================================================================================
def metrics(raw: dict, stream: C.Stream, reference_words) -> dict:
    words = [w for w in raw["words"] if C.norm_tokens(w["text"])]
    text = saved_text(raw)  # a session's completed transcripts, else the words
    live = live_text(raw)  # a session's deltas (None for the other systems)
    speed = raw["speed"]
    if "latency_all_words" in raw:  # offline: every word arrives when the file is done
        lat = [raw["latency_all_words"]] * len(words)
        unmatched = sum(1 for e in align_ends(words, reference_words) if e is None)
    else:
        ends = align_ends(words, reference_words)
        lat = [
            w["commit"] - end / speed for w, end in zip(words, ends, strict=True) if end is not None
        ]
        unmatched = sum(1 for e in ends if e is None)
    return {
        "first_word": lat[0] if lat else None,
        "median": percentile(lat, 50),
        "p90": percentile(lat, 90),
        "final": raw["final_latency"],
        "wer": C.wer(stream.reference, text),
        "live_wer": None if live is None else C.wer(stream.reference, live),
        "cpu_per_audio_s": raw["cpu_seconds"] / stream.seconds,
        "peak_rss_mb": raw["peak_rss_mb"],
        "added_rss_mb": raw.get("added_rss_mb"),
        "words": len(words),
        "unmatched": unmatched,
        "max_backlog": raw["max_backlog"],
        "other_load": raw.get("other_load"),
        "longest_step": max((d for _, d in raw.get("slow_steps", [])), default=0.0),
        "inferences": raw.get("inferences"),
        "text": text.strip(),
    }


def median_of(runs: list[dict], key: str):
    vals = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def fmt(v, spec=".2f", suffix="") -> str:
    return "–" if v is None else f"{v:{spec}}{suffix}"


def ratio(a, b) -> str:
    if a is None or b is None or b == 0:
        return "–"
    return f"{a / b:.2f}×"


COLUMNS = [
    ("first_word", "first word s", ".2f"),
    ("median", "median s", ".2f"),
    ("p90", "p90 s", ".2f"),
    ("final", "final s", ".2f"),
    ("wer", "WER %", ".1f"),
    ("cpu_per_audio_s", "CPU s/audio s", ".2f"),
    ("peak_rss_mb", "peak RSS MB", ".0f"),
    ("added_rss_mb", "added RSS MB", ".0f"),
]
RATIO_KEYS = [
    "first_word",
    "median",
    "p90",
    "final",
    "cpu_per_audio_s",
    "peak_rss_mb",
    "added_rss_mb",
]


def render(report: dict) -> str:
    m = report["machine"]
    a = report["args"]
    lines = [
        f"# Streaming benchmark — {report['date']}",
        "",
        f"- Machine: {m['cpu_model']}, {m['cores']} cores ({m['usable_cores']} usable), "
        f"{m['memory_gb']} GB RAM, {m['os']}, Python {m['python']}",
        f"- Load average at start / end: {report['loadavg_start']} / {report['loadavg_end']}"
        + f"; most CPU taken by other processes during a run: {fmt(report.get('max_other_load'))} cores"
        + (
            "  \n  **Busy machine: absolute numbers are noisy; rerun on a quiet one.**"
            if report["busy"]
            else ""
        ),
        f"- Model: `{report['model']}` (CTranslate2 int8, CPU; offline and peer on {a['threads']} threads, desktop-rt on its default unless noted in its configuration below)",
        f"- Pace: {a['speed']:g}× real time, {C.CHUNK_SECONDS * 1000:.0f} ms chunks; {a['runs']} run(s) "
        f"per system and stream; each run in its own process; table cells are medians over runs",
        f"- Language: {a['language'] or 'auto-detect'}",
        "",
    ]
    for sname, sdata in report["streams"].items():
        lines += [
            f"## Stream `{sname}` ({sdata['seconds']:.1f} s)",
            "",
            f"{sdata['layout']}",
            "",
            "| system | "
            + " | ".join(c[1] for c in COLUMNS)
            + " | words (unmatched) | max backlog s | other load (cores) |",
            "|---" * (len(COLUMNS) + 4) + "|",
        ]
        med = {}
        for system, runs in sdata["systems"].items():
            ms = [r["metrics"] for r in runs if "metrics" in r]
            if not ms:
                lines.append(f"| {system} | " + " | ".join("failed" for _ in COLUMNS) + " | | | |")
                continue
            med[system] = {k: median_of(ms, k) for k, _, _ in COLUMNS}
            med[system]["wer"] = (
                med[system]["wer"] * 100 if med[system]["wer"] is not None else None
            )
            cells = [fmt(med[system][k], spec) for k, _, spec in COLUMNS]
            words = f"{median_of(ms, 'words'):.0f} ({median_of(ms, 'unmatched'):.0f})"
            lines.append(
                f"| {system} | "
                + " | ".join(cells)
                + f" | {words} | {fmt(median_of(ms, 'max_backlog'))} | {fmt(median_of(ms, 'other_load'))} |"
            )
        lines.append("")
        pairs = [(OURS, OFFLINE), (OURS, PEER), (PEER, OFFLINE)]
        pairs += [(OURS, v) for v in sorted(PEER_VARIANTS - {PEER}) if v in med]
        pairs = [(x, y) for x, y in pairs if x in med and y in med]
        if pairs:
            hdr = [c[1] for c in COLUMNS if c[0] in RATIO_KEYS]
            lines += [
                "Ratios of medians (lower is better for "
                + OURS
                + "); WER as a difference in points:",
                "",
                "| ratio | " + " | ".join(hdr) + " | WER Δ pts |",
                "|---" * (len(hdr) + 2) + "|",
            ]
            for x, y in pairs:
                cells = [ratio(med[x][k], med[y][k]) for k in RATIO_KEYS]
                dw = (
                    None
                    if med[x]["wer"] is None or med[y]["wer"] is None
                    else med[x]["wer"] - med[y]["wer"]
                )
                lines.append(f"| {x} ÷ {y} | " + " | ".join(cells) + f" | {fmt(dw, '+.1f')} |")
            lines.append("")
        lines += ["Per run:", ""]
        for system, runs in sdata["systems"].items():
            for r in runs:
                if "metrics" not in r:
                    lines.append(f"- {system} run {r['run']}: FAILED — {r.get('error', '')[:300]}")
                    continue
                x = r["metrics"]
                lines.append(
                    f"- {system} run {r['run']}: first {fmt(x['first_word'])} s, median {fmt(x['median'])} s, "
                    f"p90 {fmt(x['p90'])} s, final {fmt(x['final'])} s, WER {x['wer'] * 100:.1f}%, "
                    f"CPU {x['cpu_per_audio_s']:.2f} s/s, RSS {x['peak_rss_mb']:.0f} MB "
                    f"(added {fmt(x.get('added_rss_mb'), '.0f')}), "
                    f"{x['words']} words ({x['unmatched']} unmatched), max backlog {x['max_backlog']:.1f} s, "
                    f"longest step {x.get('longest_step') or 0:.1f} s, {x['inferences'] or 1} inferences, "
                    f"other load {fmt(x.get('other_load'))} cores"
                )
        lines.append("")
        if sdata.get("targets"):
            lines += [f"Issue-2 targets for {OURS}, every run:", ""]
            for name, (ok, detail) in sdata["targets"].items():
                lines.append(f"- {'PASS' if ok else 'FAIL'} {name}: {detail}")
            lines.append("")
    lines += ["## Configuration", ""]
    for system, cfg in report["configs"].items():
        lines.append(f"- **{system}**: `{json.dumps(cfg, sort_keys=True)}`")
    lines += ["", "Definitions and caveats: bench/README.md.", ""]
    return "\n".join(lines)


def check_targets(runs_ours: list[dict], runs_offline: list[dict]) -> dict:
    ours = [r["metrics"] for r in runs_ours if "metrics" in r]
    if not ours:
        return {}
    off_wer = median_of([r["metrics"] for r in runs_offline if "metrics" in r], "wer")
    out = {}
    for key in ("first_word", "median", "p90", "final", "cpu_per_audio_s", "peak_rss_mb"):
        vals = [m[key] for m in ours]
        ok = all(v is not None and v <= TARGETS[key] for v in vals)
        out[key] = (ok, f"≤ {TARGETS[key]:g}: " + ", ".join(fmt(v) for v in vals))
    if off_wer is not None:
        diffs = [(m["wer"] - off_wer) * 100 for m in ours]
        ok = all(d <= TARGETS["wer_minus_offline_pts"] for d in diffs)
        out["wer vs offline"] = (
            ok,
            f"≤ +{TARGETS['wer_minus_offline_pts']:g} pts: "
            + ", ".join(f"{d:+.1f}" for d in diffs),
        )
    return out


def run_parent(args) -> int:
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    for s in systems:
        if s not in {OURS, SESSION, OFFLINE} | PEER_VARIANTS:
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
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONUNBUFFERED="1")

    date = dt.datetime.now().strftime("%Y-%m-%d")
    report = {
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
    log(f"machine: {report['machine']}  loadavg {report['loadavg_start']}")
    t_start = time.monotonic()
    for sname in streams:
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
                python = str(peer_python) if system in PEER_VARIANTS else sys.executable
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
                log(f"[{sname}] run {run}/{runs} {system} ...")
                limit = stream.seconds / args.speed * 6 + 300
                entry = {"run": run}
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
                sdata["systems"][system].append(entry)
        if OURS in systems and OFFLINE in systems:
            sdata["targets"] = check_targets(sdata["systems"][OURS], sdata["systems"][OFFLINE])
    report["loadavg_end"] = C.loadavg()
    report["elapsed_s"] = round(time.monotonic() - t_start, 1)
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


def main(argv=None) -> int:
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
        help="desktop-rt's inference threads (0: its default, one core fewer than the machine has)",
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
