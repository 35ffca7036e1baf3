#!/usr/bin/env python3
"""Speed of the GGUF (llama.cpp mtmd) backend at the real Qwen3-ASR-0.6B dimensions.

No Qwen3-ASR GGUF is on the package index, so the model is random weights at the 0.6B shapes
(Q8_0 text, F16 mmproj), written once by tests/engine/backends/tiny_qwen3asr.py into
``--model-dir``. Its text is noise, so generation length is capped at ``--tokens-per-second``
(real English speech needs 3-5 tokens per second) to make the decode share realistic.

    .venv/bin/python bench/bench_llama.py --quick     # 12 s of speech, windows 4/8/12 s
    .venv/bin/python bench/bench_llama.py             # the 27 s LibriVox stream, windows 2-24 s

Reports, as JSON on stdout and a table on stderr:
  * one update versus window length: CPU seconds for a cold window (encode + prefill + decode);
  * streaming through StreamingTranscriber (Silero gate, LocalAgreement-2), fed in 100 ms chunks
    as fast as it goes: CPU seconds per audio second with and without cache reuse + drafting.
    Updates happen per ``LlamaOptions.update_seconds`` (2 s) of new audio whatever the pace, so
    this is the CPU load of a live stream;
  * the same stream at wall-clock pace with reuse: update interval and wall time per update,
    the largest backlog of audio waiting, final latency; realtime means the backlog stays under
    one update interval;
  * the Python overhead: the same windows replayed through the plain C path
    (``mtmd_helper_eval_chunks`` + a C greedy sampler, same token counts) versus our backend
    with reuse off;
  * the same two streams with whole 8 s pieces (``encoder_block_seconds = 8``), side by side;
  * peak RSS.
CPU seconds, not wall time, because the benchmark machine is shared.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "engine" / "backends"))

from _common import build_stream, machine_info, peak_rss_mb  # noqa: E402

RATE = 16_000


def ensure_model(folder: Path) -> tuple[Path, Path]:
    from tiny_qwen3asr import QWEN3_ASR_0_6B, write_pair

    prefix = "qwen3asr-0.6b-random"
    text, mmproj = folder / f"{prefix}-text.gguf", folder / f"{prefix}-mmproj.gguf"
    if not (text.exists() and mmproj.exists()):
        t0 = time.monotonic()
        write_pair(folder, QWEN3_ASR_0_6B, prefix=prefix)
        print(f"wrote the 0.6B-shaped pair in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    return text, mmproj


def cpu() -> float:
    return time.process_time()


class Recorder:
    """An AsrBackend wrapper that keeps every window it is asked to transcribe."""

    def __init__(self, backend):
        self.backend = backend
        self.windows: list[tuple[np.ndarray, str | None, str | None]] = []
        self.costs: list[float] = []

    @property
    def name(self) -> str:
        return self.backend.name

    @property
    def min_update_seconds(self) -> float:
        return self.backend.min_update_seconds

    def transcribe(self, audio, *, prompt=None, language=None):
        self.windows.append((np.array(audio), prompt, language))
        t0 = cpu()
        words = self.backend.transcribe(audio, prompt=prompt, language=language)
        self.costs.append(cpu() - t0)
        return words

    def close(self) -> None:
        self.backend.close()


def stream_run(backend, audio: np.ndarray) -> dict:
    from desktop_rt.engine.streaming import StreamingConfig, StreamingTranscriber

    rec = Recorder(backend)
    transcriber = StreamingTranscriber(rec, StreamingConfig(language="en"))
    reused = drafted = generated = encoded = chunks = 0
    t0, w0 = cpu(), time.monotonic()
    for i in range(0, len(audio), 1600):
        transcriber.insert_audio(audio[i : i + 1600])
        n = len(rec.windows)
        transcriber.process()
        if len(rec.windows) > n:
            reused += backend.stats.reused_audio_chunks
            encoded += backend.stats.encoded_audio_chunks
            chunks += backend.stats.audio_chunks
            drafted += backend.stats.drafted
            generated += backend.stats.generated
    transcriber.finish()
    spent = cpu() - t0
    return {
        "cpu_s_per_audio_s": round(spent / (len(audio) / RATE), 3),
        "wall_s": round(time.monotonic() - w0, 1),
        "updates": len(rec.windows),
        "update_cpu_s_mean": round(float(np.mean(rec.costs)), 3) if rec.costs else None,
        "update_cpu_s_max": round(float(np.max(rec.costs)), 3) if rec.costs else None,
        "reused_audio_chunks": reused,
        "encoded_audio_chunks": encoded,
        "audio_chunks": chunks,
        "drafted_tokens": drafted,
        "generated_tokens": generated,
        "windows": rec.windows,
    }


def paced_run(backend, audio: np.ndarray) -> dict:
    """The stream at wall-clock pace (100 ms chunks), as a microphone feeds it: does it keep up?"""
    from _common import run_paced

    from desktop_rt.engine.streaming import StreamingConfig, StreamingTranscriber

    rec = Recorder(backend)
    transcriber = StreamingTranscriber(rec, StreamingConfig(language="en"))
    walls: list[float] = []
    gaps: list[float] = []  # wall seconds between an update and the one before it in the same segment
    last = [None]

    def step():
        n = len(rec.windows)
        t0 = time.monotonic()
        update = transcriber.process()
        if len(rec.windows) > n:
            walls.append(time.monotonic() - t0)
            # A segment's first update starts a new history (an endpoint cleared it): no gap to it.
            if last[0] is not None and len(transcriber._history) > 1:
                gaps.append(t0 - last[0])
            last[0] = t0
        return [(w.text, w.start, w.end) for w in update.committed]

    res = run_paced(audio, speed=1.0, insert=transcriber.insert_audio, step=step,
                    finish=lambda: [(w.text, w.start, w.end) for w in transcriber.finish().committed])
    audio_s = len(audio) / RATE
    return {
        "updates": len(walls),
        "update_every_s": round(audio_s / max(1, len(walls)), 2),
        "update_wall_s_mean": round(float(np.mean(walls)), 3) if walls else None,
        "update_wall_s_max": round(float(np.max(walls)), 3) if walls else None,
        "update_gap_s_mean": round(float(np.mean(gaps)), 3) if gaps else None,
        "update_gap_s_p90": round(float(np.percentile(gaps, 90)), 3) if gaps else None,
        "update_gap_s_max": round(float(np.max(gaps)), 3) if gaps else None,
        "max_backlog_s": round(res.max_backlog, 2),
        "final_latency_s": round(res.final_latency, 2),
        "cpu_s_per_audio_s": round(res.cpu_seconds / audio_s, 3),
        "other_load": res.other_load,
    }


def c_helper_replay(backend, windows) -> float:
    """CPU seconds for the windows through mtmd_helper_eval_chunks and a C greedy sampler."""
    import llama_cpp as L

    native = backend.native
    sampler = L.llama_sampler_chain_init(L.llama_sampler_chain_default_params())
    L.llama_sampler_chain_add(sampler, L.llama_sampler_init_greedy())
    batch = L.llama_batch_init(1, 0, 1)
    total = 0.0
    try:
        for audio, prompt, language, n_tokens in windows:
            text = backend.layout.render(prompt, language)
            t0 = cpu()
            with native.tokenize(text, audio) as chunks:
                native.forget_from(0)
                n_past = native.eval_prompt(chunks, 0)
            for _ in range(n_tokens):
                tok = L.llama_sampler_sample(sampler, native._ctx, -1)
                batch.n_tokens = 1
                batch.token[0], batch.pos[0], batch.n_seq_id[0], batch.logits[0] = tok, n_past, 1, True
                batch.seq_id[0][0] = 0
                L.llama_decode(native._ctx, batch)
                n_past += 1
            total += cpu() - t0
    finally:
        L.llama_batch_free(batch)
        L.llama_sampler_free(sampler)
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model-dir", type=Path, default=Path.home() / ".cache" / "desktop-rt" / "bench-models")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tokens-per-second", type=float, default=4.0)
    ap.add_argument("--token-slack", type=int, default=6,
                    help="tokens allowed on top of --tokens-per-second: the ~5 of 'language English<asr_text>' "
                         "(random weights never stop by themselves; the backend's default of 24 is a safety margin)")
    ap.add_argument("--block-seconds", type=int, default=None,
                    help="LlamaOptions.encoder_block_seconds (default: the backend's default)")
    ap.add_argument("--update-seconds", type=float, default=None,
                    help="LlamaOptions.update_seconds (default: the backend's default)")
    ap.add_argument("--streams-only", action="store_true", help="skip the per-window costs and the C-helper replay")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()

    from desktop_rt.engine.backends.llama import PIECE_SECONDS, LlamaAsrBackend, LlamaOptions

    block = args.block_seconds or LlamaOptions().encoder_block_seconds
    update_s = args.update_seconds or LlamaOptions().update_seconds
    text, mmproj = ensure_model(args.model_dir)
    stream = build_stream("librivox")
    audio = stream.audio[: 12 * RATE] if args.quick else stream.audio
    lengths = (4, 8, 12) if args.quick else (2, 4, 8, 12, 16, 24)
    report: dict = {"machine": machine_info(), "threads": args.threads, "audio_s": len(audio) / RATE,
                    "tokens_per_second_cap": args.tokens_per_second, "token_slack": args.token_slack,
                    "encoder_block_seconds": block, "update_seconds": update_s}

    def open_backend(reuse: bool, block: int = block):
        t0 = time.monotonic()
        b = LlamaAsrBackend(text, mmproj, LlamaOptions(threads=args.threads, reuse_cache=reuse, draft=reuse,
                                                       max_tokens_per_second=args.tokens_per_second,
                                                       token_slack=args.token_slack,
                                                       encoder_block_seconds=block, update_seconds=update_s))
        report.setdefault("load_s", round(time.monotonic() - t0, 2))
        return b

    cold = open_backend(False)
    per_window = {}
    for seconds in () if args.streams_only else lengths:
        clip = np.resize(stream.audio, seconds * RATE)
        cold.transcribe(clip, language="en")  # the first run of a shape allocates its graphs
        t0, w0 = cpu(), time.monotonic()
        cold.transcribe(clip, language="en")
        per_window[seconds] = {"cpu_s": round(cpu() - t0, 3), "wall_s": round(time.monotonic() - w0, 3),
                               "generated": cold.stats.generated, "prompt_positions": cold.stats.prompt_positions}
        print(f"window {seconds:>2} s: {per_window[seconds]['cpu_s']:.2f} CPU s, "
              f"{per_window[seconds]['wall_s']:.2f} s", file=sys.stderr)
    report["update_vs_window"] = per_window

    plain = stream_run(cold, audio)
    windows = plain.pop("windows")
    report["stream_without_reuse"] = plain
    print(f"stream, no reuse: {plain['cpu_s_per_audio_s']} CPU s / audio s over {plain['updates']} updates",
          file=sys.stderr)
    cold.close()
    # Alternate the two paths window by window, so load from other processes hits both alike. The
    # C helper encodes whole 8 s pieces, so our side does too here: the same work, only the glue differs.
    ours = helper = 0.0
    same = open_backend(False, block=PIECE_SECONDS) if windows and not args.streams_only else None
    for w_audio, prompt, language in windows if same is not None else []:
        t0 = cpu()
        same.transcribe(w_audio, prompt=prompt, language=language)
        ours += cpu() - t0
        helper += c_helper_replay(same, [(w_audio, prompt, language, same.stats.generated)])
    if same is not None:
        same.close()
    report["python_overhead"] = {"backend_cpu_s": round(ours, 2), "c_helper_cpu_s": round(helper, 2),
                                 "ratio": round(ours / helper, 3) if helper else None}
    print(f"replay: backend {ours:.2f} CPU s vs C helper {helper:.2f} CPU s", file=sys.stderr)

    warm = open_backend(True)
    cached = stream_run(warm, audio)
    cached.pop("windows")
    report["stream_with_reuse"] = cached
    print(f"stream, reuse+draft: {cached['cpu_s_per_audio_s']} CPU s / audio s, "
          f"{cached['reused_audio_chunks']} audio chunks reused, {cached['encoded_audio_chunks']}/"
          f"{cached['audio_chunks']} encoded, {cached['drafted_tokens']}/"
          f"{cached['generated_tokens']} tokens drafted", file=sys.stderr)
    warm.close()
    live = open_backend(True)
    report["paced_with_reuse"] = paced = paced_run(live, audio)
    print(f"paced: an update every {paced['update_every_s']} s taking {paced['update_wall_s_mean']} s "
          f"(max {paced['update_wall_s_max']} s); within a segment one every {paced['update_gap_s_mean']} s "
          f"(p90 {paced['update_gap_s_p90']}, max {paced['update_gap_s_max']} s), max backlog {paced['max_backlog_s']} s, final latency "
          f"{paced['final_latency_s']} s, {paced['cpu_s_per_audio_s']} CPU s / audio s", file=sys.stderr)
    live.close()
    if block != PIECE_SECONDS:
        # Side by side in the same run: the whole 8 s pieces this backend encoded before blocks.
        pieces = open_backend(True, block=PIECE_SECONDS)
        whole = stream_run(pieces, audio)
        whole.pop("windows")
        pieces.close()
        pieces = open_backend(True, block=PIECE_SECONDS)
        whole_paced = paced_run(pieces, audio)
        pieces.close()
        report["whole_pieces"] = {"stream_with_reuse": whole, "paced_with_reuse": whole_paced}
        print(f"8 s pieces: {whole['cpu_s_per_audio_s']} CPU s / audio s; paced: update taking "
              f"{whole_paced['update_wall_s_mean']} s (max {whole_paced['update_wall_s_max']} s), within a segment "
              f"one every {whole_paced['update_gap_s_mean']} s (p90 {whole_paced['update_gap_s_p90']} s), max backlog "
              f"{whole_paced['max_backlog_s']} s, final latency {whole_paced['final_latency_s']} s", file=sys.stderr)
    report["peak_rss_mb"] = round(peak_rss_mb(), 1)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
