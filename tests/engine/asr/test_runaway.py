"""drop_runaway: how many repeats each phrase length keeps, and the speaking-rate cap."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.runaway import (
    _LOOP_WORDS,
    MAX_WORDS_PER_SECOND,
    _loop_length,
    _repeat_limit,
    drop_runaway,
)


def words(text: str, step: float = 0.1) -> list[Word]:
    return [Word(" " + t, i * step, i * step + step * 0.9) for i, t in enumerate(text.split())]


def kept(text: str, duration: float = 60.0) -> str:
    return " ".join(w.text.strip() for w in drop_runaway(words(text), duration))


def test_one_word_is_kept_four_times_in_a_row():
    assert kept("no " * 4) == "no no no no"
    assert kept("no " * 9 + "yes") == "no no no no yes"


def looped(phrase: str, times: int, pace: float = 0.1) -> list[Word]:
    """``phrase`` said once at a speaker's pace, then written ``times - 1`` more times at
    ``pace`` times the time, as a looping decoder squeezes its repeats."""
    first = words(phrase)
    out, t = list(first), first[-1].end
    step = 0.1 * pace
    for _ in range(times - 1):
        out += [Word(w.text, t + i * step, t + i * step + step * 0.9) for i, w in enumerate(first)]
        t = out[-1].end
    return out


def test_a_short_phrase_is_kept_twice_and_a_long_one_once():
    def said(ws: list[Word]) -> str:
        return " ".join(w.text.strip() for w in drop_runaway(ws, 60.0))

    assert said(looped("fail better", 5, pace=0.4)) == "fail better fail better"
    long = "he might even have been made amiable"
    assert said(looped(long, 3, pace=0.4)) == long
    # Speech that repeats itself takes as long each time: it stays.
    assert kept("fail better " * 5) == " ".join(["fail better"] * 5)
    assert kept(f"{long} {long} {long}") == f"{long} {long} {long}"


def test_words_past_a_speaking_rate_are_dropped():
    many = " ".join(f"w{i}" for i in range(40))
    assert len(drop_runaway(words(many, step=0.035), duration=1.0)) == int(MAX_WORDS_PER_SECOND) + 4
    # The rate counts written words: "ill" + "-disposed" is one.
    pieces = [
        Word(f" w{i}" if i % 2 == 0 else f"-p{i}", i * 0.05, i * 0.05 + 0.04) for i in range(40)
    ]
    assert len(drop_runaway(pieces, duration=2.0)) == 2 * (int(MAX_WORDS_PER_SECOND * 2) + 4)


def timed(spec: str) -> list[Word]:
    """``"He@0.00-0.14 was@0.14-0.14"``: words with their times; "-x" continues a word."""
    out = []
    for token in spec.split():
        text, times = token.split("@")
        start, end = (float(t) for t in times.split("-"))
        out.append(Word(text if text.startswith("-") else " " + text, start, end))
    return out


def test_text_squeezed_into_no_time_is_dropped():
    # Whisper given the sentence before as its prompt, copying it at the window's start and
    # continuing it past its audio at the end (recorded on a sentence said six times).
    prompt = "He was not an ill-disposed young man."
    squeezed = ["was", "not", "an", "ill", "-disposed", "young", "man."]
    copied = " ".join(["He@0.00-0.14"] + [f"{t}@0.14-0.14" for t in squeezed])
    heard = "He@0.66-1.06 was@1.06-1.22 not@1.22-1.50 an@1.50-1.98 ill@1.98-2.14"
    ahead = "-disposed@2.14-2.18 young@2.18-2.18 man.@2.18-2.18 He@2.18-2.18"
    kept = drop_runaway(timed(f"{copied} {heard} {ahead}"), duration=2.3, prompt=prompt)
    assert "".join(w.text for w in kept) == " He was not an ill-disposed"
    # The first word goes with a squeezed copy only if it is the prompt's too.
    kept = drop_runaway(timed(f"{copied} {heard}"), duration=2.3, prompt="She was not.")
    assert "".join(w.text for w in kept) == " He He was not an ill"
    # A written word goes whole: "ill" with its piece squeezed at the end.
    cut = timed("He@0.00-0.30 ill@0.30-0.50 -disposed@0.50-0.50 young@0.50-0.50")
    assert [w.text for w in drop_runaway(cut, duration=1.0)] == [" He"]
    # A word cut by the window's end is not heard either; one short word within speech is.
    kept = drop_runaway(timed("a@0.0-0.3 b@0.3-0.3 c@0.3-0.6 d@0.6-0.6"), duration=1.0)
    assert [w.text for w in kept] == [" a", " b", " c"]


def test_a_word_running_into_a_squeezed_copy_at_the_windows_end_is_dropped_with_it():
    # Recorded (Whisper base, 2x-slow replay of bench's `long` stream): the window ended at
    # 30.34 s; the decoder wrote its own sentence again, the first word stretched to the
    # window's end and the rest squeezed into no time. "And" was then committed at the
    # segment's end: a word nobody said.
    spoken = "for@12.46-12.72 them.@12.72-12.98 He@14.58-15.10 might@15.10-15.32 "
    spoken += "even@15.32-15.60 have@15.60-15.84 been@15.84-16.00"
    tail = "And@30.00-30.32 he@30.32-30.32 might@30.32-30.32 have@30.32-30.32 been@30.32-30.32"
    said = " for them. He might even have been"
    kept = drop_runaway(timed(f"{spoken} {tail}"), duration=30.34)
    assert "".join(w.text for w in kept) == said
    # A word ending well before the window's end keeps its place (the window goes on after it).
    kept = drop_runaway(timed(f"{spoken} {tail}"), duration=30.6)
    assert "".join(w.text for w in kept) == said + " And"
    # Squeezed new words are a phrase written ahead: the word before them is speech that the
    # window's end cut, and stays (it may be a segment's last word, heard by no other pass).
    ahead = "And@30.00-30.32 quick@30.32-30.32 fox@30.32-30.32"
    kept = drop_runaway(timed(f"{spoken} {ahead}"), duration=30.34)
    assert "".join(w.text for w in kept) == said + " And"


def test_an_invented_fragment_before_a_squeezed_loop_of_the_prompt_is_dropped():
    # Recorded (CT2_FORCE_CPU_ISA=GENERIC, bench/bench_commits.py on the two-cities clip): a
    # 0.86 s window of the clip's trailing sound after its last sentence; "nd" was committed.
    prompt = "In short, the period was so far like the present period. that some of its"
    looped = ["the", "period", "was", "so", "far", "like", "nd"] * 2
    loop = " ".join(f"{t}@0.84-0.84" for t in looped)
    kept = drop_runaway(timed(f"nd@0.00-0.84 {loop}"), duration=0.86, prompt=prompt)
    assert kept == []


def _plain_loop_length(norm: list[str], i: int, out_norm: list[str]) -> int:
    """The loop check as first written, every phrase length tried in full: the reference."""
    for n in range(_LOOP_WORDS, 0, -1):
        limit = _repeat_limit(n)
        if (
            len(out_norm) >= n * limit
            and norm[i : i + n] == out_norm[-n:]
            and all(
                out_norm[-n * (k + 1) : len(out_norm) - n * k] == out_norm[-n:]
                for k in range(limit)
            )
        ):
            return n
    return 0


_texts = st.lists(st.sampled_from(["fail", "better", "no", "again", ""]), max_size=20)


@settings(max_examples=400, deadline=None)
@given(
    phrase=st.lists(st.sampled_from(["fail", "better", "no", ""]), min_size=1, max_size=8),
    repeats=st.integers(0, 5),
    before=_texts,
    after=_texts,
    said=_texts,
)
def test_the_loop_check_finds_what_trying_every_length_in_full_finds(
    phrase, repeats, before, after, said
):
    """Hypotheses that end in a phrase said ``repeats`` times, heard again or not."""
    out_norm = before + phrase * repeats
    for norm in (phrase + after, said + phrase, said):
        for i in range(len(norm)):
            assert _loop_length(norm, i, out_norm) == _plain_loop_length(norm, i, out_norm)


def test_the_squeezed_one_of_a_phrase_written_twice_in_a_row_is_dropped():
    # Recorded (CT2_FORCE_CPU_ISA=AVX2, the dictation test's turn replayed on uneven steps):
    # the decoder wrote the next phrase twice over the one saying it heard, one saying with a
    # word in no time, and the segment's end committed "Fail again. Fail again. Fail better."
    before = "try@4.58-5.06 again.@5.06-5.34 "
    ahead = timed(before + "Fail@5.34-5.54 again.@5.54-5.54 Fail@5.96-6.84 again.@6.84-7.12")
    assert "".join(w.text for w in drop_runaway(ahead, 8.0)) == " try again. Fail again."
    behind = timed("Fail@7.64-8.22 better.@8.22-8.22 Fail@8.22-8.32 better.@8.32-8.60 x@9.0-9.3")
    assert [w.text for w in drop_runaway(behind, 10.0)] == [" Fail", " better.", " x"]
    # Said twice and heard twice (or both sayings squeezed alike): both stay.
    assert kept("fail better fail better") == "fail better fail better"
    both = timed("Fail@1.0-1.02 better.@1.02-1.3 Fail@1.3-1.31 better.@1.31-1.6 x@2.0-2.3")
    assert len(drop_runaway(both, 3.0)) == 5
    # One word said twice is a stutter, however it is aligned.
    stutter = timed("I@1.0-1.01 I@1.01-1.3 think@1.3-1.6")
    assert len(drop_runaway(stutter, 2.0)) == 3


def test_a_words_ending_written_again_as_a_sentence_is_dropped():
    # Recorded (whole-turn decode of the 10-minute stream's "ast-vm-nobox" prompt, native):
    echoed = timed("have@3.65-4.01 a@4.01-4.15 mailbox.@4.15-4.47 Box.@4.47-4.71")
    assert "".join(w.text for w in drop_runaway(echoed, 6.0)) == " have a mailbox."
    # Said again within the sentence, said after a pause, a word of its own: all stay.
    assert len(drop_runaway(timed("a@1.0-1.1 mailbox,@1.1-1.6 box@1.6-1.9"), 3.0)) == 3
    assert len(drop_runaway(timed("mailbox.@1.0-1.5 Box.@2.0-2.3"), 3.0)) == 2
    assert len(drop_runaway(timed("Ox.@1.0-1.2 Ox.@1.2-1.4 it@1.4-1.6"), 3.0)) == 3
    assert len(drop_runaway(timed("go.@1.0-1.2 Go.@1.2-1.4"), 3.0)) == 2
