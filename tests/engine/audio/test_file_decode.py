"""Streaming file decoding: exact chunks, repairs of bad samples, truncation, bounded memory."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import soundfile as sf

from desktop_rt.engine.audio.file_decode import (
    AudioFileReader,
    DecodeReport,
    SampleRepair,
    load_audio_file,
)
from desktop_rt.errors import AudioDecodeError
from tests.support.bad_audio import cut_mp3, write_mp3
from tests.support.clips import DATA, read_clip
from tests.support.damaged_files import KINDS, cut_at, overwrite_inside, write_encoded


def decode(path, **kwargs) -> tuple[np.ndarray, DecodeReport]:
    reader = AudioFileReader(path, **kwargs)
    chunks = list(reader.chunks())
    return (np.concatenate(chunks) if chunks else np.zeros(0, np.float32)), reader.report


def test_chunks_are_exact_and_equal_the_whole_file():
    reader = AudioFileReader(DATA / "beckett.wav")
    chunks = list(reader.chunks(1600))
    expected, _ = sf.read(DATA / "beckett.wav", dtype="float32")
    assert all(len(c) == 1600 for c in chunks[:-1]) and 0 < len(chunks[-1]) <= 1600
    assert np.array_equal(np.concatenate(chunks), expected)
    assert reader.duration == pytest.approx(len(expected) / 16000)
    assert not reader.report.partial and reader.report.warnings() == []


def test_stereo_float_at_another_rate_becomes_mono_16k(tmp_path):
    clip = read_clip("ss-0880")
    path = tmp_path / "stereo.wav"
    import soxr

    at_44k = soxr.resample(clip, 16000, 44100).astype(np.float32)
    sf.write(path, np.stack([at_44k, 0.5 * at_44k], axis=1), 44100, subtype="FLOAT")
    audio, report = decode(path)
    assert abs(len(audio) - len(clip)) <= 2
    assert report.warnings() == [] and not report.partial


def test_one_nan_in_190000_is_silenced_with_a_count(tmp_path):
    audio = np.resize(read_clip("beckett"), 190_000).astype(np.float32)
    audio[95_000] = np.nan
    path = tmp_path / "one-nan.wav"
    sf.write(path, audio, 16000, subtype="FLOAT")
    out, report = decode(path)
    assert np.isfinite(out).all() and out[95_000] == 0.0
    assert report.non_finite == 1
    assert "1 of 190,000 samples" in report.warnings()[0]
    assert "replaced by silence" in report.warnings()[0]


def test_one_percent_nan_and_inf_are_silenced(tmp_path):
    audio = read_clip("beckett").copy()
    rng = np.random.default_rng(1)
    bad = rng.choice(len(audio), size=len(audio) // 100, replace=False)
    audio[bad[::2]] = np.nan
    audio[bad[1::2]] = np.inf
    path = tmp_path / "bad.wav"
    sf.write(path, audio, 16000, subtype="FLOAT")
    out, report = decode(path)
    assert np.isfinite(out).all() and np.abs(out).max() <= 1.0
    assert report.non_finite == len(bad)
    assert "(1.0%) were NaN or infinite" in report.warnings()[0]


def test_int16_scaled_floats_are_scaled_back(tmp_path):
    clip = read_clip("beckett")
    path = tmp_path / "scaled.wav"
    sf.write(path, clip * 32768.0, 16000, subtype="FLOAT")
    out, report = decode(path)
    peak = float(np.abs(clip).max())
    assert report.scaled_by == pytest.approx(1 / (32768 * peak), rel=1e-4)
    assert np.allclose(out, clip / peak, atol=1e-5)
    (warning,) = report.warnings()
    assert "beyond full scale" in warning and "scaled by 1/" in warning


def test_overshoot_is_clipped_and_counted():
    report = DecodeReport("x")
    out = SampleRepair(report)(np.array([[0.5, 1.5, -3.0, np.nan]], dtype=np.float32))
    assert out.tolist() == [0.5, 1.0, -1.0, 0.0]
    assert (report.clipped, report.non_finite, report.values) == (2, 1, 4)
    assert any("were clipped" in w for w in report.warnings())


@pytest.mark.parametrize("raising", [False, True], ids=["at-a-frame", "inside-a-frame"])
def test_a_truncated_mp3_decodes_up_to_where_it_breaks(tmp_path, raising):
    clip = read_clip("beckett")
    whole = tmp_path / "whole.mp3"
    write_mp3(whole, clip)
    out, report = decode(cut_mp3(whole, tmp_path / "cut.mp3", 0.5, raising=raising))
    assert report.partial and report.declared_seconds == pytest.approx(len(clip) / 16000)
    assert (report.error is not None) == raising
    assert 3.5 < len(out) / 16000 < 6.5
    assert "truncated or damaged" in report.warnings()[-1]
    _, intact = decode(whole)
    assert not intact.partial


def test_a_file_cut_inside_a_packet_is_partial_not_an_error(tmp_path):
    clip = read_clip("beckett")
    sf.write(tmp_path / "whole.flac", clip, 16000)
    data = (tmp_path / "whole.flac").read_bytes()
    cut = tmp_path / "cut.flac"
    cut.write_bytes(data[: len(data) // 2])
    out, report = decode(cut)
    assert report.partial and report.error and len(out) > 16000
    with pytest.raises(AudioDecodeError, match="could not read audio"):
        load_audio_file(cut)  # the whole-file loader stays strict


def test_a_truncated_wav_is_partial(tmp_path):
    """FFmpeg clamps a WAV's data size to the file; the header's own size is the declared length."""
    clip = read_clip("beckett")
    whole = tmp_path / "whole.wav"
    sf.write(whole, clip, 16000, subtype="PCM_16")
    cut = tmp_path / "cut.wav"
    cut.write_bytes(whole.read_bytes()[: len(whole.read_bytes()) // 2])
    out, report = decode(cut)
    assert report.partial and report.declared_seconds == pytest.approx(len(clip) / 16000)
    assert 0.4 < len(out) / len(clip) < 0.6
    assert "truncated or damaged" in report.warnings()[-1]
    _, intact = decode(whole)
    assert not intact.partial


def test_a_streamed_wav_without_a_data_size_is_not_partial(tmp_path):
    """Writers that cannot seek leave 0xFFFFFFFF as the data size: the length is unknown."""
    path = tmp_path / "streamed.wav"
    sf.write(path, read_clip("beckett"), 16000, subtype="PCM_16")
    data = bytearray(path.read_bytes())
    at = data.find(b"data")
    data[at + 4 : at + 8] = b"\xff\xff\xff\xff"
    path.write_bytes(bytes(data))
    _, report = decode(path)
    assert not report.partial


def test_unreadable_files_fail_before_decoding(tmp_path):
    with pytest.raises(AudioDecodeError, match="does not exist"):
        AudioFileReader(tmp_path / "nope.wav")
    junk = tmp_path / "junk.mp3"
    junk.write_bytes(b"\x00garbage" * 100)
    with pytest.raises(AudioDecodeError, match="could not read audio"):
        AudioFileReader(junk)


@pytest.mark.slow
def test_a_long_file_streams_in_bounded_memory(tmp_path):
    """20 minutes (77 MB decoded) go through while the reader holds a few MB at most."""
    path = tmp_path / "long.wav"
    rate, minutes = 8000, 20
    rng = np.random.default_rng(0)
    with sf.SoundFile(path, "w", rate, 1, subtype="PCM_16") as out:
        for _ in range(minutes * 6):
            out.write((0.1 * rng.standard_normal(rate * 10)).astype(np.float32))
    reader = AudioFileReader(path)
    tracemalloc.start()
    try:
        total = 0
        for chunk in reader.chunks():
            total += len(chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert total == pytest.approx(minutes * 60 * 16000, abs=16)
    assert peak < 4_000_000 < total * 4 / 10


def two_clips_audio() -> np.ndarray:
    return np.concatenate([read_clip("beckett"), read_clip("ss-0870")]).astype(np.float32)


@pytest.mark.parametrize("kind", KINDS)
def test_a_healthy_encoded_file_is_whole_with_no_warning(tmp_path, kind):
    audio = two_clips_audio()
    out, report = decode(write_encoded(tmp_path, kind, audio))
    assert not report.partial and report.warnings() == []
    assert report.gaps == [] and report.cut_short is None
    assert abs(len(out) - len(audio)) < 0.05 * 16000


@pytest.mark.parametrize("kind", ["vorbis", "opus"])
def test_a_truncated_ogg_is_partial_although_its_length_looks_whole(tmp_path, kind):
    """FFmpeg takes an Ogg's length from the last page there is: only the structure shows it."""
    cut = cut_at(write_encoded(tmp_path, kind, two_clips_audio()), 0.55)
    out, report = decode(cut)
    assert report.declared_seconds == pytest.approx(len(out) / 16000, abs=0.05)  # no help
    assert (
        report.partial and report.cut_short == "the file ends inside an Ogg page: it was cut short"
    )
    assert 6.0 < len(out) / 16000 < 12.0
    (warning,) = report.warnings()
    assert warning.startswith("the file is truncated or damaged: audio decoded up to 0:")
    assert "(the file ends inside an Ogg page: it was cut short); the rest is missing" in warning
    assert "it declares" not in warning  # the declared length is the cut one


def test_an_ogg_cut_between_pages_has_no_end_of_stream_page(tmp_path):
    whole = write_encoded(tmp_path, "vorbis", two_clips_audio())
    data = whole.read_bytes()
    cut = tmp_path / "between.ogg"
    cut.write_bytes(data[: data.rfind(b"OggS", 0, len(data) // 2)])
    _, report = decode(cut)
    assert report.partial and "no end-of-stream page" in report.warnings()[0]


@pytest.mark.parametrize("kind", ["flac", "vorbis"])
def test_garbage_inside_a_file_is_a_located_gap(tmp_path, kind):
    """The decoder resynchronises after 4 KiB of garbage and raises nothing; the frames after it
    are stamped later than the audio decoded before them."""
    audio = two_clips_audio()
    whole = write_encoded(tmp_path, kind, audio)
    out, report = decode(overwrite_inside(whole))
    ((at, lost),) = report.gaps
    assert report.partial and not report.ends_early and report.error is None
    assert 4.0 < at < 13.0 and lost > 0.05
    assert len(out) / 16000 == pytest.approx(len(audio) / 16000 - lost, abs=0.05)
    (warning,) = report.warnings()
    assert warning.startswith(f"the file is damaged: {lost:.2f} s of audio at 0:")
    assert warning.endswith("could not be decoded and was skipped")
