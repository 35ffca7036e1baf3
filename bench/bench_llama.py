#!/usr/bin/env python3
"""Speed of the GGUF (llama.cpp mtmd) backend at the real Qwen3-ASR-0.6B dimensions.

No Qwen3-ASR GGUF is on the package index, so the model is random weights at the 0.6B shapes
(Q8_0 text, F16 mmproj), written once by tests/support/tiny_qwen3asr.py into
``--model-dir``. Two things make its text side cost what the real model's does:

* its tokenizer has 32k BPE merges learned from the English of Python's standard-library
  docstrings: the eval transcripts come out at 1.3-1.4 tokens per word, about what Qwen's own
  151k-token BPE gives English (a byte-level one would give 5);
* it speaks the reference (:class:`ReferenceSpeaker`): every output token is still chosen the
  real way (the logits computed, penalised and arg-maxed), then replaced by the next token of the
  stream's reference words heard by then (word end times from faster-whisper offline). Random
  weights write noise that never agrees with itself, so nothing would ever commit; with the
  reference, passes agree, words commit, committed words are forced, and drafts verify as they
  would for a model that hears the stream right. The committed text must then be the
  reference: the report gives its WER (0 means nothing was lost or repeated).

    .venv/bin/python bench/bench_llama.py --quick     # 12 s of speech, windows 4/8/12 s
    .venv/bin/python bench/bench_llama.py             # the 27 s LibriVox stream, windows 2-24 s

Reports, as JSON on stdout and a table on stderr:
  * one update versus window length: CPU seconds for a cold window (encode + prefill + decode);
  * streaming through StreamingTranscriber (Silero gate, LocalAgreement-2), fed in 100 ms chunks
    as fast as it goes: CPU seconds per audio second with everything on, without forcing the
    committed prefix, and without cache reuse + drafting. Updates happen per
    ``LlamaOptions.update_seconds`` (2 s) of new audio whatever the pace, so this is the CPU
    load of a live stream;
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
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _common import build_stream, machine_info, peak_rss_mb, wer  # noqa: E402

RATE = 16_000


def english_merges(vocab_size: int = 32_000) -> list[str]:
    """BPE merges learned from the English of the standard library's docstrings (not the eval
    transcripts, which would come out one token per word)."""
    import ast
    import sysconfig

    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    docs = []
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        if "test" in path.parts:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        docs += [
            d
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and (d := ast.get_docstring(node))
        ]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    # The prompt's own words are single tokens in Qwen's vocabulary.
    tok.train_from_iterator(docs + ["system user assistant language English"] * 100, trainer)
    return [
        m if isinstance(m, str) else " ".join(m)
        for m in json.loads(tok.to_str())["model"]["merges"]
    ]


def ensure_model(folder: Path) -> tuple[Path, Path]:
    from dataclasses import replace

    from tests.support.tiny_qwen3asr import QWEN3_ASR_0_6B, write_pair

    prefix = "qwen3asr-0.6b-random-bpe"
    text, mmproj = folder / f"{prefix}-text.gguf", folder / f"{prefix}-mmproj.gguf"
    if not (text.exists() and mmproj.exists()):
        t0 = time.monotonic()
        write_pair(folder, replace(QWEN3_ASR_0_6B, merges=tuple(english_merges())), prefix=prefix)
        print(f"wrote the 0.6B-shaped pair in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    return text, mmproj


def make_speaker(base, words: list[tuple[str, float, float]]):
    """A :class:`ReferenceSpeaker` class over the backend class ``base`` (imported late)."""

    class ReferenceSpeaker(base):
        """The 0.6B backend writing the stream's reference words (see the module doc).

        ``locate()`` says where the window lies: its start in stream seconds and how many
        reference words are committed before this pass. The pass writes the words up to the
        ones that end inside the window: after a forced prefix, those after the committed ones;
        without one, all whose speech reaches into the window (committed ones heard again).
        """

        locate = staticmethod(lambda: (0.0, 0))

        def generate(self, audio, *, prompt=None, language=None, prefix=""):
            start, done = self.locate()
            end = start + audio.size / RATE
            heard = sum(1 for _, _, e in words if e <= end)
            if not prefix:
                done = min(done, sum(1 for _, _, e in words if e <= start + 0.05))
            text = " ".join(w.strip() for w, _, _ in words[done:heard])
            self._reference = (
                self.native.text_tokens((" " if prefix and text else "") + text) if text else []
            )
            self._end = self.native.token_id("<|im_end|>")
            return super().generate(audio, prompt=prompt, language=language, prefix=prefix)

        def _pick(self, logits, history):
            super()._pick(logits, history)  # the real choice, for its cost
            i = len(history) - self.stats.forced
            return (self._reference[i] if i < len(self._reference) else self._end), 0.9

    return ReferenceSpeaker


def cpu() -> float:
    return time.process_time()


class Recorder:
    """An AsrBackend wrapper that keeps every window it is asked to transcribe (with where the
    window lies, for a replay) and points the speaker at the transcriber."""

    def __init__(self, backend):
        self.backend = backend
        self.windows: list[tuple[np.ndarray, str | None, str | None, tuple[float, int]]] = []
        self.costs: list[float] = []
        self.committed: list[str] = []

    def attach(self, transcriber) -> None:
        self.backend.locate = lambda: (transcriber._buffer_start, len(self.committed))

    def commit(self, words) -> None:
        self.committed += [w.text for w in words]

    def __getattr__(self, name: str):
        return getattr(self.backend, name)  # name, min_update_seconds, update_grid_seconds, ...

    def transcribe(self, audio, *, prompt=None, language=None, **extra):
        self.windows.append((np.array(audio), prompt, language, self.backend.locate()))
        t0 = cpu()
        words = self.backend.transcribe(audio, prompt=prompt, language=language, **extra)
        self.costs.append(cpu() - t0)
        return words

    def close(self) -> None:
        self.backend.close()


def stream_run(backend, audio: np.ndarray, reference: str) -> dict:
    from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber

    rec = Recorder(backend)
    transcriber = StreamingTranscriber(rec, StreamingConfig(language="en"))
    rec.attach(transcriber)
    reused = drafted = generated = encoded = chunks = forced = 0
    t0, w0 = cpu(), time.monotonic()
    for i in range(0, len(audio), 1600):
        transcriber.insert_audio(audio[i : i + 1600])
        n = len(rec.windows)
        rec.commit(transcriber.process().committed)
        if len(rec.windows) > n:
            reused += backend.stats.reused_audio_chunks
            encoded += backend.stats.encoded_audio_chunks
            chunks += backend.stats.audio_chunks
            drafted += backend.stats.drafted
            generated += backend.stats.generated
            forced += backend.stats.forced
    rec.commit(transcriber.finish().committed)
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
        "forced_tokens": forced,
        "wer_vs_reference": round(wer(reference, "".join(rec.committed)), 4),
        "windows": rec.windows,
    }


def paced_run(backend, audio: np.ndarray, reference: str) -> dict:
    """The stream at wall-clock pace (100 ms chunks), as a microphone feeds it: does it keep up?"""
    from _common import run_paced

    from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber

    rec = Recorder(backend)
    transcriber = StreamingTranscriber(rec, StreamingConfig(language="en"))
    rec.attach(transcriber)
    walls: list[float] = []
    gaps: list[
        float
    ] = []  # wall seconds between an update and the one before it in the same segment
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
        rec.commit(update.committed)
        return [(w.text, w.start, w.end) for w in update.committed]

    def finish():
        update = transcriber.finish()
        rec.commit(update.committed)
        return [(w.text, w.start, w.end) for w in update.committed]

    res = run_paced(audio, speed=1.0, insert=transcriber.insert_audio, step=step, finish=finish)
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
        "wer_vs_reference": round(wer(reference, "".join(rec.committed)), 4),
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
                batch.token[0], batch.pos[0], batch.n_seq_id[0], batch.logits[0] = (
                    tok,
                    n_past,
                    1,
                    True,
                )
                batch.seq_id[0][0] = 0
                L.llama_decode(native._ctx, batch)
                n_past += 1
            total += cpu() - t0
    finally:
        L.llama_batch_free(batch)
        L.llama_sampler_free(sampler)
    return total


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--model-dir", type=Path, default=Path.home() / ".cache" / "desktop-rt" / "bench-models"
    )
    ap.add_argument(
        "--whisper",
        default=None,
        help="CTranslate2 Whisper folder for the word times (default: the embedded model)",
    )
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--block-seconds",
        type=int,
        default=None,
        help="LlamaOptions.encoder_block_seconds (default: the backend's default)",
    )
    ap.add_argument(
        "--update-seconds",
        type=float,
        default=None,
        help="LlamaOptions.update_seconds (default: the backend's default)",
    )
    ap.add_argument("--paced-runs", type=int, default=1, help="paced runs with the defaults")
    ap.add_argument(
        "--streams-only",
        action="store_true",
        help="skip the per-window costs and the C-helper replay",
    )
    ap.add_argument(
        "--stream",
        default="librivox",
        help="librivox (27 s) or long (60 s, with trims and long pauses)",
    )
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()

    from _align import alignment_words

    from desktop_rt.engine.asr.llama.audio_blocks import PIECE_SECONDS
    from desktop_rt.engine.asr.llama.backend import LlamaAsrBackend, LlamaOptions
    from desktop_rt.engine.models.embedded import ensure_default_model

    block = args.block_seconds or LlamaOptions().encoder_block_seconds
    update_s = args.update_seconds or LlamaOptions().update_seconds
    text, mmproj = ensure_model(args.model_dir)
    stream = build_stream(args.stream)
    audio = stream.audio[: 12 * RATE] if args.quick else stream.audio
    words = alignment_words(
        Path(args.whisper or ensure_default_model()), stream, args.threads, "en"
    )
    reference = " ".join(w.strip() for w, _, e in words if e <= len(audio) / RATE)
    lengths = (4, 8, 12) if args.quick else (2, 4, 8, 12, 16, 24)
    Speaker = make_speaker(LlamaAsrBackend, words)
    report: dict = {
        "machine": machine_info(),
        "stream": args.stream,
        "threads": args.threads,
        "audio_s": len(audio) / RATE,
        "encoder_block_seconds": block,
        "update_seconds": update_s,
    }

    def open_backend(reuse: bool = True, block: int = block, force: bool = True):
        t0 = time.monotonic()
        b = Speaker(
            text,
            mmproj,
            LlamaOptions(
                threads=args.threads,
                reuse_cache=reuse,
                draft=reuse,
                force_prefix=force,
                encoder_block_seconds=block,
                update_seconds=update_s,
            ),
        )
        report.setdefault("load_s", round(time.monotonic() - t0, 2))
        return b

    cold = open_backend(False)
    ref_tokens = len(cold.native.text_tokens(reference))
    report["reference"] = {
        "words": len(reference.split()),
        "tokens": ref_tokens,
        "tokens_per_audio_s": round(ref_tokens / (len(audio) / RATE), 2),
    }
    per_window = {}
    for seconds in () if args.streams_only else lengths:
        clip = np.resize(stream.audio, seconds * RATE)
        cold.transcribe(clip, language="en")  # the first run of a shape allocates its graphs
        t0, w0 = cpu(), time.monotonic()
        cold.transcribe(clip, language="en")
        per_window[seconds] = {
            "cpu_s": round(cpu() - t0, 3),
            "wall_s": round(time.monotonic() - w0, 3),
            "generated": cold.stats.generated,
            "prompt_positions": cold.stats.prompt_positions,
        }
        print(
            f"window {seconds:>2} s: {per_window[seconds]['cpu_s']:.2f} CPU s, "
            f"{per_window[seconds]['wall_s']:.2f} s",
            file=sys.stderr,
        )
    report["update_vs_window"] = per_window

    plain = stream_run(cold, audio, reference)
    windows = plain.pop("windows")
    report["stream_without_reuse"] = plain
    print(
        f"stream, no reuse: {plain['cpu_s_per_audio_s']} CPU s / audio s over {plain['updates']} updates",
        file=sys.stderr,
    )
    cold.close()
    # Alternate the two paths window by window, so load from other processes hits both alike. The
    # C helper encodes whole 8 s pieces and generates every token, so our side does too here
    # (no forced prefix): the same work, only the glue differs.
    ours = helper = 0.0
    same = open_backend(False, block=PIECE_SECONDS) if windows and not args.streams_only else None
    for w_audio, prompt, language, where in windows if same is not None else []:
        same.locate = lambda where=where: where
        t0 = cpu()
        same.transcribe(w_audio, prompt=prompt, language=language)
        ours += cpu() - t0
        helper += c_helper_replay(
            same, [(same._whole_blocks(w_audio), prompt, language, same.stats.generated)]
        )
    if same is not None:
        same.close()
    if same is not None:
        report["python_overhead"] = {
            "backend_cpu_s": round(ours, 2),
            "c_helper_cpu_s": round(helper, 2),
            "ratio": round(ours / helper, 3) if helper else None,
        }
        print(f"replay: backend {ours:.2f} CPU s vs C helper {helper:.2f} CPU s", file=sys.stderr)

    def streams(label: str, **kw) -> dict:
        b = open_backend(**kw)
        fast = stream_run(b, audio, reference)
        fast.pop("windows")
        b.close()
        paced = []
        for _ in range(args.paced_runs if not kw else 1):
            b = open_backend(**kw)
            paced.append(paced_run(b, audio, reference))
            b.close()
        p = paced[-1]
        print(
            f"{label}: {fast['cpu_s_per_audio_s']} CPU s / audio s ({fast['encoded_audio_chunks']}/"
            f"{fast['audio_chunks']} blocks encoded, {fast['drafted_tokens']} drafted and {fast['forced_tokens']} "
            f"forced of {fast['generated_tokens']} tokens, WER {fast['wer_vs_reference']}); paced: an update "
            f"taking {p['update_wall_s_mean']} s (max {p['update_wall_s_max']} s), within a segment one every "
            f"{p['update_gap_s_mean']} s (p90 {p['update_gap_s_p90']}, max {p['update_gap_s_max']} s), max backlog "
            f"{p['max_backlog_s']} s, final latency {p['final_latency_s']} s, {p['cpu_s_per_audio_s']} CPU s / "
            f"audio s, WER {p['wer_vs_reference']}",
            file=sys.stderr,
        )
        return {
            "stream_with_reuse": fast,
            "paced_with_reuse": paced[0] if len(paced) == 1 else paced,
        }

    defaults = streams("defaults")
    report["stream_with_reuse"] = defaults["stream_with_reuse"]
    report["paced_with_reuse"] = defaults["paced_with_reuse"]
    report["without_forced_prefix"] = streams("no forced prefix", force=False)
    if block != PIECE_SECONDS:
        # Side by side in the same run: the whole 8 s pieces this backend encoded before blocks.
        report["whole_pieces"] = streams("8 s pieces", block=PIECE_SECONDS)
    report["peak_rss_mb"] = round(peak_rss_mb(), 1)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
