"""LanguageTracker: a set language always; else detect, keep, and confirm once per segment."""

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
    tracker.learn(None, 2.0)
    assert tracker.for_pass(2.6) is None  # no answer: detect again


def test_setting_a_language_forgets_the_detected_one():
    tracker = LanguageTracker(None, min_seconds=2.0)
    tracker.learn(("de", 0.9), 2.4)
    tracker.set("fr")
    assert tracker.for_pass(3.0) == "fr"
    tracker.set("")
    assert tracker.for_pass(3.0) is None
