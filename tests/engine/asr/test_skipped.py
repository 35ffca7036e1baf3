"""restore_skipped: a stretch a segment's last pass jumped, put back from an earlier pass."""

from __future__ import annotations

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.agreement import HypothesisBuffer
from desktop_rt.engine.asr.skipped import restore_skipped


def timed(*spec: tuple[str, float, float]) -> list[Word]:
    return [Word(" " + text, start, end) for text, start, end in spec]


def texts(ws) -> str:
    return "".join(w.text for w in ws).strip()


# The 10 dB stream at 368.9 s: the last pass wrote "administrators" over the 1.86 s in which an
# earlier pass heard "is locked only conference administrators".
EARLIER = timed(
    ("is", 368.91, 369.13),
    ("locked", 369.13, 369.47),
    ("only", 369.47, 370.09),
    ("conference", 370.11, 370.57),
    ("administrators", 370.59, 371.41),
    ("can", 371.41, 371.75),
    ("join.", 371.75, 372.05),
)
LAST = timed(("administrators", 368.91, 370.77), ("can", 370.77, 371.75), ("join.", 371.75, 372.05))


def test_a_jumped_stretch_is_put_back_before_the_word_stretched_over_it():
    restored = restore_skipped(LAST, [EARLIER])
    assert texts(restored) == "is locked only conference administrators can join."
    assert all(a.end <= b.start + 1e-9 for a, b in zip(restored, restored[1:], strict=False))
    assert restored[0].start >= 368.91 and restored[-1].end == 372.05


def test_the_endpoint_commits_the_stretch_the_last_pass_jumped():
    buffer = HypothesisBuffer()
    buffer.insert(
        timed(("when", 367.73, 368.39), ("a", 368.39, 368.51), ("conference", 368.51, 368.91))
        + EARLIER
    )
    committed = buffer.commit(
        timed(("when", 367.73, 368.39), ("a", 368.39, 368.51), ("conference", 368.51, 368.91))
        + LAST
    )
    assert texts(committed) == (
        "when a conference is locked only conference administrators can join."
    )


def test_words_the_last_pass_wrote_otherwise_or_left_to_the_words_before_stay_as_it_wrote_them():
    # Other words for the same stretch (a replacement), and an earlier extra word in time the
    # last pass gives to the word before it (no skip: "the the" heard once).
    other = timed(("please", 4.02, 4.62), ("enter", 4.62, 4.88), ("your", 4.88, 5.12))
    earlier = timed(
        ("please", 4.02, 4.62), ("add", 4.62, 4.84), ("to", 4.84, 4.98), ("your", 4.98, 5.12)
    )
    assert texts(restore_skipped(other, [earlier])) == "please enter your"
    two = timed(("please", 4.02, 4.62), ("add", 4.62, 4.72), ("to", 4.72, 4.8), ("the", 4.8, 4.88))
    assert texts(restore_skipped(other, [[*two, *timed(("your", 4.88, 5.12))]])) == (
        "please enter your"
    )
    once = timed(("to", 1.0, 1.2), ("the", 1.2, 1.6), ("store", 1.6, 2.0))
    twice = timed(("to", 1.0, 1.2), ("the", 1.2, 1.35), ("the", 1.35, 1.5), ("store", 1.6, 2.0))
    assert texts(restore_skipped(once, [twice])) == "to the store"


def test_a_lone_word_only_an_earlier_pass_wrote_is_not_put_back():
    # The 10 dB stream at 417 s: an older pass's "that do your" for "enter your".
    last = timed(("Please", 417.04, 417.66), ("that", 417.66, 417.86), ("your", 417.86, 418.08))
    older = timed(
        ("Please", 417.04, 417.64),
        ("that", 417.64, 417.86),
        ("do", 417.86, 418.0),
        ("your", 418.0, 418.14),
    )
    assert texts(restore_skipped(last, [older])) == "Please that your"


def test_a_split_written_word_is_not_a_skip():
    last = timed(("administrators", 1.0, 1.8))
    earlier = [Word(" admin", 1.0, 1.3), Word("istrators", 1.3, 1.8)]
    assert texts(restore_skipped(last, [earlier])) == "administrators"
