"""StreamingTranscriber on hypothesis sequences that real runs produced (bench/bench_commits.py).

Each test scripts a backend after what Whisper base wrote in a run that repeated, dropped or
invented text (a slowed backend, another CPU's kernels), on the truth backend of
:mod:`tests.support.scripted_backend`, and checks the transcript with its ``audit``: every word
once, in order, nothing heard lost; here also nothing said lost where the engine could hear it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

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


def sentence(first: int, n: int, t: float, step: float = 0.4) -> list[TruthWord]:
    """``n`` words of 0.3 s from ``t`` on, the last ending a sentence."""
    return [
        TruthWord(first + i, t + i * step, t + i * step + 0.3, sentence_end=i == n - 1)
        for i in range(n)
    ]


@dataclass
class StopsAfterPause:
    """Whisper on a window holding a long pause: it writes the speech before the pause and
    the first ``after`` words past it, then stops (recorded: "Unless to be rather cold-hearted
    and rather" for a 17.6 s window holding the whole sentence after a 7 s pause)."""

    inner: ScriptedBackend
    pause: float = 2.0
    after: int = 2
    traits: BackendTraits = field(default_factory=BackendTraits)
    detected_language: tuple[str, float] | None = None
    heard: set[int] = field(default_factory=set)

    def transcribe(self, audio: np.ndarray, **kwargs: object) -> list[Word]:
        words = self.inner.transcribe(audio, **kwargs)  # type: ignore[arg-type]
        for i in range(1, len(words)):
            if words[i].start - words[i - 1].end >= self.pause:
                words = words[: i + self.after]
                break
        self.heard |= {i for w in words for _, i in word_ids(w.text)}
        return words


def feed_in_turns(
    tr: StreamingTranscriber, seconds: float, turn: float
) -> list[tuple[Word, float]]:
    """The stream's audio in ``turn``-second pieces, a ``process`` after each (a worker that
    fell behind takes what waited in one turn), then ``finish``."""
    out: list[tuple[Word, float]] = []
    fed, total, step = 0, int(seconds * SAMPLE_RATE), int(turn * SAMPLE_RATE)
    while fed < total:
        n = min(step, total - fed)
        tr.insert_audio(ramp(fed, n))
        fed += n
        out += [(w, fed / SAMPLE_RATE) for w in tr.process().committed]
    out += [(w, fed / SAMPLE_RATE) for w in tr.finish().committed]
    return out


STYLES = [
    PassStyle(),
    PassStyle(shift=0.01, jitter=0.02, seed=1),
    PassStyle(swallow=0.3, jitter=0.02, seed=2),
    PassStyle(misheard=(5,), seed=3),
]


@pytest.mark.parametrize("style", STYLES)
def test_a_segment_whose_last_pass_stopped_early_hears_the_rest_before_it_ends(style):
    # Two sentences 7 s apart reach the engine in 8 s turns, the second turn holding the end of
    # the pause and speech, so no endpoint falls between them and one window holds both; every
    # pass over it stops two words after the pause.
    truth = Truth(tuple(sentence(0, 6, 5.0) + sentence(6, 8, 14.3)))
    backend = StopsAfterPause(ScriptedBackend(truth, [style]))
    tr = StreamingTranscriber(backend, StreamingConfig(), TruthSpeech(truth))
    emitted = feed_in_turns(tr, 24.0, 8.0)
    assert not audit(emitted, truth, backend.heard, set())
    written = [i for w, _ in emitted for _, i in word_ids(w.text)]
    assert written == list(range(14))  # the words after the early stop were heard, once


@dataclass
class HearsTails:
    """Whisper on a window that starts inside a word: it writes the word's last sound as a word
    ("nd" of "and", "better" again), squeezed at the window's start. Recorded in the hands-free
    run (docs/design/app.md): "might have been made nd still", "Fail better. better.". The
    fragment is written as the word itself here, so ``audit`` sees it as a repeat."""

    inner: ScriptedBackend
    traits: BackendTraits = field(default_factory=BackendTraits)
    detected_language: tuple[str, float] | None = None

    def transcribe(self, audio: np.ndarray, **kwargs: object) -> list[Word]:
        start = int(audio[0]) / SAMPLE_RATE
        words = self.inner.transcribe(audio, **kwargs)  # type: ignore[arg-type]
        cut = [w for w in self.inner.truth.words if w.start < start - 0.01 < w.end - 0.02]
        return [Word(f" w{w.index}", 0.0, min(0.1, w.end - start)) for w in cut] + words


@pytest.mark.parametrize("seed", range(4))
def test_a_rehearing_does_not_hear_the_tail_of_the_last_committed_word_as_a_word(seed):
    # Word ends come early by 0.05 s (as Whisper gives them at times), and a pass mishears a
    # committed word, so the window is cut where the committed words end and heard again.
    truth = Truth(tuple(sentence(0, 12, 0.5, step=0.32)))
    styles = [PassStyle(shift=-0.05, seed=seed)] * 4 + [PassStyle(shift=-0.05, misheard=(1,))]
    inner = ScriptedBackend(truth, [*styles, PassStyle(shift=-0.05, seed=seed)])
    tr = StreamingTranscriber(HearsTails(inner), StreamingConfig(), TruthSpeech(truth))
    emitted = feed_in_turns(tr, 6.0, 0.1)
    assert tr.rehearings >= 1
    assert not audit(emitted, truth, inner.heard, set())
