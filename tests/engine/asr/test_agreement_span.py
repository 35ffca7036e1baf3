"""HypothesisBuffer at an onset: agreeing hypotheses must have heard windows that differ.

Two onset passes 0.3 s apart hear nearly the same audio and repeat the same guess ("How do
you marry" for "Had he married", typed by dictation in a CI run): with ``span_seconds`` an
onset hypothesis is compared with the latest one whose window ended that much earlier.
"""

from __future__ import annotations

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.agreement import HypothesisBuffer, OnsetRule


def words(text: str, step: float = 0.3) -> list[Word]:
    return [Word(" " + t, i * step, i * step + step * 0.9, 0.9) for i, t in enumerate(text.split())]


def buffer(span: float) -> HypothesisBuffer:
    return HypothesisBuffer(onset_rule=OnsetRule(span_seconds=span))


def text(ws) -> str:
    return "".join(w.text for w in ws)


def test_onset_passes_close_together_do_not_agree_alone():
    buf = buffer(0.6)
    assert not buf.insert(words("how do you"), onset=True, heard_end=1.5).committed
    assert not buf.insert(words("how do you marry"), onset=True, heard_end=1.8).committed
    # The third hears 0.6 s more than the first: the first and the third are compared.
    update = buf.insert(words("had he married a"), onset=True, heard_end=2.1)
    assert not update.committed  # "had" is not "how": the guess was never committed
    update = buf.insert(words("had he married a more"), onset=True, heard_end=2.4)
    assert not update.committed  # 2.4 is compared with 1.8 ("how do you marry")
    update = buf.insert(words("had he married a more amiable"), onset=True, heard_end=2.7)
    assert text(update.committed) == " had he married a"
    assert text(update.tentative) == " more amiable"


def test_a_pass_over_in_between_does_not_block_agreement():
    buf = buffer(0.6)
    buf.insert(words("had he married"), onset=True, heard_end=1.5)
    buf.insert(words("how do you marry"), onset=True, heard_end=1.8)  # passed over
    update = buf.insert(words("had he married a"), onset=True, heard_end=2.1)
    assert text(update.committed) == " had he married"
    assert text(update.tentative) == " a"


def test_without_a_span_or_times_onset_passes_agree_as_before():
    for buf, ends in ((buffer(0.0), (1.5, 1.8)), (buffer(0.6), (None, None))):
        buf.insert(words("how do you"), onset=True, heard_end=ends[0])
        update = buf.insert(words("how do you marry"), onset=True, heard_end=ends[1])
        assert text(update.committed) == " how do you"


def test_regular_passes_need_no_span():
    buf = buffer(0.6)
    buf.insert(words("he might have been"), heard_end=5.0)
    update = buf.insert(words("he might have been made"), heard_end=5.3)
    assert text(update.committed) == " he might have been"


def test_words_held_back_by_the_span_are_committed_at_the_end():
    buf = buffer(0.6)
    buf.insert(words("how do you"), onset=True, heard_end=1.5)
    buf.insert(words("how do you marry"), onset=True, heard_end=1.8)
    assert text(buf.commit_tentative()) == " how do you marry"
