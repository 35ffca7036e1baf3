"""HypothesisBuffer: LocalAgreement on scripted hypotheses, and its invariant as properties."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.agreement import HypothesisBuffer, OnsetRule, StreamUpdate, whole_words
from desktop_rt.engine.asr.spelling import normalize_word


def words(text: str, start: float = 0.0, step: float = 0.3, p: float = 1.0) -> list[Word]:
    """Space-separated words ``step`` apart from ``start``; "+x" continues the word before."""
    out: list[Word] = []
    for i, token in enumerate(text.split()):
        spelled = token[1:] if token.startswith("+") else " " + token
        t = start + i * step
        out.append(Word(spelled, t, t + step * 0.9, p))
    return out


def texts(ws) -> list[str]:
    return [w.text for w in ws]


# -- plain unit tests ---------------------------------------------------------------------------


def test_two_hypotheses_commit_their_common_prefix_and_the_rest_is_tentative():
    buffer = HypothesisBuffer()
    first = buffer.insert(words("had he married a"))
    assert first == StreamUpdate((), tuple(words("had he married a")))
    second = buffer.insert(words("had he married another woman"))
    assert second.committed_text == " had he married"
    assert second.tentative_text == " another woman"
    assert buffer.tentative == second.tentative
    assert buffer.last_committed_end == words("had he married")[-1].end


def test_agreement_ignores_case_and_punctuation():
    buffer = HypothesisBuffer()
    buffer.insert(words("And Mister John, said"))
    update = buffer.insert(words("and mister John said it"))
    assert texts(update.committed) == [" and", " mister", " John", " said"]


def test_half_a_written_word_is_not_committed_alone():
    buffer = HypothesisBuffer()
    buffer.insert(words("to be ild +-sp"))
    update = buffer.insert(words("to be ild +-sposed."))
    assert update.committed_text == " to be"
    assert update.tentative_text == " ild-sposed."
    assert whole_words(words("ill +-disposed"), 1) == 0


def test_words_heard_again_after_the_commit_point_are_dropped():
    buffer = HypothesisBuffer()
    buffer.insert(words("one two three"))
    buffer.insert(words("one two three four"))  # commits one two three
    update = buffer.insert(words("one two three four five"))
    assert update.committed_text == " four"  # "one two three" lay before the commit point
    assert update.tentative_text == " five"


def test_a_repeat_of_the_committed_tail_is_dropped_near_the_commit_point_only():
    buffer = HypothesisBuffer()
    buffer.insert(words("he was"))
    buffer.insert(words("he was"))
    # Heard again right after the commit point (times shifted): the same words.
    assert buffer.fresh(words("he was not", start=0.6)) == words("not", start=1.2)
    # Two seconds later it is speech that really repeats.
    later = words("he was not", start=2.6)
    assert buffer.fresh(later) == later


def test_an_onset_needs_sure_words_and_a_surer_newest_hypothesis():
    rule = OnsetRule(hypotheses=2, min_probability=0.5, latest_probability=0.6)
    unsure = HypothesisBuffer(onset_rule=rule)
    unsure.insert(words("how do you", p=0.45), onset=True)
    assert unsure.insert(words("how do you", p=0.9), onset=True).committed == ()
    newest_unsure = HypothesisBuffer(onset_rule=rule)
    newest_unsure.insert(words("how do you", p=0.9), onset=True)
    assert newest_unsure.insert(words("how do you", p=0.55), onset=True).committed == ()
    sure = HypothesisBuffer(onset_rule=rule)
    sure.insert(words("how do you", p=0.55), onset=True)
    assert sure.insert(words("how do you", p=0.65), onset=True).committed_text == " how do you"


def test_the_hypothesis_after_an_onset_one_is_held_to_the_onset_rule():
    buffer = HypothesisBuffer(onset_rule=OnsetRule(hypotheses=3))
    buffer.insert(words("a b c"), onset=True)
    assert buffer.insert(words("a b c")).committed == ()  # needs three: only two so far
    assert buffer.insert(words("a b c")).committed_text == " a b c"


def test_more_onset_hypotheses_when_asked_for():
    buffer = HypothesisBuffer(onset_rule=OnsetRule(hypotheses=4))
    for _ in range(3):
        assert buffer.insert(words("a b c"), onset=True).committed == ()
    assert buffer.insert(words("a b c"), onset=True).committed_text == " a b c"


def test_older_hypotheses_are_compared_from_the_commit_point_on():
    buffer = HypothesisBuffer(onset_rule=OnsetRule(hypotheses=3))
    buffer.insert(words("a b x"), onset=True)
    buffer.insert(words("a b y"), onset=True)
    assert buffer.insert(words("a b z"), onset=True).committed_text == " a b"
    assert [texts(h) for h, _ in buffer.history] == [[" x"], [" y"], [" z"]]
    assert buffer.insert(words("a b z w"), onset=True).committed == ()
    assert buffer.insert(words("a b z w"), onset=True).committed_text == " z"


def test_commit_and_commit_tentative_end_the_segment():
    buffer = HypothesisBuffer()
    buffer.insert(words("one two three"))
    assert texts(buffer.commit_tentative()) == [" one", " two", " three"]
    assert buffer.tentative == () and buffer.history == []
    # A final pass over a window that still holds them: only the new words are committed.
    assert texts(buffer.commit(words("one two three four five"))) == [" four", " five"]
    assert texts(buffer.committed) == [" one", " two", " three", " four", " five"]


def test_with_a_forced_prefix_no_word_is_dropped_by_its_time():
    buffer = HypothesisBuffer(forces_prefix=True)
    buffer.insert(words("one two"))
    buffer.insert(words("one two"))
    # The backend returns only the words after the forced ones; its times are estimates.
    after = words("three four", start=0.2)
    assert buffer.fresh(after) == after


def test_commit_settled_commits_the_whole_words_that_ended_by_the_horizon():
    buffer = HypothesisBuffer()
    buffer.insert(words("a b ill +-disposed c"))
    forced = buffer.commit_settled(horizon=0.9)  # "-disposed" ends at 1.17
    assert texts(forced) == [" a", " b"]
    assert texts(buffer.tentative) == [" ill", "-disposed", " c"]
    assert buffer.history == [(list(buffer.tentative), False)]


def test_a_pass_that_hears_committed_words_as_other_words_is_noticed():
    buffer = HypothesisBuffer()
    buffer.insert(words("an ill +-disposed man"))
    buffer.insert(words("an ill +-disposed man"))
    everywhere = lambda w: True  # noqa: E731
    assert not buffer.mishears_committed(words("an ill +-disposed man"), everywhere)
    assert not buffer.mishears_committed(words("an ill-disposed man"), everywhere)  # joined
    assert buffer.mishears_committed(words("an ild +-sposed man"), everywhere)
    assert not buffer.mishears_committed(words("an ild +-sposed man"), lambda w: False)
    # Words only one side has, at the edges of the committed stretch, do not count.
    assert not buffer.mishears_committed(words("ill +-disposed man"), everywhere)


# -- the invariant, as properties ----------------------------------------------------------------


@dataclass
class Truth:
    """A stream of unique words, some written in two pieces ("w3" + "-p3"), each piece over
    0.1 s long (the slack by which a word heard again may start late)."""

    words: list[Word]

    def heard(self, first: int, until: float) -> list[Word]:
        return [w for w in self.words[first:] if w.end <= until]


@st.composite
def truths(draw: st.DrawFn) -> Truth:
    out: list[Word] = []
    t = 0.0
    for i in range(draw(st.integers(1, 24))):
        t += draw(st.sampled_from([0.0, 0.05, 0.1, 0.4, 1.5]))
        length = draw(st.sampled_from([0.25, 0.3, 0.5]))
        sentence = "." if draw(st.booleans()) and i % 3 == 2 else ""
        if draw(st.integers(0, 5)) == 0:  # a word in two pieces
            out.append(Word(f" w{i}", t, t + length / 2))
            out.append(Word(f"-p{i}{sentence}", t + length / 2, t + length))
        else:
            out.append(Word(f" w{i}{sentence}", t, t + length))
        t += length
    return Truth(out)


def disguise(draw: st.DrawFn, heard: list[Word], tag: int) -> list[Word]:
    """``heard`` as a pass gives it: other spellings, unsure words, and a tail it guesses at."""
    out = []
    for w in heard:
        text = w.text
        if draw(st.integers(0, 4)) == 0:
            text = text.upper() + ","  # the same word to agreement
        out.append(Word(text, w.start, w.end, draw(st.sampled_from([0.3, 0.55, 0.7, 1.0]))))
    guessed = draw(st.integers(0, min(3, len(out))))
    for j in range(len(out) - guessed, len(out)):
        w = out[j]
        lead = " " if w.text.startswith(" ") else "-"
        out[j] = Word(f"{lead}guess{tag}x{j}", w.start, w.end, w.probability)  # never agrees
    return out


@settings(max_examples=300, deadline=None)
@given(truth=truths(), data=st.data(), forced=st.booleans(), agreement=st.integers(2, 4))
def test_nothing_is_emitted_twice_and_nothing_heard_is_lost(truth, data, forced, agreement):
    buffer = HypothesisBuffer(forces_prefix=forced, onset_rule=OnsetRule(hypotheses=agreement))
    committed: list[Word] = []
    end = truth.words[-1].end
    until = 0.0
    previous: list[Word] = []
    for tag in range(data.draw(st.integers(0, 12))):
        until = min(end, until + data.draw(st.sampled_from([0.0, 0.3, 0.6, 2.0])))
        # A window starts at or before the commit point; a forced prefix starts at it.
        first = len(committed) if forced else data.draw(st.integers(0, len(committed)))
        hypothesis = disguise(data.draw, truth.heard(first, until), tag)
        expected = buffer.fresh(hypothesis)
        update = buffer.insert(hypothesis, onset=data.draw(st.booleans()))
        # Nothing heard lost: every fresh word is committed now or tentative.
        assert list(update.committed) + list(update.tentative) == expected
        # LocalAgreement: a committed word was in the hypothesis before too.
        assert {normalize_word(w.text) for w in update.committed} <= {
            normalize_word(w.text) for w in previous
        }
        # A written word is committed whole.
        if update.committed and update.tentative:
            assert update.tentative[0].text.startswith(" ")
        committed += update.committed
        previous = hypothesis
    first = len(committed) if forced else data.draw(st.integers(0, len(committed)))
    committed += buffer.commit(truth.heard(first, end))
    # Nothing emitted twice, nothing lost: the committed words are the stream's, once each.
    assert [normalize_word(w.text) for w in committed] == [
        normalize_word(w.text) for w in truth.words
    ]
    assert [w.start for w in committed] == [w.start for w in truth.words]


@settings(max_examples=200, deadline=None)
@given(truth=truths(), data=st.data())
def test_a_forced_commit_of_settled_words_loses_and_repeats_nothing(truth, data):
    buffer = HypothesisBuffer()
    emitted: list[Word] = []
    for tag in range(data.draw(st.integers(1, 8))):
        until = data.draw(st.floats(0.0, truth.words[-1].end))
        first = data.draw(st.integers(0, len(emitted)))
        update = buffer.insert(disguise(data.draw, truth.heard(first, until), tag))
        emitted += update.committed
        before = list(buffer.tentative)
        forced = buffer.commit_settled(data.draw(st.floats(0.0, truth.words[-1].end)))
        # Every tentative word is committed now or still tentative (older hypotheses may add
        # words they heard to what is committed).
        now = {normalize_word(w.text) for w in forced + list(buffer.tentative)}
        assert {normalize_word(w.text) for w in before} <= now
        emitted += forced
    starts = [w.start for w in emitted]
    assert starts == sorted(set(starts))  # in stream order, none twice
