"""bench/rescore.py: saved reports re-scored under our normaliser and OpenAI's, and a streamed
transcript's errors that offline's has not, by kind, on small hand-made reports (no model)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jiwer
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path[:0] = [str(BENCH), str(BENCH / "data")]
import _common as C  # noqa: E402
import rescore as R  # noqa: E402

REFERENCE = "Press one for twenty five dollars. It was the colour of heaven, and I am here."
OFFLINE_TEXT = " Press one for twenty five dollars. It was the colour of heaven, and I am here."
# Numbers as digits, American spelling, a contraction, and one real misrecognition ("a").
STREAMED_TEXT = " Press 1 for $25. It was a color of heaven, and I'm here."


def run(text: str) -> dict:
    """A run as the benchmarks save it: its raw words, each with its leading space (timing
    fields left out)."""
    return {"run": 1, "raw": {"words": [{"text": f" {w}"} for w in text.split()]}}


def conditions_report(systems: dict) -> dict:
    return {"data": "stream@60", "conditions": {"native": systems}}


def write(tmp_path: Path, name: str, content: str) -> Path:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return path


def table_row(text: str, first_cell: str) -> list[str]:
    line = next(x for x in text.splitlines() if x.startswith(f"| {first_cell} |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def cells_of(text: str, header_cell: str, first_cell: str) -> dict[str, str]:
    return dict(zip(table_row(text, header_cell), table_row(text, first_cell), strict=True))


def test_wer_under_each_normaliser_of_the_common_module():
    assert C.wer(REFERENCE, OFFLINE_TEXT) == 0.0
    assert C.wer(REFERENCE, OFFLINE_TEXT, "whisper") == 0.0
    # Ours: 1→one, 25→twenty, five and dollars missing, a, color, i'm→i, am missing: 8 of 16.
    assert C.wer(REFERENCE, STREAMED_TEXT) == pytest.approx(8 / 16)
    # Whisper's: only "a" for "the" is left, of "press one for $25 it was the color ... i am here".
    ref_words = C.whisper_tokens(REFERENCE)
    assert C.wer(REFERENCE, STREAMED_TEXT, "whisper") == pytest.approx(1 / len(ref_words))
    with pytest.raises(KeyError):
        C.wer(REFERENCE, STREAMED_TEXT, "nonesuch")


def test_spans_sum_to_the_word_errors_of_the_wer_and_say_what_kind_each_is():
    spans = R.error_spans(REFERENCE, STREAMED_TEXT)
    found = {(" ".join(s.ref), " ".join(s.hyp)): (s.kind, s.word_errors) for s in spans}
    assert found == {
        ("one", "1"): ("number formatting", 1),
        ("twenty five dollars", "25"): ("number formatting", 3),
        ("the", "a"): ("substitution", 1),
        ("colour", "color"): ("spelling/filler (Whisper norm equal)", 1),
        ("i am", "i'm"): ("spelling/filler (Whisper norm equal)", 2),
    }
    out = jiwer.process_words(
        " ".join(C.norm_tokens(REFERENCE)), " ".join(C.norm_tokens(STREAMED_TEXT))
    )
    assert sum(s.word_errors for s in spans) == out.substitutions + out.deletions + out.insertions


def test_word_joins_deletions_insertions_and_an_empty_text_are_told_apart():
    spans = R.error_spans("please log in now and then wait", "please login now then wait bye")
    kinds = [(s.kind, s.ref, s.hyp) for s in spans]
    assert kinds == [
        ("punctuation/case-only", ("log", "in"), ("login",)),
        ("deletion", ("and",), ()),
        ("insertion", (), ("bye",)),
    ]
    [everything] = R.error_spans("a b c", "")
    assert (everything.kind, everything.word_errors) == ("deletion", 3)
    with pytest.raises(R.RescoreError, match="empty"):
        R.error_spans("...", "words")


def test_a_difference_of_form_is_found_where_a_cheapest_alignment_can_put_it():
    # jiwer aligns "1" as an insertion and "bye" as the substitute for "one"; the same cost
    # holds "one" written "1" and "bye" inserted.
    spans = R.error_spans("press one", "press 1. Bye")
    assert [(s.kind, s.ref, s.hyp, s.word_errors) for s in spans] == [
        ("number formatting", ("one",), ("1",), 1),
        ("insertion", (), ("bye",), 1),
    ]
    # "another" for "and other" plus an inserted "to" would be three errors where WER counts
    # two: the word errors stay the WER's, two substitutions.
    spans = R.error_spans("and other things", "another to things")
    assert [(s.kind, s.word_errors) for s in spans] == [("substitution", 2)]


def test_only_errors_offline_does_not_make_count_against_the_stream():
    reference = "we had everything before us we had nothing before us"
    offline = "we had everything before us we had nothing before"  # shares the missing "us"
    streamed = "we had every thing before us we had nothing for"
    found = R.compare(reference, streamed, offline)
    assert [(s.kind, s.ref, s.hyp) for s in found.extra] == [
        ("punctuation/case-only", ("everything",), ("every", "thing")),
        ("substitution", ("before",), ("for",)),
    ]
    assert (found.shared, found.offline_only) == (1, 0)
    counts = found.counts()
    assert counts["punctuation/case-only"] == (1, 2) and counts["substitution"] == (1, 1)
    assert counts["deletion"] == (0, 0) and list(counts) == list(R.KINDS)


def test_a_saved_conditions_report_is_rescored_under_both_normalisers(tmp_path, capsys):
    report = conditions_report({"desktop-rt": [run(STREAMED_TEXT)], "offline": [run(OFFLINE_TEXT)]})
    path = write(tmp_path, "conditions.json", json.dumps(report))
    reference = write(tmp_path, "reference.txt", REFERENCE)
    assert R.main([str(path), "--reference", str(reference), "--examples", "9"]) == 0
    out = capsys.readouterr().out
    ours = cells_of(out, "system", "desktop-rt")
    assert ours["WER %"] == "50.0"
    whisper = 100 / len(C.whisper_tokens(REFERENCE))
    assert ours["WER % (Whisper norm)"] == f"{whisper:.1f}"
    assert ours["Δ offline pts (Whisper norm)"] == f"{whisper:+.1f}"
    assert cells_of(out, "system", "offline")["WER % (Whisper norm)"] == "0.0"
    kinds = cells_of(out, "system, run", "desktop-rt, 1")
    assert kinds["number formatting"] == "2 (4)"
    assert kinds["spelling/filler (Whisper norm equal)"] == "2 (3)"
    assert kinds["substitution"] == "1 (1)" and kinds["total"] == "5 (8)"
    assert "substitution: “the” → “a”" in out


def test_a_streaming_report_uses_its_saved_reference_and_skips_failed_runs(capsys, tmp_path):
    systems = {
        "desktop-rt": [run("it was the best of times"), {"run": 2, "error": "exit 1"}],
        "offline": [run("it was the best of times")],
    }
    report = {"streams": {"tiny": {"reference": "It was the best of times.", "systems": systems}}}
    path = write(tmp_path, "streaming.json", json.dumps(report))
    assert R.main([str(path)]) == 0
    ours = cells_of(capsys.readouterr().out, "system", "desktop-rt")
    assert ours["runs"] == "1/2" and ours["WER %"] == "0.0"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "cannot read"),
        ("[1, 2]", "not a bench_conditions or bench_streaming report"),
        ('{"date": "x"}', "not a bench_conditions or bench_streaming report"),
        ('{"streams": {"s": {"systems": {}}}}', "not a report this script reads"),
    ],
)
def test_a_file_that_is_not_a_report_is_refused_with_a_reason(tmp_path, capsys, content, message):
    path = write(tmp_path, "bad.json", content)
    assert R.main([str(path)]) == 2
    assert message in capsys.readouterr().err


def test_a_missing_reference_says_how_to_get_one(tmp_path, capsys):
    report = conditions_report({"offline": [run(OFFLINE_TEXT)]})
    path = write(tmp_path, "conditions.json", json.dumps(report))
    assert R.main([str(path), "--cache", str(tmp_path / "no-eval-set")]) == 2
    err = capsys.readouterr().err
    assert "fetch_eval.py" in err and "--reference FILE" in err
    assert R.main([str(path), "--reference", str(tmp_path / "nowhere.txt")]) == 2
    assert "no reference file" in capsys.readouterr().err
    assert R.main([str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
