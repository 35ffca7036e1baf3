"""The typing queue: committed words typed once, never retracted, in order, spaced per turn."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from desktop_rt.dictation.typing_queue import TypingQueue
from desktop_rt.live.transcript_recorder import CaptionTurn


def turn(item: str, committed: str, tentative: str = "", final: bool = False, **kw) -> CaptionTurn:
    return CaptionTurn(item, 0, committed, tentative, final, **kw)


def test_growing_commits_are_typed_once_each():
    queue = TypingQueue()
    queue.begin()
    typed = [
        queue.update(turn("a", "", "Hello")),
        queue.update(turn("a", "Hello", " world")),
        queue.update(turn("a", "Hello world", "")),
        queue.update(turn("a", "Hello world")),  # the same state again: nothing new
    ]
    queue.release()
    typed.append(queue.update(turn("a", "Hello world.", final=True)))
    assert typed == ["", "Hello", " world", "", "."]
    assert not queue.claiming


def test_turns_are_spaced_and_the_first_has_no_leading_space():
    queue = TypingQueue()
    out = []
    for item, text in (("a", "One."), ("b", " Two."), ("c", "Three")):
        queue.begin()
        queue.release()
        assert queue.claiming  # the release's own turn may appear only when it is committed
        out.append(queue.update(turn(item, text, final=True)))
    assert out == ["One.", " Two.", " Three"]


def test_a_changed_earlier_word_is_never_retracted_nor_typed_again():
    queue = TypingQueue()
    queue.begin()
    first = queue.update(turn("a", "Hello wrld"))
    later = queue.update(turn("a", "Hello world and more"))
    assert (first, later) == ("Hello wrld", " and more")
    assert queue.update(turn("a", "Hello", final=True)) == ""  # shorter: nothing retracted


def test_turns_outside_a_claim_are_never_typed():
    queue = TypingQueue()
    assert queue.update(turn("window", "typed in the window itself")) == ""
    queue.begin()
    assert queue.update(turn("window", "typed in the window itself and more")) == ""
    assert queue.update(turn("dictated", "Dictated")) == "Dictated"


def test_the_claim_ends_when_the_released_turns_are_final():
    queue = TypingQueue()
    queue.begin()
    queue.update(turn("a", "Spoken", " while held"))
    queue.release()
    assert queue.claiming and queue.tentative == "while held"
    assert queue.update(turn("a", "Spoken while held", final=True)) == " while held"
    assert not queue.claiming and queue.tentative == ""
    assert queue.update(turn("next", "hands-free turn after the release")) == ""


def test_a_removed_turn_ends_the_claim_and_cancel_claims_nothing_more():
    queue = TypingQueue()
    queue.begin()
    queue.update(turn("a", "", "noise"))
    queue.release()
    queue.update(turn("a", "", removed=True))
    assert not queue.claiming
    queue.begin()
    queue.cancel()  # the window's own talk key started a turn
    assert queue.update(turn("b", "not dictation")) == ""


def test_a_tap_without_words_leaves_the_next_turn_claimed_until_cancelled():
    queue = TypingQueue()
    queue.begin()
    queue.release()
    assert queue.claiming
    queue.cancel()
    assert queue.update(turn("b", "window turn")) == ""


words = st.lists(st.sampled_from(["alpha", "beta", "gamma,", "delta.", "é", "ж"]), max_size=8)


@given(st.lists(st.tuples(words, st.integers(0, 4)), min_size=1, max_size=5))
def test_typed_text_is_every_turn_once_in_order(turns):
    """Whatever the growth steps, the typed text is the turns' final texts joined by spaces."""
    queue = TypingQueue()
    pieces, finals = [], []
    for index, (turn_words, steps) in enumerate(turns):
        queue.begin()
        item = f"item{index}"
        for cut in sorted({len(turn_words) * s // (steps + 1) for s in range(steps + 1)}):
            pieces.append(queue.update(turn(item, " " + " ".join(turn_words[:cut]))))
        queue.release()
        final = " ".join(turn_words)
        pieces.append(queue.update(turn(item, final, final=True)))
        if final:
            finals.append(final)
    assert "".join(pieces) == " ".join(finals)


def test_at_turn_end_a_turn_is_typed_once_whole_when_final():
    queue = TypingQueue(at_turn_end=True)
    queue.begin()
    assert queue.update(turn("a", "", "Ever")) == ""
    assert queue.update(turn("a", "Ever tried", " ever")) == ""
    assert queue.tentative == "Ever tried ever"  # the preview shows the turn's words meanwhile
    queue.release()
    assert queue.claiming
    # the completed text, heard whole, differs from the streamed words: it alone is typed
    assert queue.update(turn("a", "Ever tried. Ever failed.", final=True)) == (
        "Ever tried. Ever failed."
    )
    assert not queue.claiming and queue.tentative == ""
    assert queue.update(turn("a", "Ever tried. Ever failed.", final=True)) == ""  # once
    queue.begin()
    queue.release()
    assert queue.update(turn("b", "No matter.", final=True)) == " No matter."


def test_as_words_come_a_revised_final_text_types_only_words_past_those_typed():
    queue = TypingQueue()
    queue.begin()
    assert queue.update(turn("a", "He was not an ill disposed")) == "He was not an ill disposed"
    queue.release()
    final = turn("a", "He was not an ill-disposed young man.", final=True)
    assert queue.update(final) == " man."  # never retracted: only words past the count typed


def test_at_turn_end_a_cleared_turn_ends_the_claim_untyped():
    queue = TypingQueue(at_turn_end=True)
    queue.begin()
    assert queue.update(turn("a", "", "Um")) == ""
    queue.release()
    assert queue.update(turn("a", "", removed=True)) == ""
    assert not queue.claiming
