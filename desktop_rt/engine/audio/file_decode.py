"""Audio files decoded in a stream: any format PyAV reads, as float32 mono chunks at 16 kHz.

Call order: ``reader = AudioFileReader(path)`` opens the file (and raises AudioDecodeError when
it cannot be read at all); ``for chunk in reader.chunks(): ...`` decodes it piece by piece;
then ``reader.report`` says what was repaired and whether the audio ended early
(:attr:`DecodeReport.partial`). Invariants: a reader holds one decoded frame and less than one
chunk, whatever the file's length; every sample it yields is finite and within [-1, 1].
Policy (docs/design/file_transcription.md): NaN and infinite samples become silence; float PCM
beyond full scale is scaled down by its peak, other overshoot is clipped; a damaged packet is
skipped, and a damaged or truncated file is decoded up to where it breaks. Damage is found by
the decoder's errors, by frames whose timestamps jump past the audio decoded so far (what the
decoder skipped while it resynchronised), by the length the header declares, and for Ogg by a
last page that does not close the stream (:mod:`~desktop_rt.engine.audio.ogg_tail`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.audio.codecs import StreamResampler
from desktop_rt.engine.audio.ogg_tail import ogg_end_problem
from desktop_rt.errors import AudioDecodeError

__all__ = ["AudioFileReader", "DecodeReport", "SampleRepair", "load_audio_file"]

log = logging.getLogger(__name__)

CHUNK_SECONDS = 1.0
_SCALE_TOLERANCE = 1e-3  # float PCM peaking this little over 1.0 is clipped, not rescaled
_CLIP_WARNING_FRACTION = 1e-3  # lossy codecs overshoot a little; warn past this share clipped
_SHORT_TOLERANCE = (0.5, 0.02)  # decoded audio this much (s, share) short of the declared is
_MAX_BAD_PACKETS = 50  # damaged packets in a row after which decoding gives up


@dataclass
class DecodeReport:
    """What decoding one file found: repairs made and whether the audio ended early."""

    path: str
    declared_seconds: float | None = None  # what the file's header says; None: unknown
    decoded_seconds: float = 0.0
    values: int = 0  # decoded sample values, all channels
    non_finite: int = 0  # of those, NaN or infinite (replaced by silence)
    peak: float = 0.0  # the largest finite magnitude seen
    scaled_by: float | None = None  # gain applied to float PCM beyond full scale
    clipped: int = 0  # sample values clipped to full scale
    bad_packets: int = 0  # packets the decoder refused and that were skipped
    error: str | None = None  # the first decoding error
    cut_short: str | None = None  # why the file's structure shows it was cut (Ogg's last page)
    gaps: list[tuple[float, float]] = field(default_factory=list)  # (at, lost) seconds skipped

    @property
    def lost_seconds(self) -> float:
        """Audio skipped inside the file, where the decoder lost and found the stream again."""
        return sum(lost for _, lost in self.gaps)

    @property
    def partial(self) -> bool:
        """Audio is missing: skipped inside the file, or its end."""
        return bool(self.gaps) or self.ends_early

    @property
    def ends_early(self) -> bool:
        """The file is cut short: by its structure, by an error no audio followed, or well short
        of the length it declares (audio skipped inside it counted as decoded)."""
        if self.cut_short is not None or (self.error is not None and not self.gaps):
            return True
        if self.declared_seconds is None:
            return False
        seconds, share = _SHORT_TOLERANCE
        margin = max(seconds, share * self.declared_seconds)
        return self.decoded_seconds + self.lost_seconds < self.declared_seconds - margin

    def warnings(self) -> list[str]:
        """One sentence for each repair and for an early end, for people to read."""
        out = []
        if self.non_finite:
            out.append(
                f"{self.non_finite:,} of {self.values:,} samples "
                f"({_percent(self.non_finite, self.values)}) were NaN or infinite; they were "
                f"replaced by silence"
            )
        if self.scaled_by is not None:
            hint = " (float audio written at integer scale?)" if self.peak > 2 else ""
            out.append(
                f"samples went up to {self.peak:.6g}, beyond full scale (1.0){hint}; the audio "
                f"was scaled by 1/{1 / self.scaled_by:.6g}"
            )
        if self.clipped > _CLIP_WARNING_FRACTION * max(1, self.values):
            out.append(
                f"{self.clipped:,} samples ({_percent(self.clipped, self.values)}) beyond full "
                f"scale (peak {self.peak:.3g}) were clipped"
            )
        if self.gaps:
            at, lost = self.gaps[0]
            where = f"at {_clock(at)}" if len(self.gaps) == 1 else f"in {len(self.gaps)} places"
            reason = f" ({self.error})" if self.error else ""
            out.append(
                f"the file is damaged: {_lost_text(self.lost_seconds)} of audio {where} could "
                f"not be decoded and {'was' if len(self.gaps) == 1 else 'were'} skipped{reason}"
            )
        if self.ends_early:
            declared = (
                f" of the {_clock(self.declared_seconds)} it declares"
                if self.declared_seconds and self.cut_short is None
                else ""
            )
            reason = f" ({self.cut_short or self.error})" if self.cut_short or self.error else ""
            out.append(
                f"the file is truncated or damaged: audio decoded up to "
                f"{_clock(self.decoded_seconds)}{declared}{reason}; the rest is missing"
            )
        return out


class SampleRepair:
    """Turns decoded sample blocks into finite mono audio within [-1, 1], counting repairs.

    ``gain`` (from a scan of float PCM beyond full scale) scales every block; what still
    overshoots is clipped.
    """

    def __init__(self, report: DecodeReport, gain: float = 1.0):
        self.report = report
        self.gain = gain

    def __call__(self, block: np.ndarray) -> np.ndarray:
        """``block``: float32 (channels, samples); the mono, repaired samples."""
        report = self.report
        report.values += block.size
        finite = np.isfinite(block)
        if not finite.all():
            report.non_finite += int(block.size - np.count_nonzero(finite))
            block = np.where(finite, block, np.float32(0.0))
        if block.size:
            report.peak = max(report.peak, float(np.max(np.abs(block))))
        mono = block.mean(axis=0, dtype=np.float32) if len(block) > 1 else block[0]
        if self.gain != 1.0:
            mono = mono * np.float32(self.gain)
        over = np.abs(mono) > 1.0
        if over.any():
            report.clipped += int(np.count_nonzero(over))
            mono = np.clip(mono, -1.0, 1.0)
        return np.asarray(mono, dtype=np.float32)


class AudioFileReader:
    """One audio file, decoded in a stream to float32 mono at ``rate`` (see the module)."""

    def __init__(self, path: str | Path, rate: int = SAMPLE_RATE):
        self.path = Path(path)
        self.rate = int(rate)
        if not self.path.is_file():
            raise AudioDecodeError(f"audio file {self.path} does not exist")
        declared, codec, container = _probe(self.path)
        self.codec = codec
        self.cut_short = ogg_end_problem(self.path) if container == "ogg" else None
        self.report = DecodeReport(str(self.path), declared_seconds=declared)

    @property
    def duration(self) -> float | None:
        """Seconds the file declares (None when its header does not say)."""
        return self.report.declared_seconds

    def chunks(self, chunk_samples: int | None = None) -> Iterator[np.ndarray]:
        """The file's audio in chunks of ``chunk_samples`` (the last one shorter); each call
        decodes the file again and starts a new :attr:`report`.

        Raises AudioDecodeError when not one sample could be decoded."""
        size = chunk_samples or int(CHUNK_SECONDS * self.rate)
        report = self.report = DecodeReport(str(self.path), self.report.declared_seconds)
        repair = SampleRepair(report, self._gain())
        pending: list[np.ndarray] = []
        held = 0
        for mono in self._mono_stream(repair):
            pending.append(mono)
            held += len(mono)
            if held < size:
                continue
            joined = np.concatenate(pending)
            whole = len(joined) - len(joined) % size
            for start in range(0, whole, size):
                yield joined[start : start + size]
            pending, held = [joined[whole:]], len(joined) - whole
            report.decoded_seconds += whole / self.rate
        if held:
            report.decoded_seconds += held / self.rate
            yield np.concatenate(pending)
        if report.error is not None and report.decoded_seconds == 0:
            raise AudioDecodeError(f"could not read audio from {self.path}: {report.error}")

    def _mono_stream(self, repair: SampleRepair) -> Iterator[np.ndarray]:
        """Repaired mono blocks at the output rate, resampled with state across blocks."""
        resampler: StreamResampler | None = None
        for frame in self._frames(repair.report):
            if resampler is None or resampler.in_rate != frame.sample_rate:
                if resampler is not None:
                    yield resampler.process(np.zeros(0, np.float32), last=True)
                resampler = StreamResampler(frame.sample_rate, self.rate)
            yield resampler.process(repair(_float_channels(frame)))
        if resampler is not None:
            yield resampler.process(np.zeros(0, np.float32), last=True)

    def _frames(self, report: DecodeReport) -> Iterator[Any]:
        """Decoded frames in order; a damaged packet is skipped (and noted in ``report``), a
        broken stream ends them."""
        import av

        in_a_row = 0
        timeline = _Timeline(report)
        try:
            with av.open(str(self.path)) as container:
                for packet in container.demux(container.streams.audio[0]):
                    try:
                        frames = packet.decode()
                    except av.FFmpegError as exc:
                        report.bad_packets += 1
                        report.error = report.error or _reason(exc)
                        in_a_row += 1
                        if in_a_row > _MAX_BAD_PACKETS:
                            return
                        continue
                    in_a_row = 0
                    for frame in frames:
                        timeline.note(frame)
                        yield frame
        except (av.FFmpegError, OSError) as exc:
            report.error = report.error or _reason(exc)
        report.cut_short = self.cut_short

    def _gain(self) -> float:
        """1, or for float PCM beyond full scale the gain that brings its peak to 1."""
        if not self.codec.startswith("pcm_f"):
            return 1.0
        peak = 0.0
        for frame in self._frames(DecodeReport(str(self.path))):  # errors: the real pass's
            block = _float_channels(frame)
            finite = block[np.isfinite(block)]
            if finite.size:
                peak = max(peak, float(np.max(np.abs(finite))))
        if peak <= 1.0 + _SCALE_TOLERANCE:
            return 1.0
        self.report.scaled_by = 1.0 / peak
        return 1.0 / peak


def load_audio_file(path: str | Path, rate: int = SAMPLE_RATE) -> np.ndarray:
    """A whole audio file as float32 mono at ``rate``, repaired as :class:`AudioFileReader`
    repairs it (repairs are logged); any decoding error raises AudioDecodeError."""
    reader = AudioFileReader(path, rate)
    chunks = list(reader.chunks())
    if reader.report.error is not None:
        raise AudioDecodeError(f"could not read audio from {reader.path}: {reader.report.error}")
    for warning in reader.report.warnings():
        log.warning("%s: %s", reader.path, warning)
    if not chunks:
        return np.zeros(0, dtype=np.float32)
    return np.concatenate(chunks).astype(np.float32, copy=False)


def _probe(path: Path) -> tuple[float | None, str, str]:
    """The duration the file's header declares (None if FFmpeg only guesses it from the
    bitrate), the audio codec's and the container's names; raises AudioDecodeError for a file
    with no audio."""
    import av
    import av.logging

    level = av.logging.get_level()
    av.logging.set_level(av.logging.WARNING)
    try:
        with av.logging.Capture() as messages, av.open(str(path)) as container:
            if not container.streams.audio:
                raise AudioDecodeError(f"{path} has no audio stream")
            stream = container.streams.audio[0]
            codec = str(stream.codec_context.name)
            container_name = str(container.format.name)
            if stream.duration is not None and stream.time_base is not None:
                declared: float | None = float(stream.duration * stream.time_base)
            else:
                declared = container.duration / 1e6 if container.duration else None
    except (av.FFmpegError, OSError, ValueError) as exc:
        raise AudioDecodeError(f"could not read audio from {path}: {exc}") from None
    finally:
        av.logging.set_level(level)
    if any("duration from bitrate" in message for _, _, message in messages):
        declared = None
    declared = declared if declared is not None else _wav_declared_seconds(path)
    return declared, codec, container_name


class _Timeline:
    """Where each decoded frame says it belongs against the audio decoded before it: a frame
    stamped a whole frame or more later means the decoder skipped damaged data and found the
    stream again there; the skipped stretch goes to ``report.gaps``. Less than a frame is the
    overlap of codecs such as Vorbis, not a loss."""

    def __init__(self, report: DecodeReport):
        self.report = report
        self.seconds: Fraction | None = None  # where the next frame should start (exact)

    def note(self, frame: Any) -> None:
        length = Fraction(frame.samples, frame.sample_rate)
        if frame.pts is not None and frame.time_base is not None:
            stamped = Fraction(frame.pts) * frame.time_base
            if self.seconds is None:  # the first frame: its stamp is where the file starts
                self.seconds = stamped
            elif stamped - self.seconds >= length > 0:
                self.report.gaps.append((float(self.seconds), float(stamped - self.seconds)))
                self.seconds = stamped
        self.seconds = (self.seconds or Fraction(0)) + length


def _lost_text(seconds: float) -> str:
    """A stretch of audio for a warning: "0.26 s", "1:02.5"."""
    return f"{seconds:.2f} s" if seconds < 60 else _clock(seconds)


def _wav_declared_seconds(path: Path) -> float | None:
    """The length a RIFF/WAVE header's data size states (FFmpeg clamps it to the file, so a
    truncated WAV would look whole); None for other files and for a streamed WAV's placeholder
    size (0 or 0xFFFFFFFF)."""
    with path.open("rb") as fh:
        head = fh.read(12)
        if head[:4] != b"RIFF" or head[8:12] != b"WAVE":
            return None
        rate = block_align = 0
        while len(chunk := fh.read(8)) == 8:
            size = int.from_bytes(chunk[4:], "little")
            if chunk[:4] == b"data":
                if size in (0, 0xFFFFFFFF) or not rate or not block_align:
                    return None
                return size // block_align / rate
            body = fh.read(size + size % 2)
            if chunk[:4] == b"fmt " and len(body) >= 14:
                rate = int.from_bytes(body[4:8], "little")
                block_align = int.from_bytes(body[12:14], "little")
    return None


def _float_channels(frame: Any) -> np.ndarray:
    """A decoded frame as float32 (channels, samples), integer formats scaled to [-1, 1)."""
    data: np.ndarray = frame.to_ndarray()
    channels = len(frame.layout.channels)
    if not frame.format.is_planar:
        data = data.reshape(-1, channels).T
    if data.dtype == np.uint8:
        return (data.astype(np.float32) - 128.0) / 128.0
    if data.dtype.kind == "i":
        return data.astype(np.float32) / np.float32(2 ** (8 * data.dtype.itemsize - 1))
    return data.astype(np.float32, copy=False)


def _reason(exc: Exception) -> str:
    """FFmpeg's sentence for an error, without its errno and function name."""
    return str(getattr(exc, "strerror", None) or exc)


def _percent(part: int, whole: int) -> str:
    share = 100 * part / max(1, whole)
    return f"{share:.0f}%" if share >= 10 else f"{share:.1f}%" if share >= 0.1 else f"{share:.2g}%"


def _clock(seconds: float) -> str:
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    tenths = int((seconds - whole) * 10)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}.{tenths}"
