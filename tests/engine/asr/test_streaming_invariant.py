"""StreamingTranscriber's invariant, fuzzed on a backend that knows the truth.

Committed text is emitted once, in audio order, never before its audio came, and no word that
some pass heard is lost at a commit, a trim, an endpoint, a rehearing or a finish (only
``clear`` may drop words). Arbitrary insert / process / finish / clear schedules run against a
:class:`~tests.support.scripted_backend.ScriptedBackend` whose passes are distorted as real
models distort them; :func:`~tests.support.scripted_backend.audit` checks the transcript.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_rt.core_types import SAMPLE_RATE, Word
from desktop_rt.engine.asr.backend import BackendTraits
from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
from tests.support.scripted_backend import (
    PassStyle,
    ScriptedBackend,
    Truth,
    TruthSpeech,
    TruthWord,
    audit,
    ramp,
    word_ids,
)


@st.composite
def truths(draw: st.DrawFn) -> Truth:
    """Speech as a stream of words: short and long ones, tight and loose, pauses, sentences."""
    words: list[TruthWord] = []
    t = draw(st.sampled_from([0.0, 0.3, 1.0]))
    for i in range(draw(st.integers(1, 30))):
        length = draw(st.sampled_from([0.15, 0.2, 0.3, 0.5]))
        end = draw(st.integers(0, 3)) == 0
        hyphenated = length >= 0.3 and draw(st.integers(0, 4)) == 0
        words.append(TruthWord(i, t, t + length, sentence_end=end, hyphenated=hyphenated))
        t += length + draw(st.sampled_from([0.0, 0.0, 0.05, 0.15, 0.4, 1.2, 3.0]))
    return Truth(tuple(words))


def _some(n: int = 3) -> st.SearchStrategy[int]:
    return st.one_of(st.just(0), st.integers(1, n))


def _pass_styles(skips: bool = False) -> st.SearchStrategy[PassStyle]:
    """Passes distorted as real models distort them; with ``skips``, some jump two or three
    words (the word after them stretched back over them), and none writes a word as two or two
    as one: a stretch is put back before a word the passes agree on (:mod:`.skipped`)."""
    return st.builds(
        PassStyle,
        empty=st.integers(0, 9).map(lambda n: n == 0),
        prompt_only=st.integers(0, 9).map(lambda n: 8 if n == 0 else 0),
        prompt_copy=st.integers(0, 9).map(lambda n: 5 if n == 0 else 0),
        prompt_led=st.integers(0, 9).map(lambda n: 5 if n == 0 else 0),
        write_ahead=st.integers(0, 5).map(lambda n: 3 if n == 0 else 0),
        stop_early=_some(),
        skip_at=st.none() | st.integers(0, 12) if skips else st.none(),
        skip=st.integers(2, 3),
        guessed_tail=_some(2),
        misheard=st.lists(st.integers(0, 12), max_size=2).map(tuple),
        merge_at=st.none() if skips else st.none() | st.integers(0, 12),
        split_at=st.none() if skips else st.none() | st.integers(0, 12),
        variant=st.integers(1, 2),
        shift=st.sampled_from([0.0, -0.01, 0.01]),
        jitter=st.sampled_from([0.0, 0.01, 0.02]),
        swallow=st.sampled_from([0.0, 0.0, 0.3, 1.0]),
        seed=st.integers(0, 3),
    )


pass_styles = _pass_styles()


@st.composite
def unsure_passes(draw: st.DrawFn) -> list[PassStyle]:
    """Pass styles whose words may be unsure, as a model is: the first words after each onset
    low in every pass (how many, how low: drawn once), random ones in some passes."""
    onset, low = draw(st.integers(0, 4)), draw(st.sampled_from([0.05, 0.3, 0.45, 0.55]))
    styles = draw(st.lists(pass_styles, max_size=25)) + [PassStyle()]
    noisy = draw(st.lists(st.booleans(), min_size=len(styles), max_size=len(styles)))
    return [
        replace(style, unsure_onset=onset, unsure=low, random_probability=r)
        for style, r in zip(styles, noisy, strict=True)
    ]


def _derandomized(examples: int):
    """The same ``examples`` cases on every run, so CI does not flake."""
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow],
    )


ops = st.lists(
    st.one_of(
        st.sampled_from([0.05, 0.1, 0.1, 0.3, 0.6, 2.0, 8.0]),  # insert this much, then process
        st.sampled_from(["finish", "clear", "process"]),
    ),
    max_size=40,
)


@dataclass
class Run:
    """Feeds a transcriber ramp audio and records what it commits, and when."""

    transcriber: StreamingTranscriber
    truth: Truth
    fed: int = 0
    emitted: list[tuple[Word, float]] = field(default_factory=list)
    excused: set[int] = field(default_factory=set)

    def insert(self, seconds: float) -> None:
        n = int(seconds * SAMPLE_RATE)
        self.transcriber.insert_audio(ramp(self.fed, n))
        self.fed += n
        self.keep(self.transcriber.process().committed)

    def keep(self, committed: tuple[Word, ...]) -> None:
        now = self.fed / SAMPLE_RATE
        self.emitted += [(w, now) for w in committed]

    def do(self, op: float | str) -> None:
        if op == "finish":
            self.keep(self.transcriber.finish().committed)
        elif op == "process":
            self.keep(self.transcriber.process().committed)
        elif op == "clear":
            self.transcriber.clear()
            now = self.fed / SAMPLE_RATE
            self.excused |= {w.index for w in self.truth.words if w.start < now}
        else:
            assert isinstance(op, float)
            self.insert(op)

    def drain(self) -> None:
        """The rest of the speech and a second of silence, in 0.1 s chunks, then ``finish``."""
        end = self.truth.words[-1].end + 1.0
        while self.fed / SAMPLE_RATE < end:
            self.insert(0.1)
        self.keep(self.transcriber.finish().committed)


TRAITS = {
    "whisper": BackendTraits(),
    "slow": BackendTraits(min_update_seconds=2.0),
}


def _problems(truth, styles, schedule, vad, trim, traits) -> list[str]:
    """Run a schedule (then the rest of the speech and ``finish``); what the audit finds."""
    backend = ScriptedBackend(truth, styles, TRAITS[traits])
    config = StreamingConfig(vad=vad, trim_seconds=trim, max_window_seconds=2 * trim)
    speech = TruthSpeech(truth) if vad else None
    run = Run(StreamingTranscriber(backend, config, speech_probability=speech), truth)
    for op in schedule:
        run.do(op)
    run.drain()
    problems = audit(run.emitted, truth, backend.heard, run.excused)
    return [*problems, str([w.text for w, _ in run.emitted])] if problems else []


# Derandomized: the same 400 cases on every run, so CI does not flake; explore further by
# running it with other seeds and more examples (docs/design/streaming.md, *The invariant*).
@_derandomized(400)
@given(
    truth=truths(),
    styles=st.lists(pass_styles, max_size=25),
    schedule=ops,
    vad=st.booleans(),
    trim=st.sampled_from([3.0, 12.0]),
    traits=st.sampled_from(sorted(TRAITS)),
)
def test_committed_text_is_what_was_heard_once_in_order(truth, styles, schedule, vad, trim, traits):
    assert not _problems(truth, [*styles, PassStyle()], schedule, vad, trim, traits)


# A decoder that jumps a stretch of speech (the 10 dB stream's "when a conference
# administrators can join"): what a pass before it heard there is not lost at the endpoint.
@_derandomized(300)
@given(
    truth=truths(),
    styles=st.lists(_pass_styles(skips=True), max_size=25),
    schedule=ops,
    vad=st.booleans(),
    trim=st.sampled_from([3.0, 12.0]),
    traits=st.sampled_from(sorted(TRAITS)),
)
def test_speech_a_pass_jumps_is_kept_from_the_passes_that_heard_it(
    truth, styles, schedule, vad, trim, traits
):
    assert not _problems(truth, [*styles, PassStyle()], schedule, vad, trim, traits)


# Words a backend is unsure of are held back by the onset rule (docs/design/streaming.md,
# *Segment onsets*); whatever holds them, they are committed in the end, once.
@_derandomized(300)
@given(
    truth=truths(),
    styles=unsure_passes(),
    schedule=ops,
    vad=st.booleans(),
    trim=st.sampled_from([3.0, 12.0]),
    traits=st.sampled_from(sorted(TRAITS)),
)
def test_unsure_words_are_committed_once_in_order(truth, styles, schedule, vad, trim, traits):
    assert not _problems(truth, styles, schedule, vad, trim, traits)


def _sentences() -> Truth:
    """Five sentences of six 0.3 s words, each after a pause of 0.4 to 1.5 s (an onset)."""
    words: list[TruthWord] = []
    t = 0.5
    for s, pause in enumerate([0.4, 1.5, 0.6, 1.0, 0.4]):
        for i in range(6):
            index = 6 * s + i
            words.append(TruthWord(index, t, t + 0.3, sentence_end=i == 5, hyphenated=i == 2))
            t += 0.35
        t += pause
    return Truth(tuple(words))


@pytest.mark.parametrize("traits", sorted(TRAITS))
@pytest.mark.parametrize("chunk", [0.1, 0.6, 2.0])
def test_words_unsure_at_every_onset_are_committed_once_through_trims(traits, chunk):
    """The case suspected of losing words (issue 15): every pass gives the first three words
    after each onset probability 0.05, so the onset rule holds them back; the window is trimmed
    at 3 s and no speech gate ends segments. Words held back stay tentative (and heard) until
    agreement, a trim's forced commit or ``finish`` commits them: every word once, in order."""
    truth = _sentences()
    unsure = {"unsure_onset": 3, "unsure": 0.05}
    styles = [
        PassStyle(jitter=0.02, seed=1, **unsure),
        PassStyle(guessed_tail=1, shift=0.01, **unsure),
        PassStyle(random_probability=True, jitter=0.02, seed=2, **unsure),
        PassStyle(swallow=0.3, seed=3, **unsure),
    ]
    backend = ScriptedBackend(truth, styles * 20, TRAITS[traits])
    config = StreamingConfig(vad=False, trim_seconds=3.0, max_window_seconds=6.0)
    run = Run(StreamingTranscriber(backend, config), truth)
    while run.fed / SAMPLE_RATE < truth.words[-1].end:
        run.insert(chunk)
    run.drain()
    assert not audit(run.emitted, truth, backend.heard, set())
    written = [i for w, _ in run.emitted for _, i in word_ids(w.text)]
    assert sorted(set(written)) == list(range(len(truth.words)))
