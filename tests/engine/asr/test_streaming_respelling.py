"""A session's respellings reach the committed text its later prompts are built from.

The backend copies the spelling nearest its prompt's end, as Whisper does: a keyword alone loses
to committed text that still spells the word the old way, a respelled context does not.
"""

from __future__ import annotations

import re

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE, Word
from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
from desktop_rt.engine.protocol.events import Respelling
from desktop_rt.engine.protocol.session_config import SessionConfig
from desktop_rt.live.taught_words import TaughtWords
from tests.support.clips import read_clip, reference_text, wer
from tests.support.learning_backend import LearningBackend
from tests.support.prompt_log import PromptLog

CHUNK = 1600  # 100 ms
TURN = np.zeros(int(3.5 * SAMPLE_RATE), np.float32)  # the backend's five words fit


def stream(tr: StreamingTranscriber, audio: np.ndarray) -> list[Word]:
    """``audio`` fed in 100 ms chunks as one turn: the words committed, ``finish`` included."""
    committed: list[Word] = []
    for i in range(0, len(audio), CHUNK):
        tr.insert_audio(audio[i : i + CHUNK])
        committed += tr.process().committed
    return committed + list(tr.finish().committed)


def turn(tr: StreamingTranscriber) -> str:
    return "".join(w.text for w in stream(tr, TURN))


def corrected_turn(
    prompt: str, respellings: tuple[Respelling, ...] = ()
) -> tuple[str, str, list[str | None]]:
    """The first turn, then ``prompt`` set, then the second: both texts and the later prompts."""
    backend = LearningBackend("and mister John Dashwood had", {"Dashwood": "Dashwud"}, True)
    tr = StreamingTranscriber(backend, StreamingConfig(vad=False))
    first = turn(tr)
    before = len(backend.prompts_seen())
    tr.set_prompt(prompt, respellings)
    second = turn(tr)
    return first, second, backend.prompts_seen()[before:]


def test_a_respelled_context_prompts_the_new_spelling_and_the_next_turn_is_written_so():
    first, second, prompts = corrected_turn("Dashwood", (Respelling("Dashwud", "Dashwood"),))
    assert first == " and mister John Dashwud had"
    assert prompts and all(p is not None and "Dashwood" in p for p in prompts), prompts
    assert not any("Dashwud" in (p or "") for p in prompts), prompts
    assert any("John Dashwood had" in (p or "") for p in prompts), prompts  # the context too
    assert second == " and mister John Dashwood had"


def test_a_keyword_alone_loses_to_the_context_that_spells_the_word_the_old_way():
    """What the respellings are for: without them, the nearer context wins."""
    first, second, prompts = corrected_turn("Dashwood")
    assert first == second == " and mister John Dashwud had"
    assert any("Dashwood" in (p or "") and "Dashwud" in (p or "") for p in prompts), prompts


def test_respellings_go_with_the_next_prompt_and_a_plain_prompt_drops_them():
    backend = LearningBackend("and mister John Dashwood had", {"Dashwood": "Dashwud"}, True)
    tr = StreamingTranscriber(backend, StreamingConfig(vad=False))
    tr.set_prompt(None, (Respelling("mister", "Mister"),))
    assert turn(tr) == " and mister John Dashwud had"  # the words heard are not respelled
    start = len(backend.prompts_seen())
    assert turn(tr) == " and mister John Dashwud had"
    assert any(p == "and Mister John Dashwud had" for p in backend.prompts_seen()[start:])
    tr.set_prompt("Elinor")
    start = len(backend.prompts_seen())
    turn(tr)
    assert any("mister John" in (p or "") for p in backend.prompts_seen()[start:])


def test_the_real_model_is_prompted_with_the_corrected_spelling_not_the_old_one(whisper_backend):
    """Whisper base hears one clip; the user respells one of its sure words; every pass over
    the next clip is prompted with the new spelling, as keyword and in the committed text, and
    never with the old one (the prompt is checked, not the words the model writes)."""
    log = PromptLog(whisper_backend)
    tr = StreamingTranscriber(log, StreamingConfig(language="en"))
    first = stream(tr, read_clip("ss-0880"))
    sure = [w.text.strip() for w in first if w.probability >= 0.5]
    old = max((t for t in sure if t.isalpha() and len(t) >= 3), key=len)
    recognised = "".join(w.text for w in first)
    corrected = re.sub(rf"\b{old}\b", "Zedekiah", recognised)
    taught = TaughtWords()
    assert taught.teach(recognised, corrected)
    assert taught.respellings == (Respelling(old, "Zedekiah"),)
    config = SessionConfig(id="s", model="m").apply(taught.session_update().patch)
    tr.set_prompt(config.model_prompt, config.respellings)
    start = len(log.prompts)
    second = stream(tr, read_clip("ss-0870"))
    prompts = log.prompts[start:]
    assert second and prompts, (second, prompts)
    for prompt in prompts:
        assert prompt is not None and prompt.count("Zedekiah") == 2, prompts  # keyword, context
        assert not re.search(rf"\b{old}\b", prompt, re.IGNORECASE), prompts
    assert wer(reference_text("ss-0870"), "".join(w.text for w in second)) < 0.35, second
