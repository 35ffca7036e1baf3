#!/usr/bin/env python3
"""Re-score saved benchmark reports under both WER normalisers, and say how a streamed
transcript's errors differ from offline's.

    .venv/bin/python bench/rescore.py bench/results/conditions-2026-12-02-*.json
    .venv/bin/python bench/rescore.py REPORT.json --reference ref.txt --examples 10

Reads ``bench_conditions.py`` reports (reference: the evaluation set the report names, from
``$DESKTOP_RT_EVAL_DIR`` or ``--cache``) and ``bench_streaming.py`` reports (the reference is
saved in them); ``--reference FILE`` gives the reference text instead. Prints, per condition
or stream, each system's median WER with our normaliser (``plain``) and OpenAI's
``EnglishTextNormalizer`` (``whisper``), then for each other system the error spans its text
has and offline's does not, by kind (``KINDS``). Exit 2 on a file it cannot score.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import statistics
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH), str(BENCH / "data")]
import _common as C  # noqa: E402
from _session_child import saved_text  # noqa: E402

OFFLINE = "offline"
_NUMBERS = (
    "zero oh one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty "
    "ninety hundred thousand million billion first second third fourth fifth sixth seventh "
    "eighth ninth tenth point percent dollars"
)
NUMBER_WORDS = frozenset(_NUMBERS.split())  # a span with one of these may be a number


class RescoreError(Exception):
    """A report that cannot be scored: the message says why and what to do."""


EDIT_NAMES = {"replace": "substitution", "delete": "deletion", "insert": "insertion"}
MAX_FORMATTING_WORDS = 6  # the most words (both sides) one difference of form spans
Words = tuple[str, ...]


@dataclass(frozen=True)
class ErrorSpan:
    """Word errors next to each other in one alignment (reference vs text, in our WER form):
    the reference words from ``ref_start`` that were written as ``hyp``, of one kind of
    :data:`KINDS`, and how many word errors they count in WER."""

    ref_start: int
    ref: Words
    hyp: Words
    kind: str
    word_errors: int

    @property
    def key(self) -> tuple[int, Words, Words]:
        return self.ref_start, self.ref, self.hyp


def _letters(words: Words) -> str:
    return "".join(ch for word in words for ch in word if ch.isalnum())


@functools.cache
def _whisper_form(words: Words) -> Words:
    """OpenAI's form of words already in ours, less the symbols ours drops ("$25" is "25")."""
    forms = (re.sub(r"[^\w']", "", t) for t in C.whisper_tokens(" ".join(words)))
    return tuple(w for w in forms if w)


def _whisper_equal(ref: Words, hyp: Words) -> bool:
    return _whisper_form(ref) == _whisper_form(hyp)


def _numeric(ref: Words, hyp: Words) -> bool:
    words = ref + hyp
    forms = " ".join(words + _whisper_form(ref) + _whisper_form(hyp))
    return any(ch.isdigit() for ch in forms) or any(w in NUMBER_WORDS for w in words)


# Differences of form, tried in this order; what none explains is a substitution, deletion or
# insertion.
FORMATTING: tuple[tuple[str, Callable[[Words, Words], bool]], ...] = (
    ("punctuation/case-only", lambda ref, hyp: _letters(ref) == _letters(hyp)),
    ("number formatting", lambda ref, hyp: _whisper_equal(ref, hyp) and _numeric(ref, hyp)),
    ("spelling/filler (Whisper norm equal)", _whisper_equal),
)
KINDS = (*(name for name, _ in FORMATTING), *EDIT_NAMES.values())


@functools.cache
def formatting_kind(ref: Words, hyp: Words) -> str | None:
    """The first of :data:`FORMATTING` that says ``ref`` written as ``hyp`` differs in form only
    (apostrophes and word joins; a number written another way; another spelling, abbreviation
    or filler that OpenAI's normaliser treats as equal), else None."""
    return next((name for name, test in FORMATTING if test(ref, hyp)), None)


def _distance(ref: Words, hyp: Words) -> int:
    from rapidfuzz.distance import Levenshtein

    return int(Levenshtein.distance(ref, hyp))


def _formatting_match(ref: Words, hyp: Words) -> tuple[int, int, int, int, str] | None:
    """The largest stretch ``ref[i:i+a]`` written ``hyp[j:j+b]`` (leftmost first) that differs
    in form only and that a minimum-cost alignment of the two can hold: (i, a, j, b, kind)."""
    cost = _distance(ref, hyp)
    for size in range(min(MAX_FORMATTING_WORDS, len(ref) + len(hyp)), 0, -1):
        for i in range(len(ref) + 1):
            for a in range(min(size, len(ref) - i) + 1):
                b = size - a
                for j in range(len(hyp) - b + 1):
                    rest = _distance(ref[:i], hyp[:j]) + _distance(ref[i + a :], hyp[j + b :])
                    if max(a, b) + rest != cost:
                        continue
                    kind = formatting_kind(ref[i : i + a], hyp[j : j + b])
                    if kind is not None:
                        return i, a, j, b, kind
    return None


def _edit_spans(ref: Words, hyp: Words, start: int) -> list[ErrorSpan]:
    """Differences with nothing of form among them: Levenshtein's edit blocks, one span each."""
    from rapidfuzz.distance import Levenshtein

    return [
        ErrorSpan(
            start + op.src_start,
            ref[op.src_start : op.src_end],
            hyp[op.dest_start : op.dest_end],
            EDIT_NAMES[op.tag],
            max(op.src_end - op.src_start, op.dest_end - op.dest_start),
        )
        for op in Levenshtein.opcodes(ref, hyp)
        if op.tag != "equal"
    ]


def _run_spans(ref: Words, hyp: Words, start: int) -> list[ErrorSpan]:
    """The spans of words that differ between two matched words of the alignment: stretches
    that differ in form only, largest first, and the edits around them."""
    if not ref and not hyp:
        return []
    match = _formatting_match(ref, hyp)
    if match is None:
        return _edit_spans(ref, hyp, start)
    i, a, j, b, kind = match
    return [
        *_run_spans(ref[:i], hyp[:j], start),
        ErrorSpan(start + i, ref[i : i + a], hyp[j : j + b], kind, max(a, b)),
        *_run_spans(ref[i + a :], hyp[j + b :], start + i + a),
    ]


def error_spans(reference: str, hypothesis: str) -> list[ErrorSpan]:
    """The hypothesis's word errors against the reference in our WER form (``C.norm_tokens``,
    aligned by jiwer), as spans of one kind each: "twenty five" written "25" is one span of
    number formatting with two word errors, "the colour" written "a color" a substitution and
    a spelling. Their word errors add up to the WER's."""
    import jiwer

    ref, hyp = C.norm_tokens(reference), C.norm_tokens(hypothesis)
    if not ref:
        raise RescoreError("the reference is empty")
    if not hyp:
        return _run_spans(tuple(ref), (), 0)
    spans: list[ErrorSpan] = []
    pending: list[Any] = []  # jiwer's AlignmentChunks
    for chunk in [*jiwer.process_words(" ".join(ref), " ".join(hyp)).alignments[0], None]:
        if chunk is not None and chunk.type != "equal":
            pending.append(chunk)
        elif pending:
            r0, r1 = pending[0].ref_start_idx, pending[-1].ref_end_idx
            h0, h1 = pending[0].hyp_start_idx, pending[-1].hyp_end_idx
            spans += _run_spans(tuple(ref[r0:r1]), tuple(hyp[h0:h1]), r0)
            pending = []
    return spans


@dataclass(frozen=True)
class Breakdown:
    """The spans a system has that offline has not, and how many the two share."""

    extra: list[ErrorSpan]
    shared: int
    offline_only: int

    def counts(self) -> dict[str, tuple[int, int]]:
        """Kind: (spans, word errors) for every kind of :data:`KINDS` (zeros too)."""
        return {
            kind: (
                sum(1 for s in self.extra if s.kind == kind),
                sum(s.word_errors for s in self.extra if s.kind == kind),
            )
            for kind in KINDS
        }


def compare(reference: str, streamed: str, offline: str) -> Breakdown:
    """``streamed``'s error spans that ``offline``'s text does not have (same reference words,
    written the same way), and the counts of spans both or only offline have."""
    streamed_spans = error_spans(reference, streamed)
    ours = Counter(s.key for s in streamed_spans)
    theirs = Counter(s.key for s in error_spans(reference, offline))
    extra_keys = ours - theirs
    extra = []
    for span in streamed_spans:
        if extra_keys[span.key] > 0:
            extra_keys[span.key] -= 1
            extra.append(span)
    shared = sum((ours & theirs).values())
    return Breakdown(extra, shared, sum((theirs - ours).values()))


# ---------------------------------------------------------------------------------------------
# Reports
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Section:
    """One table of a report: a condition or a stream, its reference, its systems' texts."""

    title: str
    reference: str
    texts: dict[str, list[str | None]]  # system: each run's saved text (None: a failed run)


def _texts(systems: dict[str, Any]) -> dict[str, list[str | None]]:
    return {
        name: [saved_text(r["raw"]) if "raw" in r else None for r in runs]
        for name, runs in systems.items()
    }


def _eval_reference(data: str, cache: Path | None) -> str:
    import eval_set as E

    try:
        return str(E.load(data, cache).reference)
    except (FileNotFoundError, ValueError) as exc:
        raise RescoreError(f"{exc}; or give the reference text with --reference FILE") from exc


def sections(report: Any, reference: str | None, cache: Path | None) -> list[Section]:
    """The tables of a ``bench_conditions`` or ``bench_streaming`` report."""
    if not isinstance(report, dict):
        raise RescoreError("not a bench_conditions or bench_streaming report (not an object)")
    if "conditions" in report and "data" in report:
        ref = reference or _eval_reference(report["data"], cache)
        return [
            Section(f"{name} ({report['data']})", ref, _texts(systems))
            for name, systems in report["conditions"].items()
        ]
    if "streams" in report:
        return [
            Section(f"stream {name}", reference or data["reference"], _texts(data["systems"]))
            for name, data in report["streams"].items()
        ]
    raise RescoreError("not a bench_conditions or bench_streaming report (no conditions/streams)")


def _median_wer(reference: str, texts: list[str | None], normaliser: str) -> float | None:
    scores = [C.wer(reference, t, normaliser) for t in texts if t is not None]
    return statistics.median(scores) * 100 if scores else None


def wer_table(section: Section) -> list[str]:
    """Median WER per system under each of ``C.NORMALISERS``, and its distance from offline's."""
    medians = {
        system: [_median_wer(section.reference, texts, n) for n in C.NORMALISERS]
        for system, texts in section.texts.items()
    }
    floor = medians.get(OFFLINE, [None] * len(C.NORMALISERS))
    lines = [
        "| system | runs | WER % | WER % (Whisper norm) | Δ offline pts | Δ offline pts (Whisper norm) |",
        "|---|---|---|---|---|---|",
    ]
    for system, texts in section.texts.items():
        ok = sum(t is not None for t in texts)
        cells = [_fmt(v) for v in medians[system]]
        cells += [_fmt(_minus(v, f), "+.1f") for v, f in zip(medians[system], floor, strict=True)]
        lines.append(f"| {system} | {ok}/{len(texts)} | " + " | ".join(cells) + " |")
    return lines


def _minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _fmt(value: float | None, spec: str = ".1f") -> str:
    return "–" if value is None else f"{value:{spec}}"


def breakdown_table(section: Section, examples: int) -> list[str]:
    """Per run of each system but offline: its extra error spans by kind, as "spans (words)"."""
    offline = [t for t in section.texts.get(OFFLINE, []) if t is not None]
    if not offline:
        return ["(no offline run to compare with)"]
    kinds = list(KINDS)
    lines = [
        "Error spans a system has and offline's text has not, by kind: spans (word errors)",
        "",
        "| system, run | " + " | ".join(kinds) + " | total | shared with offline | offline only |",
        "|---" * (len(kinds) + 4) + "|",
    ]
    shown: list[str] = []
    for system, texts in section.texts.items():
        if system == OFFLINE:
            continue
        for run, text in enumerate(texts, 1):
            if text is None:
                continue
            found = compare(section.reference, text, offline[min(run, len(offline)) - 1])
            counts = found.counts()
            cells = [f"{n} ({w})" for n, w in counts.values()]
            total = f"{len(found.extra)} ({sum(s.word_errors for s in found.extra)})"
            row = f"| {system}, {run} | " + " | ".join(cells)
            lines.append(f"{row} | {total} | {found.shared} | {found.offline_only} |")
            shown += [_example(system, run, s) for s in found.extra[:examples]]
    return lines + ([""] + shown if shown else [])


def _example(system: str, run: int, span: ErrorSpan) -> str:
    return (
        f"- {system} {run}, word {span.ref_start}: {span.kind}: "
        f"“{' '.join(span.ref)}” → “{' '.join(span.hyp)}”"
    )


def render(path: Path, report: Any, args: argparse.Namespace) -> str:
    reference = args.reference.read_text(encoding="utf-8") if args.reference else None
    lines = [f"# Re-scored {path.name}", ""]
    for section in sections(report, reference, args.cache):
        lines += [f"## {section.title}", "", *wer_table(section), ""]
        lines += [*breakdown_table(section, args.examples), ""]
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("reports", nargs="+", type=Path, help="bench_conditions/bench_streaming JSON")
    p.add_argument("--reference", type=Path, help="the reference text (default: the report's)")
    p.add_argument("--cache", type=Path, help="the evaluation set's folder")
    p.add_argument("--examples", type=int, default=0, help="list N extra error spans per run")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if args.reference and not args.reference.is_file():
            raise RescoreError(f"no reference file {args.reference}")
        for path in args.reports:
            try:
                report = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise RescoreError(f"cannot read {path}: {exc}") from exc
            try:
                print(render(path, report, args))
            except (KeyError, TypeError, AttributeError) as exc:
                raise RescoreError(f"{path}: not a report this script reads ({exc!r})") from exc
    except RescoreError as exc:
        print(f"rescore: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
