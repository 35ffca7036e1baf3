#!/usr/bin/env python3
"""Does batching Whisper's windows pay on this CPU? (issue 15, item 4)

    .venv/bin/python bench/bench_batching.py                    # 1-4 windows of 6 s, 3 rounds
    .venv/bin/python bench/bench_batching.py --seconds 10 --rounds 5 --sizes 1 2 3

The inference worker runs one stream's pass at a time. CTranslate2's Whisper takes batches, so
the passes of streams due together could share one encoder and one decoder call. This times,
on the embedded model with the inference threads the app uses (``measured_threads``), ``n``
windows of ``--seconds`` s each (different audio, as different sessions' windows are) run

- one by one: ``n`` x (encode, generate), and
- batched: one encode of the ``n`` stacked windows, one generate with ``n`` prompts,

with the encoder context the app uses (window + 2 s, at least 10 s). Rounds alternate the two
orders so load drifts hit both alike; the medians are reported, with the machine's load.
A ratio (batched / one by one) well under 1 is a throughput gain worth building.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

BENCH = Path(__file__).resolve().parent


def windows(seconds: float, count: int) -> list[np.ndarray]:
    """``count`` different windows of ``seconds`` s from the long eval stream."""
    audio = C.build_stream("long").audio
    size = int(seconds * C.SAMPLE_RATE)
    step = max(size // 2, (len(audio) - size) // max(1, count))
    return [audio[i * step : i * step + size] for i in range(count)]


def context_frames(seconds: float) -> int:
    """The encoder context ``WhisperOptions(context="fit")`` gives a window this long."""
    return 2 * int(np.ceil(max(seconds + 2.0, 10.0) * 50))


class Runner:
    """Encode and greedy-decode windows as the app's WhisperBackend does, single or batched."""

    def __init__(self, model, frames: int):
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_suppressed_tokens

        self.model = model
        self.frames = frames
        self.tokenizer = Tokenizer(
            model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language="en"
        )
        self.prompt = model.get_prompt(self.tokenizer, [], without_timestamps=False)
        self.suppress = get_suppressed_tokens(self.tokenizer, [-1])

    def features(self, audio: np.ndarray) -> np.ndarray:
        from faster_whisper.audio import pad_or_trim

        feats = self.model.feature_extractor(audio)
        return pad_or_trim(feats[:, : feats.shape[-1] - 1])[..., : self.frames]

    def run(self, feats: list[np.ndarray]) -> tuple[float, float, float, list[list[int]]]:
        """One batch: encode and generate seconds (wall), process CPU seconds, the token ids
        of each window."""
        cpu = time.process_time()
        t0 = time.perf_counter()
        encoded = self.model.encode(np.stack(feats))
        t1 = time.perf_counter()
        results = self.model.model.generate(
            encoded,
            [self.prompt] * len(feats),
            beam_size=1,
            max_length=len(self.prompt) + 10 * self.frames // 100 + 16,
            return_scores=True,
            return_no_speech_prob=True,
            suppress_blank=True,
            suppress_tokens=self.suppress,
        )
        t2 = time.perf_counter()
        cpu = time.process_time() - cpu
        return t1 - t0, t2 - t1, cpu, [list(r.sequences_ids[0]) for r in results]


def measure(runner: Runner, feats: list[np.ndarray], rounds: int) -> dict:
    """Medians over ``rounds`` of one-by-one and batched runs of ``feats``."""
    single: list[tuple[float, float, float]] = []
    batched: list[tuple[float, float, float]] = []
    same = True
    for r in range(rounds):
        order = ("single", "batch") if r % 2 == 0 else ("batch", "single")
        for how in order:
            if how == "single":
                runs = [runner.run([f]) for f in feats]
                single.append(
                    (sum(x[0] for x in runs), sum(x[1] for x in runs), sum(x[2] for x in runs))
                )
                alone = [x[3][0] for x in runs]
            else:
                enc, gen, cpu, together = runner.run(feats)
                batched.append((enc, gen, cpu))
        same = same and alone == together
    med = {
        name: {
            "encode": statistics.median(x[0] for x in runs_),
            "generate": statistics.median(x[1] for x in runs_),
            "total": statistics.median(x[0] + x[1] for x in runs_),
            "cpu": statistics.median(x[2] for x in runs_),
        }
        for name, runs_ in (("single", single), ("batched", batched))
    }
    med["ratio"] = {
        k: med["batched"][k] / med["single"][k] for k in ("encode", "generate", "total", "cpu")
    }
    med["same_tokens"] = same
    return med


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--seconds", type=float, default=6.0, help="audio per window")
    p.add_argument("--sizes", type=int, nargs="+", default=[1, 2, 3, 4], help="batch sizes")
    p.add_argument("--rounds", type=int, default=3, help="rounds per size (median)")
    p.add_argument("--threads", type=int, default=0, help="0: the app's measured count")
    p.add_argument("--out", default=str(BENCH / "results"), help="where the .md and .json go")
    args = p.parse_args(argv)

    from faster_whisper import WhisperModel

    from desktop_rt.engine.asr.thread_choice import measured_threads
    from desktop_rt.engine.models.embedded import ensure_default_model

    folder = ensure_default_model()
    threads = args.threads or measured_threads(folder, "int8", "cpu")
    model = WhisperModel(str(folder), device="cpu", compute_type="int8", cpu_threads=threads)
    runner = Runner(model, context_frames(args.seconds))
    feats = [runner.features(w) for w in windows(args.seconds, max(args.sizes))]
    runner.run(feats[:1])  # warm-up
    report: dict = {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "machine": C.machine_info(),
        "loadavg_start": C.loadavg(),
        "model": folder.name,
        "threads": threads,
        "args": vars(args),
        "sizes": {},
    }
    for n in args.sizes:
        report["sizes"][n] = m = measure(runner, feats[:n], args.rounds)
        line = (
            f"n={n}: one by one {m['single']['total']:.2f} s, batched {m['batched']['total']:.2f} s"
        )
        print(f"{line}, cpu ratio {m['ratio']['cpu']:.2f}", file=sys.stderr)
    report["loadavg_end"] = C.loadavg()
    text = (
        f"# Batching Whisper windows ({folder.name}, {threads} threads, int8)\n\n"
        f"windows of {args.seconds:g} s (encoder context {runner.frames / 100:g} s), "
        f"median of {args.rounds} rounds; machine {report['machine']}; "
        f"load {report['loadavg_start']} -> {report['loadavg_end']}\n\n"
        "| windows | one by one: encode / generate / total | batched: encode / generate / total "
        "| batched / one by one (wall) | CPU s: one by one / batched (ratio) | same tokens |\n"
        "|---|---|---|---|---|---|\n"
        + "".join(
            f"| {n} | {m['single']['encode']:.2f} / {m['single']['generate']:.2f} / "
            f"{m['single']['total']:.2f} s | {m['batched']['encode']:.2f} / "
            f"{m['batched']['generate']:.2f} / {m['batched']['total']:.2f} s | "
            f"{m['ratio']['total']:.2f} (encode {m['ratio']['encode']:.2f}, generate "
            f"{m['ratio']['generate']:.2f}) | {m['single']['cpu']:.2f} / {m['batched']['cpu']:.2f} "
            f"({m['ratio']['cpu']:.2f}) | {'yes' if m['same_tokens'] else 'no'} |\n"
            for n, m in report["sizes"].items()
        )
    )
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"batching-{dt.date.today().isoformat()}"
    (out / f"{stem}.md").write_text(text)
    (out / f"{stem}.json").write_text(json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
