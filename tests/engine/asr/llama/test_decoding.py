"""Decoding with a forced prefix and a verified draft gives what plain greedy decoding gives."""

from __future__ import annotations

import numpy as np
import pytest

from desktop_rt.engine.asr.llama.backend import LlamaAsrBackend, LlamaOptions
from desktop_rt.engine.asr.llama.decoding import greedy_pick, realign
from tests.support.tiny_qwen3asr import loud_start


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
    assert realign(native, spelled + cat, the) == the + cat
    assert realign(native, spelled + cat, native.text_tokens(" then")) == []  # the texts part
    assert realign(native, the + cat, the) == the + cat


def test_greedy_pick_penalises_only_recent_output_and_keeps_the_logits():
    logits = np.array([1.0, 2.0, 1.9, -1.0], dtype=np.float32)
    logits.flags.writeable = False  # as llama.cpp's logits view is
    token, p = greedy_pick(logits, [], 2.0, 64)
    assert token == 1 and p == pytest.approx(1 / np.exp(logits - 2.0).sum())
    assert greedy_pick(logits, [1], 1.0, 64)[0] == 1  # a penalty of 1 is none
    assert greedy_pick(logits, [1], 2.0, 64)[0] == 2  # 2.0 / 2 falls below 1.9
    assert greedy_pick(logits, [1, 0], 2.0, 1)[0] == 1  # only the last output counts
    token, p = greedy_pick(np.array([-1.0, -1.5]), [0], 2.0, 64)  # negative: times the penalty
    assert token == 1 and p == pytest.approx(1 / (1 + np.exp(-2.0 + 1.5)))
