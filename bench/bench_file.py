"""Whole-file recognition: desktop-rt's FileTranscriber beside faster-whisper offline, one run.

    .venv/bin/python bench/bench_file.py                 # librivox, long, book; 2 runs; 2 cores
    .venv/bin/python bench/bench_file.py --quick         # librivox and long, 1 run
    .venv/bin/python bench/bench_file.py --systems desktop-rt,cli --runs 3

Each stream (bench/_common.py layouts; ``book``: every clip four times over, with pauses of
0.4-6 s, 3.2 min) is written to a temp WAV. Systems, interleaved in a rotating order each run:

- ``desktop-rt``: AudioFileReader + FileTranscriber + WhisperBackend (all threads), in process;
- ``desktop-rt-noprompt``: the same with ``FileOptions(prompt_chars=0)``: windows are not
  prompted with the text before them (the user's prompt aside);
- ``faster-whisper``: ``WhisperModel.transcribe(word_timestamps=True)`` as shipped (beam 5,
  temperature fallback, previous text as prompt), same model, same threads, in process;
- ``cli``: ``desktop-rt transcribe FILE -q`` as a child process (model load and start included).

Reported per (stream, system), medians over runs: wall seconds, x realtime (audio seconds per
wall second), CPU seconds per audio second (process CPU; the child's for ``cli``), WER. The
process is pinned to ``--cores`` cores (default 2). Results: bench/results/file-<date>.md/.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import numpy as np
import soundfile as sf

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    LIBRIVOX,
    ROOT,
    SAMPLE_RATE,
    assemble_stream,
    build_stream,
    loadavg,
    machine_info,
    wer,
)

SYSTEMS = ("desktop-rt", "desktop-rt-noprompt", "faster-whisper", "cli")


def book_layout() -> list:
    pauses = [0.4, 1.5, 0.8, 6.0, 2.5, 0.6, 3.0]
    names = [*LIBRIVOX, "beckett"]
    layout: list = [1.0]
    for k in range(4):
        for i, name in enumerate(names):
            layout += [name, pauses[(k + i) % len(pauses)]]
    return layout


def streams(names: list[str]):
    for name in names:
        yield assemble_stream(name, book_layout()) if name == "book" else build_stream(name)


class Systems:
    """The models, loaded once; each method transcribes a file and returns its text."""

    def __init__(self, threads: int):
        from faster_whisper import WhisperModel

        from desktop_rt.engine.asr.whisper import WhisperBackend, WhisperOptions
        from desktop_rt.engine.models.embedded import ensure_default_model

        self.folder = ensure_default_model()
        self.threads = threads
        self.ours = WhisperBackend(self.folder, WhisperOptions(threads=threads))
        self.theirs = WhisperModel(
            str(self.folder),
            device="cpu",
            compute_type="int8",
            cpu_threads=threads,
            local_files_only=True,
        )

    def desktop_rt(self, path: Path, prompt_chars: int = 800) -> str:
        from desktop_rt.engine.asr.file_transcriber import FileOptions, FileTranscriber
        from desktop_rt.engine.audio.file_decode import AudioFileReader

        reader = AudioFileReader(path)
        transcriber = FileTranscriber(self.ours, options=FileOptions(prompt_chars=prompt_chars))
        return transcriber.transcribe(reader.chunks()).text

    def desktop_rt_noprompt(self, path: Path) -> str:
        return self.desktop_rt(path, prompt_chars=0)

    def faster_whisper(self, path: Path) -> str:
        from faster_whisper import decode_audio

        segments, _ = self.theirs.transcribe(decode_audio(str(path)), word_timestamps=True)
        return "".join(s.text for s in segments)

    def cli(self, path: Path) -> tuple[str, float]:
        """The command's text and its CPU seconds (the child's)."""
        before = os.times()
        out = subprocess.run(
            [sys.executable, "-m", "desktop_rt.cli", "transcribe", str(path), "-q"],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )
        after = os.times()
        cpu = (after.children_user - before.children_user) + (
            after.children_system - before.children_system
        )
        return out.stdout, cpu


def measure(systems: Systems, system: str, path: Path) -> tuple[str, float, float]:
    """Text, wall seconds and CPU seconds of one system on one file."""
    cpu0, wall0 = time.process_time(), time.perf_counter()
    if system == "cli":
        text, cpu = systems.cli(path)
    else:
        text = getattr(systems, system.replace("-", "_"))(path)
        cpu = time.process_time() - cpu0
    return text, time.perf_counter() - wall0, cpu


def run(args: argparse.Namespace) -> dict:
    systems = Systems(args.threads)
    chosen = args.systems.split(",")
    rows: dict = {}
    warm = True
    with tempfile.TemporaryDirectory() as tmp:
        for stream in streams(args.streams.split(",")):
            path = Path(tmp) / f"{stream.name}.wav"
            sf.write(path, stream.audio, SAMPLE_RATE, subtype="PCM_16")
            if warm:  # the first calls of both models, not timed
                systems.desktop_rt(path), systems.faster_whisper(path)
                warm = False
            for r in range(args.runs):
                order = chosen[r % len(chosen) :] + chosen[: r % len(chosen)]
                for system in order:
                    text, wall, cpu = measure(systems, system, path)
                    cell = rows.setdefault(stream.name, {"seconds": stream.seconds})
                    cell.setdefault(system, []).append(
                        {"wall": wall, "cpu": cpu, "wer": wer(stream.reference, text)}
                    )
                    print(f"{stream.name} {system} run {r + 1}: {wall:.2f} s", file=sys.stderr)
    return rows


def report(rows: dict, args: argparse.Namespace, info: dict) -> str:
    lines = [
        f"# Whole-file recognition, {datetime.now():%Y-%m-%d %H:%M}",
        "",
        f"{info['cpu_model']}, pinned to {args.cores} cores, model threads {args.threads}, "
        f"{args.runs} run(s); load average at start {info['load_start']}, "
        f"at end {info['load_end']}.",
        "",
        "| stream | system | wall s | x realtime | CPU s / audio s | WER % |",
        "|---|---|---|---|---|---|",
    ]
    for name, cell in rows.items():
        seconds = cell["seconds"]
        for system in SYSTEMS:
            if system not in cell:
                continue
            runs = cell[system]
            wall = statistics.median(x["wall"] for x in runs)
            cpu = statistics.median(x["cpu"] for x in runs) / seconds
            error = 100 * statistics.median(x["wer"] for x in runs)
            lines.append(
                f"| {name} ({seconds:.1f} s) | {system} | {wall:.2f} | {seconds / wall:.1f} | "
                f"{cpu:.3f} | {error:.1f} |"
            )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--streams", default="librivox,long,book")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--threads", type=int, default=0, help="model threads; 0: --cores")
    parser.add_argument("--quick", action="store_true", help="librivox and long, one run")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = parser.parse_args()
    if args.quick:
        args.streams, args.runs = "librivox,long", 1
    cores = sorted(os.sched_getaffinity(0))[: args.cores]
    os.sched_setaffinity(0, cores)
    args.threads = args.threads or len(cores)
    info = {**machine_info(), "load_start": loadavg()}
    rows = run(args)
    info["load_end"] = loadavg()
    text = report(rows, args, info)
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"file-{datetime.now():%Y-%m-%d-%H%M}"
    stem.with_suffix(".md").write_text(text)
    stem.with_suffix(".json").write_text(json.dumps({"machine": info, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
