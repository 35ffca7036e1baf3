"""``desktop-rt transcribe FILE``: a file's transcript, recognised as a whole or replayed live.

Without ``--speed`` the file is recognised as a file (:mod:`~desktop_rt.engine.asr.file_transcriber`):
decoded in a stream, its speech cut at pauses into windows, each transcribed once, with a
progress bar on stderr. ``--speed N`` feeds it to the streaming engine in 100 ms chunks at N x
realtime, as a microphone would, with tentative text live on a terminal (``--word-times FILE``:
each word also written to FILE as a JSON line when it commits). The words become the transcript
on stdout or in ``--output``; repairs of bad samples and an early end of the file are warned
about on stderr, and a truncated or damaged file exits with :data:`EXIT_PARTIAL`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, TextIO

from desktop_rt.core_types import SAMPLE_RATE, Word
from desktop_rt.errors import AudioDecodeError, DesktopRtError
from desktop_rt.machine import usable_cores

if TYPE_CHECKING:
    import numpy as np

    from desktop_rt.engine.asr.backend import AsrBackend
    from desktop_rt.engine.asr.file_transcriber import FileProgress
    from desktop_rt.engine.asr.streaming import StreamingTranscriber
    from desktop_rt.engine.audio.file_decode import AudioFileReader

CHUNK_SECONDS = 0.1
FORMATS = ("txt", "srt", "vtt", "json", "md")
EXIT_PARTIAL = 3
"""Exit status of a run that transcribed a truncated or damaged file as far as it decoded."""

EPILOG = f"""\
Without --speed the file is recognised as a whole: its speech is cut at pauses into windows of
up to 28 s, each transcribed once. --speed N replays it through the live streaming engine.

Bad samples are repaired with a warning: NaN or infinite samples become silence; float audio
beyond full scale (e.g. written at integer scale) is scaled down to it.

exit status:
  0  the whole file was transcribed
  1  nothing was transcribed: the file, the model or an option could not be used
  {EXIT_PARTIAL}  partial: the file is truncated or damaged; what decoded was transcribed
     (audio skipped inside it or missing at its end, said in a warning on stderr)
"""


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "transcribe",
        help="transcribe an audio file",
        description="Transcribe an audio file with a local model.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", help="audio file (wav, flac, mp3, ...; any rate, mono or stereo)")
    p.add_argument(
        "--speed",
        type=float,
        default=0.0,
        help="replay through the streaming engine at N x realtime (1: live pace, inf: as fast "
        "as it goes); default: recognise the file as a whole",
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="output format (default: from --output's extension, else txt)",
    )
    p.add_argument("--output", "-o", default=None, help="write the transcript to this file")
    p.add_argument(
        "--model",
        default=None,
        help="model id, model folder or GGUF text model (default: whisper-base)",
    )
    p.add_argument(
        "--mmproj",
        default=None,
        help="audio projector (mmproj .gguf) of a GGUF speech model given with --model",
    )
    p.add_argument("--language", default=None, help="language code, e.g. en (default: detect)")
    p.add_argument("--prompt", default=None, help="text that conditions spelling and style")
    p.add_argument(
        "--threads",
        type=int,
        default=0,
        help="CPU threads for the model (default: all cores; with --speed, the model's default)",
    )
    p.add_argument(
        "--no-live", action="store_true", help="with --speed, do not show tentative text"
    )
    p.add_argument(
        "--word-times",
        metavar="FILE",
        default=None,
        help='with --speed, write each word to FILE the moment it commits, as a JSON line {"text", '
        '"start", "end", "at"}: its times in the audio and when it committed, in seconds since '
        "the replay began (the 100 ms chunk that starts s seconds in is fed at s / speed)",
    )
    p.add_argument(
        "--quiet", "-q", action="store_true", help="no progress output (warnings still show)"
    )
    p.set_defaults(func=run)


class LiveLine:
    """Shows committed text and dimmed tentative text on one rewritten terminal line."""

    def __init__(self, stream: TextIO, enabled: bool):
        self.stream = stream
        self.enabled = enabled
        self._committed = ""

    def update(self, committed: tuple[Word, ...], tentative: tuple[Word, ...]) -> None:
        if not self.enabled:
            return
        self._committed += "".join(w.text for w in committed)
        tail = "".join(w.text for w in tentative)
        width = 100
        text = (self._committed + tail)[-width:]
        visible_committed = text[: max(0, len(text) - len(tail))]
        visible_tail = text[len(visible_committed) :]
        self.stream.write(f"\r\x1b[K{visible_committed}\x1b[2m{visible_tail}\x1b[0m")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


class WordTimes:
    """``--word-times``: committed words as JSON lines, flushed as they commit."""

    def __init__(self, stream: TextIO):
        self.stream = stream

    def write(self, words: Iterable[Word], at: float) -> None:
        """``words`` committed ``at`` seconds after the replay began."""
        for w in words:
            line = {"text": w.text, "start": round(w.start, 3), "end": round(w.end, 3)}
            self.stream.write(json.dumps(line | {"at": round(at, 4)}) + "\n")
        self.stream.flush()


def _open_word_times(args: argparse.Namespace) -> AbstractContextManager[TextIO | None]:
    """``--word-times``'s file (or None), opened before the model loads: a bad path fails first."""
    if args.word_times is None:
        return nullcontext()
    if not args.speed > 0:
        raise DesktopRtError("--word-times needs --speed: only a replay commits words over time")
    try:
        return open(args.word_times, "w", encoding="utf-8")
    except OSError as exc:
        raise DesktopRtError(f"cannot write --word-times file {args.word_times}: {exc}") from exc


class FileProgressDisplay:
    """Whole-file progress on stderr: a bar redrawn on a terminal, a line per tenth elsewhere
    (per minute of audio when the length is unknown), nothing when ``quiet``."""

    BAR = 30

    def __init__(self, stream: TextIO, *, tty: bool, quiet: bool = False):
        self.stream = stream
        self.tty = tty
        self.quiet = quiet
        self._started = time.monotonic()
        self._step = -1
        self._drawn = False

    def update(self, progress: FileProgress) -> None:
        if self.quiet:
            return
        elapsed = max(1e-6, time.monotonic() - self._started)
        done, total = progress.done_seconds, progress.total_seconds
        where = f"{_clock(done)} of {_clock(total)}" if total else _clock(done)
        fraction = progress.fraction
        pace = f"{done / elapsed:.1f}x realtime"
        if self.tty:
            filled = int(self.BAR * fraction) if fraction is not None else 0
            bar = f"[{'#' * filled}{'.' * (self.BAR - filled)}] " if fraction is not None else ""
            percent = f"{100 * fraction:3.0f}%  " if fraction is not None else ""
            self.stream.write(f"\r\x1b[K{bar}{percent}{where}  {pace}")
            self._drawn = True
        else:
            step = int(10 * fraction) if fraction is not None else int(done // 60)
            if step <= self._step:
                return
            self._step = step
            percent = f"{10 * step}% " if fraction is not None else ""
            self.stream.write(f"desktop-rt: transcribed {percent}({where}, {pace})\n")
        self.stream.flush()

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def run(args: argparse.Namespace) -> int:
    from desktop_rt.engine.audio.file_decode import AudioFileReader
    from desktop_rt.engine.models.kinds import open_backend
    from desktop_rt.history.export import Transcript, export, segments_from_words, write_transcript

    fmt = _output_format(args)
    reader = AudioFileReader(args.file)  # a missing or unreadable file fails before the model
    live = args.speed > 0
    threads = args.threads or (0 if live else usable_cores())
    with _open_word_times(args) as times:
        backend = open_backend(
            args.model, threads=threads, progress=_progress_printer(), mmproj=args.mmproj
        )
        try:
            if live:
                words, language = _replay_file(backend, reader, args, times), args.language
            else:
                words, language = _recognise_file(backend, reader, args)
        finally:
            backend.close()
    for warning in reader.report.warnings():
        print(f"desktop-rt: warning: {warning}", file=sys.stderr)
    if reader.report.non_finite == reader.report.values:  # none usable: not an empty exit 0
        what = "every sample is NaN or infinite" if reader.report.values else "it holds no samples"
        raise AudioDecodeError(f"{args.file}: {what}; nothing to transcribe")

    transcript = Transcript(segments=segments_from_words(words), language=language)
    if args.output:
        write_transcript(args.output, transcript, fmt)
        print(f"desktop-rt: wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(export(transcript, fmt))
        if fmt == "txt":
            sys.stdout.write("\n")
    return EXIT_PARTIAL if reader.report.partial else 0


def _recognise_file(
    backend: AsrBackend, reader: AudioFileReader, args: argparse.Namespace
) -> tuple[list[Word], str | None]:
    """Whole-file recognition with a progress display; the words and the language."""
    from desktop_rt.engine.asr.file_transcriber import FileTranscriber

    transcriber = FileTranscriber(backend, language=args.language, prompt=args.prompt)
    progress = FileProgressDisplay(sys.stderr, tty=sys.stderr.isatty(), quiet=args.quiet)
    try:
        result = transcriber.transcribe(
            reader.chunks(), total_seconds=reader.duration, progress=progress.update
        )
    finally:
        progress.close()
    return list(result.words), result.language


def _replay_file(
    backend: AsrBackend, reader: AudioFileReader, args: argparse.Namespace, times: TextIO | None
) -> list[Word]:
    """The file through the streaming engine in 100 ms chunks; its committed words."""
    from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber

    transcriber = StreamingTranscriber(
        backend, StreamingConfig(language=args.language, prompt=args.prompt)
    )
    live = LiveLine(sys.stderr, enabled=not args.no_live and sys.stderr.isatty())
    try:
        chunks = reader.chunks(int(CHUNK_SECONDS * SAMPLE_RATE))
        word_times = WordTimes(times) if times is not None else None
        return _replay(transcriber, chunks, args.speed, live, word_times)
    finally:
        live.close()


def _output_format(args: argparse.Namespace) -> str:
    """``--format``, else the output file's extension if it names a format, else txt."""
    if args.format is not None:
        return str(args.format)
    output = args.output
    suffix = output.rsplit(".", 1)[-1].lower() if output and "." in output else ""
    return suffix if suffix in FORMATS else "txt"


def _replay(
    transcriber: StreamingTranscriber,
    chunks: Iterable[np.ndarray],
    speed: float,
    live: LiveLine,
    times: WordTimes | None = None,
) -> list[Word]:
    """Feed the 100 ms ``chunks`` at ``speed`` x realtime (0: at once); the committed words,
    each also given to ``times`` when it commits."""
    words: list[Word] = []
    offset = 0
    started = time.monotonic()
    for chunk in chunks:
        if speed > 0:
            due = started + offset / SAMPLE_RATE / speed
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        transcriber.insert_audio(chunk)
        offset += len(chunk)
        update = transcriber.process()
        words.extend(update.committed)
        if times is not None and update.committed:
            times.write(update.committed, time.monotonic() - started)
        live.update(update.committed, update.tentative)
    last = transcriber.finish().committed
    words.extend(last)
    if times is not None and last:
        times.write(last, time.monotonic() - started)
    return words


def _progress_printer() -> Callable[[int, int], None]:
    last = [-1]

    def show(done: int, total: int) -> None:
        pct = int(100 * done / total) if total else 100
        if pct != last[0] and sys.stderr.isatty():
            last[0] = pct
            sys.stderr.write(f"\rdesktop-rt: preparing the default model... {pct}%")
            if done >= total:
                sys.stderr.write("\n")
            sys.stderr.flush()

    return show
