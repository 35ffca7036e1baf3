"""The transcription prompt, the output format and word times; no model needed."""

from __future__ import annotations

from itertools import pairwise

import pytest

from desktop_rt.engine.asr.llama.prompt_format import (
    PromptLayout,
    output_words,
    split_output,
    timed_words,
)


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
    assert all(a.end == b.start for a, b in pairwise(words))
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


def test_output_words_are_read_from_the_tokens_bytes():
    pieces = [b" Hello", b" big", b" world."]
    spans = [(0, 5, 0.9), (5, 9, 0.5), (9, 16, 0.7)]
    assert output_words(pieces, [0.9, 0.5, 0.7], "English", 3.2) == timed_words(
        "Hello big world.", 3.2, spans
    )
    skipped = output_words(pieces, [0.9, 0.5, 0.7], "English", 3.2, skip=5)
    assert skipped == timed_words("Hello big world.", 3.2, spans, skip=5)
    # Half a UTF-8 character per token still spells the text; its words keep the lowest token.
    e_acute = "é".encode()
    split = output_words([b" caf", e_acute[:1], e_acute[1:]], [0.9, 0.4, 0.8], "French", 1.0)
    assert [(w.text, w.probability) for w in split] == [(" café", 0.4)]
    assert output_words([b"language None"], [0.5], None, 1.0) == []  # no speech
