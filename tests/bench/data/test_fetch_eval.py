"""bench/data/fetch_eval.py and eval_set.py: the evaluation set has the promised properties.

The fast tests check the pieces (noise at an SNR, the stream's plan, the clip list, the error
paths) on generated audio. The slow one downloads the two packages from their registries,
builds the whole set in a temp folder and measures what it wrote: over 10 minutes of speech,
each noisy file at its SNR, a stream of about 10 minutes whose pauses are 0.3-5 s of silence.
"""

from __future__ import annotations

import io
import json
import re
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

BENCH_DATA = Path(__file__).resolve().parents[3] / "bench" / "data"
sys.path.insert(0, str(BENCH_DATA))
import eval_set as E  # noqa: E402
import fetch_eval as F  # noqa: E402

RATE = E.SAMPLE_RATE


def tone_bursts(seconds: float, seed: int) -> np.ndarray:
    """Speech-like test audio: tone bursts with gaps, some loud enough to clip with noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * RATE)) / RATE
    envelope = (np.sin(2 * np.pi * 1.5 * t) > 0).astype(np.float32)
    return (0.9 * envelope * np.sin(2 * np.pi * rng.uniform(150, 400) * t)).astype(np.float32)


def test_pink_noise_is_seeded_and_of_unit_power():
    a, b, c = E.pink_noise(48_000, 1), E.pink_noise(48_000, 1), E.pink_noise(48_000, 2)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    assert E.power(a) == pytest.approx(1.0, rel=1e-3)
    spectrum = np.abs(np.fft.rfft(a)) ** 2
    freqs = np.fft.rfftfreq(len(a), 1 / RATE)
    low = spectrum[(freqs > 100) & (freqs < 200)].mean()
    high = spectrum[(freqs > 1000) & (freqs < 2000)].mean()
    assert 5 < low / high < 20  # 1/f: about ten times the power per Hz a decade lower


@pytest.mark.parametrize("snr", E.SNRS)
def test_noise_is_mixed_at_the_asked_snr_even_where_it_would_clip(snr):
    speech = tone_bursts(3.0, snr)
    noisy, gain = E.mix_at_snr(speech, E.pink_noise(len(speech), 7), snr)
    assert np.max(np.abs(noisy)) <= 0.98 + 1e-6 and gain < 1.0
    assert E.measured_snr(speech, noisy, gain=gain) == pytest.approx(snr, abs=1e-3)


def span_snrs(clean, noisy, spans, gain):
    """Each span's SNR: its speech's power over the noise's under it."""
    cuts = [slice(int(start * RATE), int(end * RATE)) for _, start, end in spans]
    return [E.measured_snr(clean[cut], noisy[cut], gain=gain) for cut in cuts]


def test_each_utterance_of_the_stream_is_at_the_snr_however_loud_its_recording():
    loud = tone_bursts(2.0, 3)
    quiet = loud * 10 ** (-16 / 20)  # two recordings 16 dB apart, as the set's sources are
    layout = [1.0, "a", 2.0, "b", 1.5, "c", 1.0]
    audio, spans = E.assemble(layout, {"a": loud, "b": quiet, "c": loud})
    noise = E.pink_noise(len(audio), 5)
    noisy, gain = E.mix_stream_at_snr(audio, noise, spans, 10)
    assert span_snrs(audio, noisy, spans, gain) == pytest.approx([10, 10, 10], abs=1e-3)
    level = np.abs(noisy / gain - audio)
    pause = level[int(spans[0][2] * RATE) + 100 : int(spans[1][1] * RATE) - 100]
    assert pause[: RATE // 4].mean() > 3 * pause[-RATE // 4 :].mean()  # eases to the quiet one
    # one level for the whole stream (its utterances' mean power) leaves the quiet one far under
    flat, flat_gain = E.mix_at_snr(audio, noise, 10, E.power(np.concatenate([loud, quiet, loud])))
    assert span_snrs(audio, flat, spans, flat_gain)[1] < 0


def test_stream_plan_is_seeded_about_ten_minutes_with_pauses_in_range():
    rng = np.random.default_rng(0)
    seconds = {f"c{i:03d}": float(rng.uniform(1, 12)) for i in range(150)}
    layout = E.plan_stream(seconds)
    assert layout == E.plan_stream(seconds)
    assert layout != E.plan_stream(seconds, seed=E.SEED + 1)
    names = [x for x in layout if isinstance(x, str)]
    pauses = [x for x in layout[1:-1] if isinstance(x, float)]
    assert len(names) == len(set(names)) and len(pauses) == len(names) - 1
    assert all(E.PAUSE_RANGE[0] <= p <= E.PAUSE_RANGE[1] for p in pauses)
    assert [type(x) for x in layout[1:-1]] == [str, float] * len(pauses) + [str]
    total = sum(x if isinstance(x, float) else seconds[x] for x in layout)
    assert E.STREAM_SECONDS - 15 <= total <= E.STREAM_SECONDS


def test_assemble_puts_each_clip_at_its_span_with_silence_between():
    clips = {"a": np.ones(RATE, np.float32), "b": np.full(RATE // 2, 0.5, np.float32)}
    audio, spans = E.assemble([0.5, "a", 1.25, "b", 1.0], clips)
    assert spans == [("a", 0.5, 1.5), ("b", 2.75, 3.25)]
    assert len(audio) == int(4.25 * RATE)
    assert not audio[int(1.5 * RATE) : int(2.75 * RATE)].any()


def test_trim_keeps_the_sound_and_a_short_margin():
    sound = tone_bursts(1.0, 1)
    padded = np.concatenate([np.zeros(RATE), sound, np.zeros(RATE)]).astype(np.float32)
    trimmed = E.trim_silence(padded)
    assert len(sound) <= len(trimmed) <= len(sound) + 2 * (E.TRIM_MARGIN + 0.02) * RATE


def test_the_clip_list_has_ten_minutes_of_references_without_digits():
    specs = F.read_clip_list()
    assert len({s.name for s in specs}) == len(specs) > 100
    assert {s.source for s in specs} == set(F.SOURCES)
    for spec in specs:
        assert len(spec.reference.split()) >= 5, spec.name
        assert not re.search(r"[\d\[\]#*@]", spec.reference), spec.name


def test_a_malformed_clip_list_is_refused_with_its_line(tmp_path):
    bad = tmp_path / "clips.tsv"
    bad.write_text("# comment\nname\tnowhere\tmember\ttext\n")
    with pytest.raises(F.FetchError, match="clips.tsv:2"):
        F.read_clip_list(bad)


def test_a_package_with_the_wrong_checksum_is_deleted_and_refused(tmp_path):
    source = F.SOURCES["asterisk"]
    planted = tmp_path / f"{source.package}_{source.version}_all.deb"
    planted.write_bytes(b"!<arch>\nnot the real package")
    with pytest.raises(F.FetchError, match="SHA-256"):
        F.download(source, tmp_path)
    assert not planted.exists()


def test_a_member_with_the_wrong_checksum_or_no_deb_archive_is_refused(tmp_path):
    wheel = tmp_path / "moonshine_voice-0.1.5-py3-none-any.whl"
    member = next(iter(F.MEMBER_SHA256))
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr(member, b"RIFF not the clip")
    with pytest.raises(F.FetchError, match="SHA-256"):
        F.PackageReader({"moonshine": wheel}).read("moonshine", member)
    not_deb = tmp_path / "x.deb"
    not_deb.write_bytes(b"PK\x03\x04")
    with pytest.raises(F.FetchError, match="not a Debian package"):
        F.deb_data_tar(not_deb)


def test_decode_gives_16_khz_mono_float():
    import soundfile as sf

    t = np.arange(48_000) / 48_000
    stereo = np.stack([np.sin(2 * np.pi * 440 * t)] * 2, axis=1) * 0.5
    buf = io.BytesIO()
    sf.write(buf, stereo, 48_000, format="WAV", subtype="PCM_16")
    audio = F.decode(buf.getvalue(), None)
    assert audio.dtype == np.float32 and abs(len(audio) - RATE) <= 64
    assert E.power(audio) == pytest.approx(0.125, rel=0.05)


def test_loading_without_a_built_set_or_with_an_unknown_name_says_what_to_do(tmp_path):
    with pytest.raises(FileNotFoundError, match="fetch_eval.py"):
        E.load("stream", tmp_path)
    (tmp_path / E.MANIFEST).write_text("{}")
    with pytest.raises(ValueError, match="unknown data set"):
        E.load("stream-snr3", tmp_path)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    cache = tmp_path_factory.mktemp("eval")
    assert F.main(["--cache", str(cache)]) == 0
    return cache, json.loads((cache / E.MANIFEST).read_text())


@pytest.mark.slow
def test_the_built_clips_are_over_ten_minutes_and_at_their_snrs(built):
    cache, manifest = built
    clips = manifest["clips"]
    assert sum(c["seconds"] for c in clips.values()) >= 600
    assert {c["source"] for c in clips.values()} == {"asterisk", "moonshine"}
    for name in sorted(clips)[::15]:
        clean = E.read_wav(cache / "clips" / "clean" / f"{name}.wav")
        assert len(clean) / RATE == pytest.approx(clips[name]["seconds"], abs=1e-3)
        for snr in E.SNRS:
            noisy = E.read_wav(cache / "clips" / f"snr{snr}" / f"{name}.wav")
            gain = clips[name]["gain"][str(snr)]
            measured = E.measured_snr(clean, noisy, gain=gain)
            assert measured == pytest.approx(snr, abs=0.05), (name, snr)


@pytest.mark.slow
def test_the_built_stream_is_ten_minutes_with_pauses_of_silence_and_its_reference(built):
    cache, manifest = built
    stream = manifest["stream"]
    audio = E.read_wav(cache / "stream" / "clean.wav")
    assert 570 <= len(audio) / RATE <= 600
    utts = stream["utterances"]
    spans = [(u["name"], u["start"], u["end"]) for u in utts]
    for before, after, pause in zip(utts[:-1], utts[1:], stream["pauses"], strict=True):
        assert E.PAUSE_RANGE[0] <= pause <= E.PAUSE_RANGE[1]
        assert after["start"] - before["end"] == pytest.approx(pause, abs=1e-3)
        gap = audio[int(before["end"] * RATE) + 16 : int(after["start"] * RATE) - 16]  # ms times
        assert not gap.any()
    for snr in E.SNRS:
        noisy = E.read_wav(cache / "stream" / f"snr{snr}.wav")
        gain = stream["gain"][str(snr)]
        # every utterance, the quiet recording's too
        assert span_snrs(audio, noisy, spans, gain) == pytest.approx([snr] * len(spans), abs=0.05)
    reference = (cache / "stream" / "reference.txt").read_text().strip()
    assert reference == " ".join(manifest["clips"][u["name"]]["reference"] for u in utts)
    head = E.load("stream-snr10@60", cache)
    kept = [u for u in utts if u["end"] <= 60]
    assert len(head.audio) / RATE == pytest.approx(kept[-1]["end"] + 0.5, abs=1e-3)
    assert head.utterances == [manifest["clips"][u["name"]]["reference"] for u in kept]
    with pytest.raises(ValueError, match="no utterance"):
        E.load("stream@0.1", cache)
    clips = E.load("clips-snr5@30", cache)
    assert 0 < len(clips.audio) / RATE <= 30 and clips.reference.startswith("That agent")


@pytest.mark.slow
def test_if_missing_leaves_a_built_set_alone_and_takes_no_other_set_for_it(built, tmp_path):
    cache, _ = built
    stamp = (cache / E.MANIFEST).stat().st_mtime_ns
    assert F.main(["--cache", str(cache), "--if-missing"]) == 0
    assert (cache / E.MANIFEST).stat().st_mtime_ns == stamp  # nothing fetched again
    (tmp_path / E.MANIFEST).write_text('{"clips": {"only-one": {}}}')  # another clip list
    assert not F.built(tmp_path)
    assert not F.built(tmp_path / "absent")
