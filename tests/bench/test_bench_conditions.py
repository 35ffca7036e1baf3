"""bench/bench_conditions.py: how a run's text is scored for dropped and repeated sentences,
and which command lines it refuses."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import bench_conditions as BC  # noqa: E402

UTTERANCES = [
    "It was the season of light.",
    "It was the season of darkness.",
    "We were all going direct to heaven.",
]


def test_a_faithful_transcript_drops_and_repeats_nothing():
    text = "it was the season of Light, it was the season of Darkness; we were all going direct to Heaven"
    assert BC.utterance_errors(UTTERANCES, text) == {"dropped": 0, "repeated": 0}


def test_a_sentence_said_twice_counts_its_phrases_once_more_and_a_missing_one_is_dropped():
    text = "It was the season of light. It was the season of light. It was the season of darkness."
    errors = BC.utterance_errors(UTTERANCES, text)
    assert errors["dropped"] == 1  # "we were all going direct to heaven"
    # Once too often: "it was the", "was the season", "the season of" (twice in the reference,
    # three times here), "season of light", "of light it", "light it was".
    assert errors["repeated"] == 6


def test_misheard_and_invented_words_are_not_repeats_but_word_errors():
    assert BC.utterance_errors(UTTERANCES[:1], "it was the reason of night")["repeated"] == 0
    stutter = BC.utterance_errors(["we had everything before the war"], "we had the the the the")
    assert stutter == {"dropped": 0, "repeated": 0}  # "the the the" is not the reference's: WER
    assert BC.utterance_errors(UTTERANCES[2:], "")["dropped"] == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["--conditions", "native,turbo"],
        ["--systems", "desktop-rt,other"],
        ["--slow-factor", "0.5"],
        ["--speed", "0"],
    ],
)
def test_unknown_conditions_systems_and_bad_factors_are_refused(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        BC.parse_args(argv)
    assert exc.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_the_slow_machine_wrapper_drains_lazy_segments_inside_the_call():
    drained = []

    def lazy_transcribe():
        def segments():
            drained.append("segment")
            yield "segment"

        return segments(), "info"

    segments, info = BC.slowed(lazy_transcribe, factor=1.0, eager=True)()
    assert drained == ["segment"] and segments == ["segment"] and info == "info"
