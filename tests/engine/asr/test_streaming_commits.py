"""What StreamingTranscriber commits from scripted hypotheses: hyphenated words, finish without
another pass, decoder loops cut, and a block backend's forced prefix.
"""

from __future__ import annotations

import numpy as np

from desktop_rt.engine.asr.backend import BackendTraits
from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
from tests.support.streaming_feed import HypothesisScript, feed_silence, ramp_audio, timed_words


def test_decoder_loops_are_cut_but_real_repeats_stay():
    from desktop_rt.engine.asr.runaway import drop_runaway

    looped = timed_words("fail better.", step=0.3) + [  # said once, then written over and over
        w.shifted(0.6) for w in timed_words("fail better. " * 30, step=0.05)
    ]
    kept = [w.text.strip() for w in drop_runaway(looped, duration=2.0)]
    assert kept == ["fail", "better.", "fail", "better."]
    real = timed_words("no no no we said that that is it")
    assert drop_runaway(real, duration=10.0) == real
    # Words placed after the audio ends are invented.
    assert [w.text for w in drop_runaway(timed_words("one two three four"), duration=0.7)] == [
        " one",
        " two",
        " three",
    ]
    # A whole sentence written again in a fraction of its time is a loop (seen on a window cut
    # at an endpoint); said again at its pace, it is speech.
    sentence = "he might even have been made amiable himself."
    again = [w.shifted(1.6) for w in timed_words(sentence, step=0.05)]
    kept = [w.text.strip() for w in drop_runaway(timed_words(sentence, step=0.2) + again, 5.0)]
    assert kept == sentence.split()
    twice = timed_words(f"{sentence} {sentence}", step=0.2)
    assert drop_runaway(twice, duration=5.0) == twice


def test_half_of_a_hyphenated_word_is_not_committed_alone():
    backend = HypothesisScript(
        [
            [" is", " to", " be", " ild", "-sp"],
            [" is", " to", " be", " ild", "-sposed."],
            [" is", " to", " be", " ill", "-disposed."],
            [" is", " to", " be", " ill", "-disposed."],
        ]
    )
    tr = StreamingTranscriber(
        backend, StreamingConfig(vad=False, min_window_seconds=0.0, min_agree_seconds=0.0)
    )
    committed = feed_silence(tr, 2.4)
    assert backend.calls == 4
    assert "".join(w.text for w in committed) == " is to be ill-disposed."


def test_finish_commits_a_hypothesis_that_heard_everything_without_another_pass():
    backend = HypothesisScript([[" he", " was", " not"], [" an", " ill", "-disposed"]])
    tr = StreamingTranscriber(
        backend, StreamingConfig(vad=False, min_window_seconds=0.0, min_agree_seconds=0.0)
    )
    tr.insert_audio(np.zeros(16000, dtype=np.float32))
    assert tr.process().tentative_text == " he was not"
    assert "".join(w.text for w in tr.finish().committed) == " he was not"
    assert backend.calls == 1  # nothing was inserted after that hypothesis: no second pass
    tr.insert_audio(np.zeros(16000, dtype=np.float32))
    tr.process()
    tr.insert_audio(np.zeros(1600, dtype=np.float32))  # audio no hypothesis has heard
    assert "".join(w.text for w in tr.finish().committed) == " an ill-disposed"
    assert backend.calls == 3


class _BlockBackend:
    """Like the GGUF backend: encodes 2 s blocks from the window's start, updates per 2 s, and
    forces the committed prefix. Hears word ``i`` of a ramp stream (" w{i}", at 0.5 i + 0.05 to
    0.5 i + 0.45 s; every sixth ends a sentence) when the window holds all of it; after a forced
    prefix it writes only the words after the prefix's last one."""

    traits = BackendTraits(min_update_seconds=2.0, update_grid_seconds=2.0, forces_prefix=True)
    detected_language = None

    def __init__(self):
        self.calls: list[
            tuple[float, float, str | None, str | None]
        ] = []  # (start, seconds, prompt, prefix)

    @staticmethod
    def text(i: int) -> str:
        return f" w{i}" + ("." if i % 6 == 5 else "")

    def transcribe(self, audio, *, prompt=None, language=None, prefix=None):
        from desktop_rt.core_types import Word

        start, seconds = round(float(audio[0]) * 1e6) / 16000, len(audio) / 16000
        self.calls.append((start, seconds, prompt, prefix))
        after = int(prefix.split()[-1].strip("w.")) if prefix else -1
        words = []
        for i in range(after + 1, int((start + seconds) / 0.5) + 1):
            t0, t1 = 0.5 * i + 0.05, 0.5 * i + 0.45
            if t0 >= start - 0.05 and t1 <= start + seconds:
                words.append(Word(self.text(i), t0 - start, t1 - start))
        return words


def test_a_block_backend_hears_whole_blocks_and_its_forced_prefix_loses_nothing():
    backend = _BlockBackend()
    tr = StreamingTranscriber(backend, StreamingConfig(vad=False))
    audio = ramp_audio(31.0)
    committed = []
    for i in range(0, len(audio), 5920):  # 0.37 s chunks: never on a block boundary
        tr.insert_audio(audio[i : i + 5920])
        committed += tr.process().committed
    regular = list(backend.calls)
    committed += tr.finish().committed
    assert "".join(w.text for w in committed) == "".join(backend.text(i) for i in range(62))
    # Every regular pass heard whole 2 s blocks, from a window start on the 2 s grid, one pass
    # per 2 s of audio: trims cut on the grid too.
    assert [s + n for s, n, _, _ in regular] == [2.0 * k for k in range(1, len(regular) + 1)]
    assert all(n % 2.0 == 0 and s % 2.0 == 0 for s, n, _, _ in regular)
    assert max(n for _, n, _, _ in regular) <= 14.0 and {s for s, _, _, _ in regular} != {
        0.0
    }  # trimmed
    # The prompt and the forced prefix split the committed text between them, in order.
    for start, _, prompt, prefix in backend.calls:
        if prompt and prefix:
            last_prompt = int(prompt.split()[-1].strip("w."))
            first_prefix = int(prefix.split()[0].strip("w."))
            assert first_prefix == last_prompt + 1
        if prefix:  # a forced word ended at most a second before the window
            assert 0.5 * int(prefix.split()[0].strip("w.")) + 0.45 > start - 1.0
