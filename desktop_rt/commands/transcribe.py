"""``desktop-rt transcribe FILE``: replay a file through the streaming engine.

The file is fed in 100 ms chunks, at ``--speed`` times realtime (default: as fast as the model
goes), exactly as a microphone would feed it; tentative text shows live on a terminal, and the
committed words become the transcript written to stdout or ``--output``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from desktop_rt.core_types import SAMPLE_RATE, Word

if TYPE_CHECKING:
    import numpy as np

    from desktop_rt.engine.asr.streaming import StreamingTranscriber

CHUNK_SECONDS = 0.1
FORMATS = ("txt", "srt", "vtt", "json", "md")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("transcribe", help="transcribe an audio file through the streaming engine")
    p.add_argument("file", help="audio file (wav, flac, mp3, ...; any rate, mono or stereo)")
    p.add_argument(
        "--speed",
        type=float,
        default=0.0,
        help="replay at N x realtime (1 = live pace); default: as fast as possible",
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
        "--threads", type=int, default=0, help="CPU threads for the model (default: all cores)"
    )
    p.add_argument(
        "--no-live", action="store_true", help="do not show tentative text while running"
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


def run(args: argparse.Namespace) -> int:
    from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
    from desktop_rt.engine.audio.codecs import load_audio_file
    from desktop_rt.engine.models.kinds import open_backend
    from desktop_rt.history.export import Transcript, export, segments_from_words, write_transcript

    fmt = _output_format(args)
    audio = load_audio_file(args.file)
    backend = open_backend(
        args.model, threads=args.threads, progress=_progress_printer(), mmproj=args.mmproj
    )
    transcriber = StreamingTranscriber(
        backend, StreamingConfig(language=args.language, prompt=args.prompt)
    )
    live = LiveLine(sys.stderr, enabled=not args.no_live and sys.stderr.isatty())
    try:
        words = _replay(transcriber, audio, args.speed, live)
    finally:
        live.close()
        backend.close()

    transcript = Transcript(segments=segments_from_words(words), language=args.language)
    if args.output:
        write_transcript(args.output, transcript, fmt)
        print(f"desktop-rt: wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(export(transcript, fmt))
        if fmt == "txt":
            sys.stdout.write("\n")
    return 0


def _output_format(args: argparse.Namespace) -> str:
    """``--format``, else the output file's extension if it names a format, else txt."""
    if args.format is not None:
        return str(args.format)
    output = args.output
    suffix = output.rsplit(".", 1)[-1].lower() if output and "." in output else ""
    return suffix if suffix in FORMATS else "txt"


def _replay(
    transcriber: StreamingTranscriber, audio: np.ndarray, speed: float, live: LiveLine
) -> list[Word]:
    """Feed ``audio`` in 100 ms chunks (at ``speed`` x realtime, 0: at once); its committed words."""
    words: list[Word] = []
    chunk = int(CHUNK_SECONDS * SAMPLE_RATE)
    started = time.monotonic()
    for offset in range(0, len(audio), chunk):
        if speed > 0:
            due = started + offset / SAMPLE_RATE / speed
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        transcriber.insert_audio(audio[offset : offset + chunk])
        update = transcriber.process()
        words.extend(update.committed)
        live.update(update.committed, update.tentative)
    words.extend(transcriber.finish().committed)
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
