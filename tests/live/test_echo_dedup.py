"""The echo guard: microphone words that the system stream said just before or after are dropped."""

from __future__ import annotations

from desktop_rt.engine.protocol.events import (
    InputAudioBufferCommitted,
    InputAudioBufferSpeechStarted,
    TranscriptionCompleted,
    TranscriptionDelta,
    TranscriptionTentative,
)
from desktop_rt.engine.protocol.translation import TranslationCompleted, TranslationDelta
from desktop_rt.live.echo_dedup import EchoDeduplicator, normalize


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def guard(**kw) -> tuple[EchoDeduplicator, Clock]:
    clock = Clock()
    return EchoDeduplicator(hold_seconds=2.0, window_seconds=8.0, clock=clock, **kw), clock


def system(d: EchoDeduplicator, text: str) -> None:
    d.reference(TranscriptionDelta("item_sys", text))


def mic(d: EchoDeduplicator, text: str, item: str = "item_mic") -> list[object]:
    return d.mic_event(TranscriptionDelta(item, text))


def texts(events: list[object]) -> list[str]:
    return [e.delta for e in events if isinstance(e, TranscriptionDelta)]


def test_words_are_compared_without_case_or_punctuation():
    assert normalize(" Hello,") == "hello" and normalize("Don’t") == "don't"
    assert normalize("—") == ""


def test_an_echo_heard_after_the_system_stream_said_it_is_dropped():
    d, clock = guard()
    system(d, " The quick brown fox jumps.")
    clock.now += 1
    assert mic(d, " quick brown fox") == []  # held
    clock.now += 2
    [released] = d.tick()
    assert isinstance(released, TranscriptionDelta) and released.delta == ""
    assert d.dropped_words == 3


def test_an_echo_heard_before_the_system_stream_said_it_is_dropped_too():
    d, clock = guard()
    assert mic(d, " quick brown fox") == []
    clock.now += 1
    system(d, " The quick brown fox jumps.")
    clock.now += 1.5
    assert texts(d.tick()) == [""]


def test_the_users_own_words_are_kept_and_spacing_survives():
    d, clock = guard()
    system(d, " The quick brown fox jumps.")
    mic(d, " I think the fox is quick")
    clock.now += 2
    assert texts(d.tick()) == [" I think the fox is quick"]  # no pair of it was said
    mic(d, " and brown fox jumps over me")
    clock.now += 2
    assert texts(d.tick()) == [" and over me"]


def test_pairs_span_deltas_of_one_item():
    d, clock = guard()
    system(d, " the quick brown fox")
    mic(d, " hello quick")
    mic(d, " brown")
    clock.now += 2
    assert texts(d.tick()) == [" hello", ""]


def test_words_said_long_before_are_not_echo():
    d, clock = guard()
    system(d, " the quick brown fox")
    clock.now += 20
    mic(d, " the quick brown fox")
    clock.now += 2
    assert texts(d.tick()) == [" the quick brown fox"]


def test_a_lone_word_matches_when_its_item_has_no_other():
    d, clock = guard()
    system(d, " Absolutely.")
    mic(d, " absolutely", item="item_a")
    clock.now += 2
    assert texts(d.tick()) == [""]


def test_events_come_out_in_order_and_completed_carries_the_kept_words():
    d, clock = guard()
    system(d, " brown fox jumps")
    mic(d, " Hello there")
    d.mic_event(TranscriptionTentative("item_mic", " brown fox"))
    mic(d, " brown fox jumps")
    d.mic_event(InputAudioBufferCommitted("item_mic", None))
    d.mic_event(TranscriptionCompleted("item_mic", " Hello there brown fox jumps", 3.0))
    clock.now += 1
    assert d.tick() == []
    clock.now += 1.5
    out = d.tick()
    kinds = [type(e).__name__ for e in out]
    assert kinds == [
        "TranscriptionDelta",
        "TranscriptionTentative",
        "TranscriptionDelta",
        "InputAudioBufferCommitted",
        "TranscriptionCompleted",
    ]
    assert out[1].text == ""
    assert out[-1].transcript == " Hello there"


def test_flush_releases_everything_held():
    d, _ = guard()
    mic(d, " one two")
    mic(d, " three")
    assert texts(d.flush()) == [" one two", " three"]
    assert d.flush() == []


def test_with_no_system_words_nothing_is_dropped():
    d, clock = guard()
    mic(d, " anything at all")
    clock.now += 2
    assert texts(d.tick()) == [" anything at all"]
    assert d.dropped_words == 0


def test_hyphenated_words_match_their_parts():
    d, clock = guard()
    system(d, " rather cold-hearted and rather selfish")
    mic(d, " a hearted and kind")
    mic(d, " so cold-hearted, yes", item="item_b")
    clock.now += 2
    assert texts(d.tick()) == [" a kind", " so yes"]


def test_the_system_streams_tentative_words_count_as_said():
    d, clock = guard()
    d.reference(TranscriptionTentative("item_sys", " unless to be rather"))
    d.reference(TranscriptionTentative("item_sys", " unless to be rather cold"))
    mic(d, " unless to be")
    mic(d, " rather", item="item_b")
    clock.now += 2
    assert texts(d.tick()) == ["", ""]


def test_no_pair_is_made_across_two_hypotheses():
    d, clock = guard()
    d.reference(TranscriptionTentative("item_sys", " alpha beta"))
    d.reference(TranscriptionTentative("item_sys", " gamma delta"))
    mic(d, " beta gamma")
    clock.now += 2
    assert texts(d.tick()) == [" beta gamma"]


def test_microphone_words_wait_while_the_system_stream_has_a_turn_open():
    d, clock = guard(max_hold_seconds=6.0)
    d.reference(InputAudioBufferSpeechStarted("item_sys", 0))
    mic(d, " the quick brown fox")
    clock.now += 3
    assert d.tick() == []  # the system's words for this sound may still come
    system(d, " the quick brown")
    d.reference(TranscriptionCompleted("item_sys", " the quick brown", 2.0))
    assert texts(d.tick()) == [" fox"]


def test_a_turn_that_never_completes_holds_words_no_longer_than_the_limit():
    d, clock = guard(max_hold_seconds=6.0)
    d.reference(InputAudioBufferSpeechStarted("item_sys", 0))
    mic(d, " hello there")
    clock.now += 5
    assert d.tick() == []
    clock.now += 1
    assert texts(d.tick()) == [" hello there"]


def test_a_system_turn_left_open_stops_holding_words_after_a_while():
    d, clock = guard(max_hold_seconds=6.0, max_open_seconds=30.0)
    d.reference(InputAudioBufferSpeechStarted("item_sys", 0))  # never completed
    clock.now += 31
    mic(d, " hello there")
    clock.now += 2
    assert texts(d.tick()) == [" hello there"]  # the plain hold again


def test_an_item_that_was_all_echo_gets_no_english_line_and_others_keep_theirs():
    d, clock = guard()
    system(d, " bonjour à tous")
    mic(d, " bonjour à tous", item="item_echo")
    d.mic_event(TranslationDelta("item_echo", " hello everyone"))
    mic(d, " merci beaucoup", item="item_mine")
    d.mic_event(TranslationCompleted("item_mine", "thank you very much"))
    clock.now += 2
    out = d.tick()
    english = [e for e in out if isinstance(e, TranslationDelta | TranslationCompleted)]
    assert english[0].delta == "" and english[1].transcript == "thank you very much"


def test_a_pair_the_system_stream_committed_in_two_deltas_is_a_pair():
    """bench_echo 2026-12-01 21:09: the system committed "... woman he", then (after a
    tentative " might have") " might have been made": "he might" was never one hypothesis, so
    the microphone's echo "man, he might fail" got through. An item's words pair across its
    deltas, and its last committed word pairs with the tentative words that continue it."""
    d, clock = guard()
    d.reference(InputAudioBufferSpeechStarted("item_sys", 0))
    system(d, " Had he married a more amiable woman he")
    d.reference(TranscriptionTentative("item_sys", " might have"))
    mic(d, " ill-disposed young man, he might", item="item_a")
    system(d, " might have been made")
    mic(d, " he might", item="item_b")  # alone in its item, after the committed pair
    d.reference(TranscriptionCompleted("item_sys", " Had he … made", 5.0))
    clock.now += 2
    assert texts(d.tick()) == [" ill-disposed young man,", ""]


def test_an_items_last_committed_word_pairs_only_with_its_own_tentative_words():
    d, clock = guard()
    system(d, " alpha beta")
    d.reference(TranscriptionTentative("item_other", " gamma delta"))  # another item
    d.reference(TranscriptionTentative("item_sys", " epsilon"))
    mic(d, " beta gamma now")
    mic(d, " beta epsilon now", item="item_b")
    clock.now += 2
    assert texts(d.tick()) == [" beta gamma now", " now"]
