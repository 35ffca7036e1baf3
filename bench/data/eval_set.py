"""The broader evaluation set: how it is built (noise, stream) and how benchmarks read it.

``fetch_eval.py`` writes it to a cache folder (``default_cache()``):

- ``clips/clean/NAME.wav``: 16 kHz mono PCM16, silence trimmed to 50 ms at each end;
- ``clips/snr{20,10,5}/NAME.wav``: the same clip plus pink noise, SNR over the whole clip;
- ``stream/clean.wav``: about 10 minutes of the clips in a seeded order, separated by digital
  silence of 0.3-5 s (seeded, uniform); ``stream/snr{20,10,5}.wav``: the same plus pink noise
  whose level is set under each utterance so that the utterance is at that SNR (its power over
  the noise's under it), moving linearly from one utterance's level to the next's across each
  pause: the clips come from recordings some 16 dB apart, and one level for the whole stream
  put the quiet one at -9 dB in the "10 dB" stream; ``stream/reference.txt``;
- ``manifest.json``: clips (source, reference, seconds, the gain of each noisy copy) and the stream's
  utterance spans and pauses.

:func:`load` turns a data set name (``stream``, ``stream-snr10``, ``clips-snr5``; a ``@90``
suffix keeps the utterances that end within the first 90 s) into audio and its utterances'
references. Only
the standard library, numpy and soundfile: the benchmark's peer venv imports this too.
"""

from __future__ import annotations

import json
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SAMPLE_RATE = 16_000
SEED = 15  # issue 15
SNRS = (20, 10, 5)
PAUSE_RANGE = (0.3, 5.0)
STREAM_SECONDS = 600.0
LEAD_IN, TAIL = 0.5, 1.0
TRIM_MARGIN = 0.05
MANIFEST = "manifest.json"
MANIFEST_VERSION = 2  # 2: the noisy streams' level follows each utterance
CLIP_GAP = 0.4  # between clips of a ``clips-*`` data set, as in bench's ``librivox`` stream


@dataclass(frozen=True)
class ClipSpec:
    name: str
    source: str
    member: str
    reference: str


def default_cache() -> Path:
    env = os.environ.get("DESKTOP_RT_EVAL_DIR")
    return Path(env) if env else Path.home() / ".cache" / "desktop-rt" / "eval"


# ---------------------------------------------------------------------------------------------
# Audio
# ---------------------------------------------------------------------------------------------
def read_wav(path: Path, frames: int = -1) -> np.ndarray:
    """The first ``frames`` samples (-1: all) of a 16 kHz file as mono float32, held once: a
    mono file's samples are returned as read, not copied."""
    import soundfile as sf

    audio, rate = sf.read(str(path), frames=frames, dtype="float32", always_2d=True)
    if rate != SAMPLE_RATE:
        raise ValueError(f"{path} is {rate} Hz, not {SAMPLE_RATE}")
    if audio.shape[1] == 1:
        return audio[:, 0]
    return audio.mean(axis=1, dtype=np.float32)


def write_wav(path: Path, audio: np.ndarray) -> None:
    import soundfile as sf

    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), np.clip(audio, -1.0, 32767 / 32768), SAMPLE_RATE, subtype="PCM_16")


def trim_silence(audio: np.ndarray, floor_db: float = -45.0) -> np.ndarray:
    """``audio`` without leading and trailing frames quieter than ``floor_db`` below its peak
    (20 ms frames), keeping ``TRIM_MARGIN`` seconds at each end."""
    frame = SAMPLE_RATE // 50
    n = len(audio) // frame
    if n == 0:
        return audio
    rms = np.sqrt(np.mean(audio[: n * frame].reshape(n, frame) ** 2, axis=1) + 1e-12)
    loud = np.flatnonzero(20 * np.log10(rms / rms.max()) > floor_db)
    margin = int(TRIM_MARGIN * SAMPLE_RATE)
    start = max(0, loud[0] * frame - margin)
    end = min(len(audio), (loud[-1] + 1) * frame + margin)
    return audio[start:end]


def power(audio: np.ndarray) -> float:
    return float(np.mean(np.square(audio, dtype=np.float64)))


def noise_seed(name: str) -> int:
    return SEED * 1_000_003 + zlib.crc32(name.encode())


def pink_noise(n: int, seed: int) -> np.ndarray:
    """``n`` samples of Gaussian noise with a 1/f power spectrum (flat below 20 Hz), unit power."""
    rng = np.random.default_rng(seed)
    spectrum = np.fft.rfft(rng.standard_normal(n))
    freqs = np.fft.rfftfreq(n, 1 / SAMPLE_RATE)
    spectrum /= np.sqrt(np.maximum(freqs, 20.0))
    noise = np.fft.irfft(spectrum, n)
    return (noise / np.sqrt(power(noise))).astype(np.float32)


def mix_at_snr(
    speech: np.ndarray, noise: np.ndarray, snr_db: float, speech_power: float | None = None
) -> tuple[np.ndarray, float]:
    """``speech`` plus ``noise`` scaled to ``snr_db`` below ``speech_power`` (default: the power
    of all of ``speech``), and the gain both were then scaled by so that the sum never clips
    (1.0 where it would not)."""
    p_speech = power(speech) if speech_power is None else speech_power
    scaled = noise[: len(speech)] * np.sqrt(p_speech / power(noise) / 10 ** (snr_db / 10))
    mixed = speech + scaled
    gain = min(1.0, 0.98 / float(np.max(np.abs(mixed))))
    return (mixed * gain).astype(np.float32), gain


def mix_stream_at_snr(
    audio: np.ndarray,
    noise: np.ndarray,
    spans: list[tuple[str, float, float]],
    snr_db: float,
) -> tuple[np.ndarray, float]:
    """``audio`` plus ``noise`` whose level puts each span (an utterance) at ``snr_db`` over the
    noise under it, the level moving linearly across the pauses between spans (held before the
    first and after the last), and the gain the sum was scaled by so that it never clips."""
    points, levels = [], []
    for _, start, end in spans:
        a, b = int(start * SAMPLE_RATE), int(end * SAMPLE_RATE)
        level = np.sqrt(power(audio[a:b]) / power(noise[a:b]) / 10 ** (snr_db / 10))
        points += [a, b - 1]
        levels += [level, level]
    envelope = np.interp(np.arange(len(audio)), points, levels).astype(np.float32)
    mixed = audio + noise[: len(audio)] * envelope
    gain = min(1.0, 0.98 / float(np.max(np.abs(mixed))))
    return (mixed * gain).astype(np.float32), gain


def measured_snr(
    clean: np.ndarray,
    noisy: np.ndarray,
    spans: list[tuple[str, float, float]] | None = None,
    gain: float = 1.0,
) -> float:
    """SNR of ``noisy`` (``gain`` times speech plus noise) against ``clean``; with ``spans``,
    the speech power is that of the spans only."""
    noise = noisy / gain - clean
    speech = clean
    if spans:
        speech = np.concatenate(
            [clean[int(s * SAMPLE_RATE) : int(e * SAMPLE_RATE)] for _, s, e in spans]
        )
    return 10 * float(np.log10(power(speech) / power(noise)))


# ---------------------------------------------------------------------------------------------
# The stream
# ---------------------------------------------------------------------------------------------
def plan_stream(
    seconds: dict[str, float], target: float = STREAM_SECONDS, seed: int = SEED
) -> list[str | float]:
    """A layout (clip names and float pauses) of the clips in a seeded order, with seeded
    pauses in ``PAUSE_RANGE`` between them, as long as fits in ``target`` seconds."""
    rng = np.random.default_rng(seed)
    names = sorted(seconds)
    layout: list[str | float] = [LEAD_IN]
    total = LEAD_IN + TAIL
    for i in rng.permutation(len(names)):
        pause = round(float(rng.uniform(*PAUSE_RANGE)), 3)
        need = seconds[names[i]] + (pause if len(layout) > 1 else 0.0)
        if total + need > target:
            continue
        if len(layout) > 1:
            layout.append(pause)
        layout.append(names[i])
        total += need
    layout.append(TAIL)
    return layout


def assemble(
    layout: list[str | float], clips: dict[str, np.ndarray]
) -> tuple[np.ndarray, list[tuple[str, float, float]]]:
    """The layout's audio (pauses as digital silence) and each clip's (name, start, end) in it."""
    parts, spans, at = [], [], 0
    for item in layout:
        if isinstance(item, float):
            part = np.zeros(int(round(item * SAMPLE_RATE)), dtype=np.float32)
        else:
            part = clips[item]
            spans.append((item, at / SAMPLE_RATE, (at + len(part)) / SAMPLE_RATE))
        parts.append(part)
        at += len(part)
    return np.concatenate(parts), spans


# ---------------------------------------------------------------------------------------------
# Reading a data set
# ---------------------------------------------------------------------------------------------
def read_manifest(cache: Path) -> dict:
    path = cache / MANIFEST
    if not path.exists():
        raise FileNotFoundError(
            f"no evaluation set in {cache}: run .venv/bin/python bench/data/fetch_eval.py"
        )
    return json.loads(path.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class EvalData:
    """A data set as a benchmark streams it: audio, its utterances' references in order."""

    name: str
    audio: np.ndarray
    utterances: list[str]

    @property
    def reference(self) -> str:
        return " ".join(self.utterances)

    def describe(self) -> str:
        return (
            f"{self.name}: {len(self.utterances)} utterances, {len(self.audio) / SAMPLE_RATE:.1f} s"
        )


def load(name: str, cache: Path | None = None) -> EvalData:
    """Data set ``name``: ``stream[-snrN][@SECONDS]`` or ``clips[-snrN][@SECONDS]`` (the clips
    in name order, 0.4 s apart)."""
    cache = cache or default_cache()
    manifest = read_manifest(cache)
    base, _, limit = name.partition("@")
    kind, _, snr = base.partition("-")
    variant = snr or "clean"
    if kind not in ("stream", "clips") or variant not in ["clean"] + [f"snr{s}" for s in SNRS]:
        raise ValueError(f"unknown data set {name!r}: stream[-snrN][@S] or clips[-snrN][@S]")
    keep = float(limit) if limit else float("inf")
    if kind == "stream":
        utts = [u for u in manifest["stream"]["utterances"] if u["end"] <= keep]
        if not utts:
            raise ValueError(f"{name!r}: no utterance ends within the first {limit} s")
        frames = int((utts[-1]["end"] + 0.5) * SAMPLE_RATE) if limit else -1
        audio = read_wav(cache / "stream" / f"{variant}.wav", frames)  # only what is streamed
        names = [u["name"] for u in utts]
    else:
        names, total = [], 0.0
        for clip in sorted(manifest["clips"]):
            total += manifest["clips"][clip]["seconds"] + CLIP_GAP
            if total > keep:
                break
            names.append(clip)
        audio = read_clips([cache / "clips" / variant / f"{n}.wav" for n in names])
    return EvalData(name, audio, [manifest["clips"][n]["reference"] for n in names])


def read_clips(paths: list[Path]) -> np.ndarray:
    """The files one after the other, each followed by ``CLIP_GAP`` s of silence, read into one
    float32 array sized from their headers (no list of parts beside it)."""
    import soundfile as sf

    gap = int(CLIP_GAP * SAMPLE_RATE)
    lengths = [sf.info(str(p)).frames for p in paths]
    audio = np.zeros(sum(lengths) + gap * len(paths), dtype=np.float32)
    at = 0
    for path, n in zip(paths, lengths, strict=True):
        audio[at : at + n] = read_wav(path)
        at += n + gap
    return audio
