"""Write a random-weight Qwen3-ASR-shaped GGUF pair (text ``qwen3vl`` + mmproj ``qwen3a``).

No GGUF speech weights exist on the package index, so the llama backend is tested on a pair
written here with the ``gguf`` package: it has the real architecture (llama.cpp loads it,
encodes audio with it and decodes from it), tiny dimensions and random weights, so its text is
noise. The layout follows ``shared/reference/qwen3asr-gguf-layout.txt`` and the llama.cpp code
vendored in llama-cpp-python 0.3.36 (``tools/mtmd/models/qwen3a.cpp``,
``conversion/qwen3vl.py``).

:func:`write_pair` takes :class:`Dims`; ``TINY`` is the test model, ``QWEN3_ASR_0_6B`` the real
0.6B shapes for speed measurements (``bench/bench_llama.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import gguf
import numpy as np

__all__ = [
    "Dims",
    "TINY",
    "QWEN3_ASR_0_6B",
    "SPECIAL_TOKENS",
    "write_pair",
    "write_text_model",
    "write_mmproj",
    "RATE",
    "noise",
    "loud_start",
]

# Qwen3-ASR's special tokens; <|im_end|> is BOS and EOS, as convert_hf_to_gguf writes it.
SPECIAL_TOKENS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|audio_start|>",
    "<|audio_end|>",
    "<asr_text>",
]
MERGES = ["Ġ t", "Ġ a", "h e", "i n", "Ġt he"]
CHAT_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


@dataclass(frozen=True)
class Dims:
    n_embd: int = 64
    n_layer: int = 2
    n_head: int = 4
    n_head_kv: int = 2
    head_dim: int = 16
    n_ff: int = 128
    rope_sections: tuple[int, int, int, int] = (4, 2, 2, 0)
    n_vocab: int = 0  # 0: just the byte-level tokens, merges and specials (267)
    a_embd: int = 32
    a_layer: int = 1
    a_head: int = 4
    a_ff: int = 64
    a_conv: int = 8
    n_mel: int = 128
    text_type: str = "F32"  # F32, F16 or Q8_0 for the 2-D text weights
    mmproj_type: str = "F32"  # F32 or F16 for the 2-D mmproj weights
    seed: int = 0
    text_scale: float = 0.3  # std of the text layers' weights: large enough that the output is
    # not a copy of the last input token (tied embeddings copy it when layers are near zero)
    special_scale: float = 4.0  # x 0.1: how often the specials (<|im_end|> ends the output) win
    merges: tuple[str, ...] = ()  # BPE merges on top of MERGES (the benchmark's English ones)


TINY = Dims()
QWEN3_ASR_0_6B = Dims(
    n_embd=1024,
    n_layer=28,
    n_head=16,
    n_head_kv=8,
    head_dim=128,
    n_ff=3072,
    rope_sections=(24, 20, 20, 0),
    n_vocab=151936,
    a_embd=896,
    a_layer=18,
    a_head=14,
    a_ff=3584,
    a_conv=480,
    text_type="Q8_0",
    mmproj_type="F16",
    text_scale=0.02,
)  # a usual init scale: 28 layers at 0.3 would overflow F16


def _bytes_to_unicode() -> list[str]:
    """GPT-2's printable stand-ins for the 256 byte values, in byte order."""
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    table = dict(zip(bs, cs, strict=True))
    return [chr(table[b]) for b in range(256)]


def all_merges(dims: Dims) -> list[str]:
    return MERGES + [m for m in dims.merges if m not in MERGES]


def vocabulary(n_vocab: int = 0, merges: list[str] = MERGES) -> tuple[list[str], list[int]]:
    """Token texts and types: 256 byte tokens, the merge results, specials, then padding."""
    tokens = _bytes_to_unicode()
    seen = set(tokens)
    for m in merges:
        result = m.replace(" ", "")
        if result not in seen:  # two merges can spell the same token
            seen.add(result)
            tokens.append(result)
    types = [gguf.TokenType.NORMAL] * len(tokens)
    tokens += SPECIAL_TOKENS
    types += [gguf.TokenType.CONTROL] * len(SPECIAL_TOKENS)
    for i in range(len(tokens), n_vocab):
        tokens.append(f"[PAD{i}]")
        types.append(gguf.TokenType.UNUSED)
    return tokens, [int(t) for t in types]


class _Weights:
    def __init__(self, writer: gguf.GGUFWriter, seed: int, matrix_type: str, scale: float = 0.05):
        self.writer = writer
        self.scale = scale
        self.rng = np.random.default_rng(seed)
        self.matrix_type = matrix_type

    def add(
        self,
        name: str,
        shape: tuple[int, ...],
        *,
        scale: float | None = None,
        fill: float | None = None,
        kind: str | None = None,
    ) -> None:
        """Add tensor ``name``; ``shape`` is numpy order (the reverse of GGUF's)."""
        if fill is not None:
            data = np.full(shape, fill, dtype=np.float32)
        else:
            data = self.rng.standard_normal(shape, dtype=np.float32) * (scale or self.scale)
        kind = kind or (self.matrix_type if len(shape) >= 2 else "F32")
        _put(self.writer, name, data, kind)


def _put(writer: gguf.GGUFWriter, name: str, data: np.ndarray, kind: str) -> None:
    if kind == "F16":
        writer.add_tensor(name, data.astype(np.float16))
    elif kind == "Q8_0":
        q8 = gguf.GGMLQuantizationType.Q8_0
        writer.add_tensor(name, gguf.quants.quantize(data, q8), raw_dtype=q8)
    else:
        writer.add_tensor(name, data.astype(np.float32))


def write_text_model(
    path: Path,
    dims: Dims = TINY,
    *,
    chat_template: str | None = CHAT_TEMPLATE,
    repeat_penalty: float | None = None,
) -> Path:
    """The ``qwen3vl`` text model (decoder + tokenizer); ``repeat_penalty`` as the converter
    writes a model's generation_config (``general.sampling.penalty_repeat``)."""
    path = Path(path)
    tokens, types = vocabulary(dims.n_vocab, all_merges(dims))
    w = gguf.GGUFWriter(str(path), "qwen3vl")
    _text_metadata(w, dims, tokens, types, chat_template, repeat_penalty)
    _text_weights(w, dims, tokens)
    _finish(w)
    return path


def _text_metadata(
    w: gguf.GGUFWriter,
    dims: Dims,
    tokens: list[str],
    types: list[int],
    chat_template: str | None,
    repeat_penalty: float | None,
) -> None:
    arch = "qwen3vl"
    w.add_name("random-qwen3asr-text")
    w.add_uint32(f"{arch}.context_length", 65536)
    w.add_uint32(f"{arch}.embedding_length", dims.n_embd)
    w.add_uint32(f"{arch}.block_count", dims.n_layer)
    w.add_uint32(f"{arch}.feed_forward_length", dims.n_ff)
    w.add_uint32(f"{arch}.attention.head_count", dims.n_head)
    w.add_uint32(f"{arch}.attention.head_count_kv", dims.n_head_kv)
    w.add_uint32(f"{arch}.attention.key_length", dims.head_dim)
    w.add_uint32(f"{arch}.attention.value_length", dims.head_dim)
    w.add_float32(f"{arch}.attention.layer_norm_rms_epsilon", 1e-6)
    w.add_float32(f"{arch}.rope.freq_base", 1_000_000.0)
    w.add_array(f"{arch}.rope.dimension_sections", list(dims.rope_sections))
    w.add_uint32(f"{arch}.n_deepstack_layers", 0)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0 if dims.text_type == "Q8_0" else 0)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(all_merges(dims))
    im_end = tokens.index("<|im_end|>")
    w.add_bos_token_id(im_end)
    w.add_eos_token_id(im_end)
    w.add_add_bos_token(False)
    if chat_template is not None:
        w.add_chat_template(chat_template)
    if repeat_penalty is not None:
        w.add_float32("general.sampling.penalty_repeat", repeat_penalty)


def _text_weights(w: gguf.GGUFWriter, dims: Dims, tokens: list[str]) -> None:
    t = _Weights(w, dims.seed, dims.text_type, dims.text_scale)
    e, hd, ff = dims.n_embd, dims.head_dim, dims.n_ff
    # Tied output: logits are the final state times these rows, so the tokens with the larger
    # rows win. Letters, space-led merges, ". " and the specials get full-size rows, everything
    # else small ones, so the noise the model writes comes out as words (and stops now and then).
    embd = t.rng.standard_normal((len(tokens), e), dtype=np.float32) * 0.5
    favoured = set("abcdefghijklmnopqrstuvwxyzĠ.,") | {m.replace(" ", "") for m in MERGES}
    embd[[i for i, tok in enumerate(tokens) if tok not in favoured]] *= 0.1
    embd[[tokens.index(tok) for tok in SPECIAL_TOKENS]] *= dims.special_scale
    _put(w, "token_embd.weight", embd, dims.text_type)
    t.add("output_norm.weight", (e,), fill=1.0)
    for i in range(dims.n_layer):
        b = f"blk.{i}."
        t.add(b + "attn_norm.weight", (e,), fill=1.0)
        t.add(b + "attn_q.weight", (dims.n_head * hd, e))
        t.add(b + "attn_k.weight", (dims.n_head_kv * hd, e))
        t.add(b + "attn_v.weight", (dims.n_head_kv * hd, e))
        t.add(b + "attn_output.weight", (e, dims.n_head * hd))
        t.add(b + "attn_q_norm.weight", (hd,), fill=1.0)
        t.add(b + "attn_k_norm.weight", (hd,), fill=1.0)
        t.add(b + "ffn_norm.weight", (e,), fill=1.0)
        t.add(b + "ffn_gate.weight", (ff, e))
        t.add(b + "ffn_up.weight", (ff, e))
        t.add(b + "ffn_down.weight", (e, ff))


def write_mmproj(path: Path, dims: Dims = TINY, *, projection_dim: int | None = None) -> Path:
    """The ``qwen3a`` audio encoder + projector; ``projection_dim`` defaults to the text width."""
    path = Path(path)
    proj = projection_dim or dims.n_embd
    w = gguf.GGUFWriter(str(path), "clip")
    w.add_name("random-qwen3asr-mmproj")
    w.add_file_type(1 if dims.mmproj_type == "F16" else 0)
    w.add_bool("clip.has_vision_encoder", False)
    w.add_bool("clip.has_audio_encoder", True)
    w.add_string("clip.audio.projector_type", "qwen3a")
    w.add_uint32("clip.audio.projection_dim", proj)
    w.add_uint32("clip.audio.embedding_length", dims.a_embd)
    w.add_uint32("clip.audio.feed_forward_length", dims.a_ff)
    w.add_uint32("clip.audio.block_count", dims.a_layer)
    w.add_uint32("clip.audio.attention.head_count", dims.a_head)
    w.add_float32("clip.audio.attention.layer_norm_epsilon", 1e-5)
    w.add_uint32("clip.audio.num_mel_bins", dims.n_mel)

    t = _Weights(w, dims.seed + 1, dims.mmproj_type)
    a, c = dims.a_embd, dims.a_conv
    t.add("a.conv2d.1.weight", (c, 1, 3, 3), scale=0.3, kind="F16")
    t.add("a.conv2d.2.weight", (c, c, 3, 3), scale=0.1, kind="F16")
    t.add("a.conv2d.3.weight", (c, c, 3, 3), scale=0.1, kind="F16")
    for k in (1, 2, 3):
        t.add(f"a.conv2d.{k}.bias", (c, 1, 1), kind="F32")
    t.add(
        "a.conv_out.weight",
        (a, c * (dims.n_mel // 8)),
        kind="F32" if dims.mmproj_type == "F32" else None,
    )
    t.add("a.position_embd.weight", (1500, a), kind="F32")
    for i in range(dims.a_layer):
        b = f"a.blk.{i}."
        for name in ("attn_q", "attn_k", "attn_v", "attn_out"):
            t.add(b + name + ".weight", (a, a))
            t.add(b + name + ".bias", (a,))
        for name in ("ln1", "ln2"):
            t.add(b + name + ".weight", (a,), fill=1.0)
            t.add(b + name + ".bias", (a,), fill=0.0)
        t.add(b + "ffn_up.weight", (dims.a_ff, a))
        t.add(b + "ffn_up.bias", (dims.a_ff,))
        t.add(b + "ffn_down.weight", (a, dims.a_ff))
        t.add(b + "ffn_down.bias", (a,))
    t.add("a.post_ln.weight", (a,), fill=1.0)
    t.add("a.post_ln.bias", (a,), fill=0.0)
    t.add("mm.a.mlp.1.weight", (a, a))
    t.add("mm.a.mlp.1.bias", (a,))
    t.add("mm.a.mlp.2.weight", (proj, a))
    t.add("mm.a.mlp.2.bias", (proj,))
    _finish(w)
    return path


def write_pair(
    folder: Path, dims: Dims = TINY, *, prefix: str = "tiny-qwen3asr"
) -> tuple[Path, Path]:
    """Write ``{prefix}-text.gguf`` and ``{prefix}-mmproj.gguf`` into ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    text = write_text_model(folder / f"{prefix}-text.gguf", dims)
    mmproj = write_mmproj(folder / f"{prefix}-mmproj.gguf", dims)
    return text, mmproj


def _finish(w: gguf.GGUFWriter) -> None:
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


# -- audio to feed it (its text is noise whatever it hears) ------------------------------------
RATE = 16_000


def noise(seconds: float, seed: int = 0, level: float = 0.1) -> np.ndarray:
    """Gaussian noise at ``level``, the same for the same seed."""
    return (np.random.default_rng(seed).standard_normal(int(seconds * RATE)) * level).astype(
        np.float32
    )


def loud_start(seconds: float, seed: int = 0) -> np.ndarray:
    """Noise whose loudest part is its first second; a window that grows keeps its first samples."""
    audio = noise(seconds, seed, 0.05)
    audio[:RATE] *= 8
    return audio


if __name__ == "__main__":  # python tests/support/tiny_qwen3asr.py OUT_DIR [0.6b]
    import sys

    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    real = len(sys.argv) > 2 and sys.argv[2] == "0.6b"
    print(
        write_pair(
            out,
            QWEN3_ASR_0_6B if real else TINY,
            prefix="qwen3asr-0.6b-random" if real else "tiny-qwen3asr",
        )
    )
