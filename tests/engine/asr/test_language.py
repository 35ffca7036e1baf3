"""LanguageTracker: a set language always; else detect, keep, and confirm once per segment;
a turn decoded whole gets the stream's language."""

from __future__ import annotations

from desktop_rt.engine.asr.language import LanguageTracker


def test_a_set_language_is_always_given():
    tracker = LanguageTracker("en", min_seconds=2.0)
    assert tracker.for_pass(0.9) == "en" and tracker.for_pass(5.0) == "en"
    tracker.learn(("de", 0.99), 5.0)
    assert tracker.for_pass(5.0) == "en"


def test_a_sure_detection_on_a_long_window_is_kept_and_confirmed_per_segment():
    tracker = LanguageTracker(None, min_seconds=2.0)
    assert tracker.for_pass(0.9) is None  # nothing detected yet: detect
    tracker.learn(("de", 0.9), 0.9)  # too short a window to trust
    assert tracker.for_pass(1.5) is None
    tracker.learn(("de", 0.5), 2.4)  # not sure enough
    assert tracker.for_pass(2.4) is None
    tracker.learn(("de", 0.9), 2.4)
    assert tracker.for_pass(3.0) == "de"
    tracker.new_segment()
    assert tracker.for_pass(0.9) == "de"  # a segment's onset uses the stream's language
    assert tracker.for_pass(2.0) is None  # its first long window detects again
    tracker.learn(("de", 0.95), 2.0)
    assert tracker.for_pass(2.6) == "de"  # confirmed for the rest of the segment


def test_an_unsure_check_or_one_sure_of_another_once_keeps_the_streams_language():
    tracker = LanguageTracker(None, min_seconds=2.0)
    tracker.learn(("en", 0.9), 2.4)
    tracker.new_segment()
    assert tracker.for_pass(2.0) is None
    tracker.learn(("zh", 0.4), 2.0)  # a noisy prompt, half heard as another language
    assert tracker.for_pass(2.6) == "en" and tracker.for_pass(8.0) == "en"
    tracker.new_segment()
    tracker.learn(("zh", 0.65), 2.0)  # sure of another, once: kept
    assert tracker.for_pass(2.6) == "en" and tracker.for_turn() == "en"
    tracker.new_segment()
    tracker.learn(("en", 0.9), 2.0)
    tracker.new_segment()
    tracker.learn(("de", 0.9), 2.0)  # not the same other one twice in a row: kept
    assert tracker.for_turn() == "en"
    tracker.new_segment()
    tracker.learn(("de", 0.9), 2.0)  # the same other one two segments in a row: changed
    assert tracker.for_pass(2.6) == "de" and tracker.for_turn() == "de"


def test_a_turn_decoded_whole_gets_the_streams_language():
    tracker = LanguageTracker(None, min_seconds=2.0)
    assert tracker.for_turn() is None  # nothing detected yet: the decode detects
    tracker.learn(("en", 0.9), 2.4)
    tracker.new_segment()  # a turn ends with its segment: no check of its own
    assert tracker.for_turn() == "en"
    tracker.set("fr")
    assert tracker.for_turn() == "fr"


def test_setting_a_language_forgets_the_detected_one():
    tracker = LanguageTracker(None, min_seconds=2.0)
    tracker.learn(("de", 0.9), 2.4)
    tracker.set("fr")
    assert tracker.for_pass(3.0) == "fr"
    tracker.set("")
    assert tracker.for_pass(3.0) is None
