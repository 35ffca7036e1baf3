"""``desktop-rt transcribe FILE`` in process: whole-file recognition, progress, bad files.

The real model is shared across tests (opened once) through a patched ``open_backend``.
"""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pytest
import soundfile as sf

from desktop_rt import cli
from desktop_rt.commands.transcribe import EXIT_PARTIAL, FileProgressDisplay
from desktop_rt.engine.asr.file_transcriber import FileProgress
from desktop_rt.engine.audio.file_decode import AudioFileReader
from desktop_rt.machine import usable_cores
from tests.support.bad_audio import cut_mp3, write_mp3
from tests.support.clips import DATA, offline_text, read_clip, reference_text, wer, words_of
from tests.support.damaged_files import cut_at, overwrite_inside, write_encoded

# WER against the model's own transcript of the same audio heard whole (offline), never its
# exact words: a file's windows or the live replay's passes may write a word of a clip
# differently on another CPU's kernels (measured here: 0.0 in every test, 2026-12-02).
WER_BOUND = 0.15


@pytest.fixture
def model(whisper_backend, monkeypatch):
    """``open_backend`` gives the session's Whisper backend, which the command cannot close."""
    opened = []

    class Shared:
        def __getattr__(self, name):
            return getattr(whisper_backend, name)

        def close(self):
            pass

    def open_backend(spec, *, threads=0, progress=None, mmproj=None):
        opened.append(threads)
        return Shared()

    monkeypatch.setattr("desktop_rt.engine.models.kinds.open_backend", open_backend)
    return opened


def offline_of(backend, path) -> str:
    """What the model writes for the audio of ``path`` heard whole at once: as far as it decodes,
    repaired as the command repairs it."""
    audio = np.concatenate(list(AudioFileReader(path).chunks()))
    return offline_text(backend, audio, whole=True)  # as the command decodes a file's windows


def transcribe(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(["transcribe", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_file_is_recognised_whole_with_progress(model, capsys, whisper_backend):
    code, out, err = transcribe(capsys, DATA / "beckett.wav", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert wer(offline_of(whisper_backend, DATA / "beckett.wav"), doc["text"]) <= WER_BOUND
    assert doc["language"] == "en"
    assert "desktop-rt: transcribed 100% (0:09 of 0:09" in err  # not a terminal: lines
    assert model == [usable_cores()]  # every core this process may run on (its affinity)


def test_quiet_shows_no_progress(model, capsys, whisper_backend):
    code, out, err = transcribe(capsys, DATA / "ss-0880.wav", "-q")
    assert code == 0 and err == ""
    assert wer(offline_of(whisper_backend, DATA / "ss-0880.wav"), out) <= WER_BOUND, out


def test_speed_keeps_the_live_replay(model, capsys, whisper_backend):
    code, out, err = transcribe(capsys, DATA / "ss-0880.wav", "--speed", "inf", "--no-live")
    assert code == 0 and "transcribed" not in err
    assert wer(offline_of(whisper_backend, DATA / "ss-0880.wav"), out) <= WER_BOUND, out
    assert model == [0]  # the backend's own default threads, as before


def float_wav(tmp_path, name: str, audio: np.ndarray):
    path = tmp_path / f"{name}.wav"
    sf.write(path, audio, 16000, subtype="FLOAT")
    return path


def two_clips() -> tuple[np.ndarray, str]:
    audio = np.concatenate([read_clip("beckett"), read_clip("ss-0870")])
    return audio, reference_text("beckett") + " " + reference_text("ss-0870")


def test_one_nan_in_190000_samples_is_repaired(model, capsys, tmp_path, whisper_backend):
    audio, reference = two_clips()
    audio = audio[:190_000].copy()
    audio[100_000] = np.nan
    path = float_wav(tmp_path, "nan", audio)
    code, out, err = transcribe(capsys, path, "-q")
    assert code == 0
    assert "warning: 1 of 190,000 samples (0.00053%) were NaN or infinite" in err
    assert wer(offline_of(whisper_backend, path), out) <= WER_BOUND, out  # both clips heard


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_one_percent_non_finite_samples_are_repaired(model, capsys, tmp_path, bad):
    audio, reference = two_clips()
    audio = audio.copy()
    audio[np.random.default_rng(2).choice(len(audio), len(audio) // 100, replace=False)] = bad
    code, out, err = transcribe(capsys, float_wav(tmp_path, "bad", audio), "-q")
    assert code == 0
    assert "(1.0%) were NaN or infinite; they were replaced by silence" in err
    assert wer(reference, out) < 0.2


def test_int16_scaled_floats_are_normalised(model, capsys, tmp_path):
    audio, reference = two_clips()
    code, out, err = transcribe(capsys, float_wav(tmp_path, "x32768", audio * 32768.0), "-q")
    assert code == 0
    assert "beyond full scale (1.0)" in err and "scaled by 1/" in err
    assert wer(reference, out) < 0.1


@pytest.mark.parametrize("raising", [False, True], ids=["at-a-frame", "inside-a-frame"])
def test_a_truncated_mp3_is_transcribed_as_far_as_it_goes(
    model, capsys, tmp_path, raising, whisper_backend
):
    audio, _ = two_clips()  # beckett (10 s), then Dashwood (7 s)
    whole = tmp_path / "whole.mp3"
    write_mp3(whole, audio)
    cut = cut_mp3(whole, tmp_path / "cut.mp3", 0.55, raising=raising)
    code, out, err = transcribe(capsys, cut, "-q")
    assert code == EXIT_PARTIAL == 3
    assert "warning: the file is truncated or damaged: audio decoded up to 0:09" in err
    assert "of the 0:17.0 it declares" in err
    assert wer(offline_of(whisper_backend, cut), out) <= WER_BOUND, out  # beckett, no more


@pytest.mark.parametrize(
    ("samples", "said"),
    [(np.zeros(0), "holds no samples"), (np.full(16000, np.nan), "NaN or infinite")],
    ids=["no-samples", "all-nan"],
)
def test_a_file_with_no_usable_audio_exits_1(model, capsys, tmp_path, samples, said):
    """Nothing was transcribed: not exit 0 with an empty transcript."""
    code, out, err = transcribe(capsys, float_wav(tmp_path, "bad", samples), "-q")
    assert code == 1
    assert said in err and "nothing to transcribe" in err
    assert not out.strip()


def test_the_partial_exit_code_is_documented(capsys):
    with pytest.raises(SystemExit):
        cli.main(["transcribe", "--help"])
    help_text = capsys.readouterr().out
    assert "exit status:" in help_text and "3  partial: the file is truncated" in help_text
    assert "skipped inside it" in help_text


def progress(done: float, total: float | None) -> FileProgress:
    return FileProgress(done, total)


def test_the_progress_bar_is_redrawn_on_a_terminal():
    stream = io.StringIO()
    display = FileProgressDisplay(stream, tty=True)
    display.update(progress(30.0, 120.0))
    display.update(progress(120.0, 120.0))
    display.close()
    text = stream.getvalue()
    assert "\r\x1b[K[#######.......................]  25%  0:30 of 2:00" in text
    assert "[" + "#" * 30 + "] 100%  2:00 of 2:00" in text
    assert text.endswith("\r\x1b[K") and "\n" not in text


def test_progress_elsewhere_is_a_line_per_tenth_or_per_minute():
    stream = io.StringIO()
    display = FileProgressDisplay(stream, tty=False)
    for done in range(0, 101, 5):
        display.update(progress(float(done), 100.0))
    lines = stream.getvalue().splitlines()
    assert [line.split()[2] for line in lines] == [f"{p}%" for p in range(0, 101, 10)]
    stream = io.StringIO()
    display = FileProgressDisplay(stream, tty=False)
    for done in range(0, 200, 10):
        display.update(progress(float(done), None))
    assert len(stream.getvalue().splitlines()) == 4  # 0:00, 1:00, 2:00, 3:00
    quiet = io.StringIO()
    FileProgressDisplay(quiet, tty=True, quiet=True).update(progress(1.0, 2.0))
    assert quiet.getvalue() == ""


@pytest.mark.parametrize("kind", ["vorbis", "opus"])
def test_a_truncated_ogg_is_partial_with_a_warning(model, capsys, tmp_path, kind, whisper_backend):
    """Its length comes from the last page there is, so only the missing end-of-stream page
    shows the cut: not exit 0 and a silent half transcript."""
    audio, _ = two_clips()  # beckett (10 s), then Dashwood (7 s)
    cut = cut_at(write_encoded(tmp_path, kind, audio), 0.45)
    code, out, err = transcribe(capsys, cut, "-q")
    assert code == EXIT_PARTIAL
    assert "warning: the file is truncated or damaged: audio decoded up to 0:0" in err
    assert "(the file ends inside an Ogg page: it was cut short); the rest is missing" in err
    assert wer(offline_of(whisper_backend, cut), out) <= WER_BOUND, out  # what decodes, no more


def test_garbage_inside_a_flac_is_partial_with_where_and_how_much(model, capsys, tmp_path):
    audio, reference = two_clips()
    damaged = overwrite_inside(write_encoded(tmp_path, "flac", audio))
    code, out, err = transcribe(capsys, damaged, "-q")
    assert code == EXIT_PARTIAL
    assert re.search(
        r"warning: the file is damaged: 0\.\d\d s of audio at 0:\d\d\.\d could not", err
    )
    assert "truncated" not in err
    assert wer(reference, out) < 0.3  # transcribed around the damage


@pytest.mark.parametrize("kind", ["vorbis", "flac", "mp3"])
def test_a_healthy_encoded_file_exits_0_without_a_warning(model, capsys, tmp_path, kind):
    audio, reference = two_clips()
    code, out, err = transcribe(capsys, write_encoded(tmp_path, kind, audio), "-q")
    assert code == 0 and err == ""
    assert wer(reference, out) < 0.2


def test_word_times_writes_each_word_as_it_commits(model, capsys, tmp_path):
    """``--word-times``: the words of the transcript, one JSON line each, stamped when they
    committed (bench/bench_app.py --beside transcribe scores them against the window's)."""
    times = tmp_path / "words.jsonl"
    code, out, err = transcribe(
        capsys, DATA / "beckett.wav", "--speed", "inf", "--no-live", "--word-times", times
    )
    assert code == 0, err
    lines = [json.loads(line) for line in times.read_text().splitlines()]
    assert words_of("".join(w["text"] for w in lines)) == words_of(out)
    assert wer(reference_text("beckett"), out) < 0.2
    ats = [w["at"] for w in lines]
    assert ats == sorted(ats) and ats[0] >= 0
    assert len(set(ats)) >= 2  # written as they committed, not all at the end
    assert all(0 <= w["start"] <= w["end"] <= 10.0 for w in lines)


def test_word_times_without_speed_is_refused_before_the_model_loads(model, capsys, tmp_path):
    times = tmp_path / "words.jsonl"
    code, out, err = transcribe(capsys, DATA / "ss-0880.wav", "--word-times", times)
    assert code == 1 and "--word-times needs --speed" in err
    assert model == [] and not times.exists() and not out


def test_an_unwritable_word_times_file_is_refused_before_the_model_loads(model, capsys, tmp_path):
    times = tmp_path / "no such folder" / "words.jsonl"
    args = ("--speed", "1", "--word-times", times)
    code, out, err = transcribe(capsys, DATA / "ss-0880.wav", *args)
    assert code == 1 and f"cannot write --word-times file {times}" in err
    assert model == [] and not out
