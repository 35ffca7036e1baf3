"""Export formats of a :class:`~desktop_rt.history.transcript.Transcript` (re-exported here).

Everything is pure (text in, text out) except :func:`write_transcript`, which saves an export
atomically. Call order: :func:`export` a transcript (or call a ``to_*`` function), then
optionally :func:`write_transcript` it. All timestamps go through integer milliseconds: negative
times clamp to zero, rounding is half-up on the decimal value (3599.9995 s is 01:00:00.000), and
hours may exceed 99. A segment's ``speaker`` (meeting mode) is written as a WebVTT voice tag
(``<v You>``), an SRT, text or Markdown prefix (``You:``) and a JSON ``speaker`` field (left
out when there is none, so one-stream exports keep their schema). A segment's ``translation``
(live translation) is a second line of its SRT or WebVTT cue, a line beneath each plain text or
Markdown paragraph, and a JSON ``translation`` field (left out when there is none).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
from collections.abc import Callable
from pathlib import Path

from desktop_rt.history.cues import LINE_CHARS, wrap_lines
from desktop_rt.history.export_json import (
    ExportError,
    InvalidTranscriptError,
    from_json,
    milliseconds,
    to_json,
)
from desktop_rt.history.transcript import Segment, Transcript, segments_from_words

__all__ = [
    "Segment",
    "Transcript",
    "segments_from_words",
    "to_txt",
    "to_srt",
    "to_vtt",
    "to_json",
    "to_markdown",
    "from_json",
    "FORMATS",
    "export",
    "write_transcript",
    "ExportError",
    "UnknownFormatError",
    "InvalidTranscriptError",
    "ExportWriteError",
    "ExportDiskFullError",
    "ExportFolderMissingError",
]

PARAGRAPH_GAP = 2.0
"""Seconds of silence between segments that start a new paragraph in plain text."""

CAPTION_LINE_CHARS = LINE_CHARS
"""Caption line length; a cue gets at most two lines where the words allow (see ``cues``)."""

# --- errors -----------------------------------------------------------------------------------


class UnknownFormatError(ExportError, ValueError):
    """The requested export format does not exist."""


class ExportWriteError(ExportError):
    """An export could not be saved to disk. ``path`` is the file that was being written."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.path = path


class ExportDiskFullError(ExportWriteError):
    """There was no room on the disk for the export."""


class ExportFolderMissingError(ExportWriteError):
    """The folder to save into does not exist."""


# --- time helpers -----------------------------------------------------------------------------


_ms = milliseconds


def _clock(ms: int, separator: str) -> str:
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs, millis = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}{separator}{millis:03d}"


def _short_clock(ms: int) -> str:
    """``MM:SS`` below an hour, ``HH:MM:SS`` from an hour on; seconds are truncated."""
    hours, rest = divmod(ms // 1000, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


# --- caption formats --------------------------------------------------------------------------


def _one_line(text: str) -> str:
    """Collapse every run of whitespace (newlines included) to one space."""
    return " ".join(text.split())


def _cues(t: Transcript, labelled: bool) -> list[tuple[int, int, list[str], str | None, str]]:
    """Non-empty cues as (start ms, end ms, wrapped lines, speaker, translation line or ""),
    with end > start enforced. ``labelled``: lines leave room for a ``Speaker: `` prefix."""
    cues = []
    for segment in t.segments:
        text = _one_line(segment.text)
        if not text:
            continue
        start = _ms(segment.start)
        end = max(_ms(segment.end), start + 1)
        speaker = _one_line(segment.speaker or "") or None
        room = len(speaker) + 2 if labelled and speaker else 0
        lines = wrap_lines(text, max(1, CAPTION_LINE_CHARS - room))
        cues.append((start, end, lines, speaker, _one_line(segment.translation or "")))
    return cues


def _no_arrow(line: str) -> str:
    while "-->" in line:
        line = line.replace("-->", "->")
    return line


def to_srt(t: Transcript) -> str:
    """SubRip: numbered cues, ``HH:MM:SS,mmm`` times, a blank line between cues."""
    blocks = []
    for number, (start, end, lines, speaker, translation) in enumerate(_cues(t, True), start=1):
        if speaker:
            lines = [f"{speaker}: {lines[0]}", *lines[1:]]
        lines = [*lines, translation] if translation else lines
        body = "\n".join(_no_arrow(line) for line in lines)
        blocks.append(f"{number}\n{_clock(start, ',')} --> {_clock(end, ',')}\n{body}\n")
    return "\n".join(blocks)


def _vtt_escape(line: str) -> str:
    return line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_vtt(t: Transcript) -> str:
    """WebVTT: a ``WEBVTT`` header, ``HH:MM:SS.mmm`` times, escaped cue text."""
    blocks = ["WEBVTT\n"]
    for start, end, lines, speaker, translation in _cues(t, False):
        lines = [*lines, translation] if translation else lines
        body = "\n".join(_vtt_escape(line) for line in lines)
        if speaker:
            body = f"<v {_vtt_escape(speaker)}>{body}"
        blocks.append(f"{_clock(start, '.')} --> {_clock(end, '.')}\n{body}\n")
    return "\n".join(blocks)


# --- text formats -----------------------------------------------------------------------------


def to_txt(t: Transcript) -> str:
    """Plain text: segments joined by spaces, a new paragraph after pauses over 2 s.

    A change of speaker starts a paragraph, too, prefixed with ``Speaker:``. The translations of
    a paragraph's segments are a line beneath it."""
    paragraphs: list[tuple[list[str], list[str]]] = []  # (texts, translations)
    previous_end: float | None = None
    speaker: str | None = None
    for segment in t.segments:
        text = _one_line(segment.text)
        if not text:
            continue
        turn = segment.speaker != speaker
        if previous_end is None or segment.start - previous_end > PARAGRAPH_GAP or turn:
            paragraphs.append(([f"{_one_line(segment.speaker)}:"] if segment.speaker else [], []))
        paragraphs[-1][0].append(text)
        if _one_line(segment.translation or ""):
            paragraphs[-1][1].append(_one_line(segment.translation or ""))
        previous_end, speaker = segment.end, segment.speaker
    blocks = [" ".join(texts) + ("\n" + " ".join(tr) if tr else "") for texts, tr in paragraphs]
    return "\n\n".join(blocks) + "\n" if blocks else ""


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>#~|])")


def _md_escape(text: str) -> str:
    return _MARKDOWN_SPECIAL.sub(r"\\\1", _one_line(text))


def to_markdown(t: Transcript) -> str:
    """Markdown: the title as a heading, then one ``**[MM:SS]** text`` paragraph per segment
    (``**[MM:SS] Speaker:**`` in meeting mode)."""
    blocks = []
    if _one_line(t.title):
        blocks.append(f"# {_md_escape(t.title)}\n")
    for segment in t.segments:
        if _one_line(segment.text):
            stamp = f"[{_short_clock(_ms(segment.start))}]"
            if segment.speaker:
                stamp += f" {_md_escape(segment.speaker)}:"
            english = _md_escape(segment.translation or "")
            english = f"  \n*{english}*" if english else ""
            blocks.append(f"**{stamp}** {_md_escape(segment.text)}{english}\n")
    return "\n".join(blocks)


# --- dispatch and writing ---------------------------------------------------------------------

FORMATS: dict[str, Callable[[Transcript], str]] = {
    "txt": to_txt,
    "srt": to_srt,
    "vtt": to_vtt,
    "json": to_json,
    "md": to_markdown,
}
"""Export functions by format name; the names are also the file extensions."""

_ALIASES = {"markdown": "md", "text": "txt", "webvtt": "vtt"}


def _format_name(fmt: str) -> str:
    name = str(fmt).strip().lower().lstrip(".")
    name = _ALIASES.get(name, name)
    if name not in FORMATS:
        raise UnknownFormatError(
            f"Unknown export format {fmt!r}. Choose one of: {', '.join(sorted(FORMATS))}."
        )
    return name


def export(t: Transcript, fmt: str) -> str:
    """Render ``t`` in format ``fmt`` (a :data:`FORMATS` key, case-insensitive, ``.srt`` ok)."""
    return FORMATS[_format_name(fmt)](t)


def write_transcript(
    path: str | os.PathLike[str], transcript: Transcript, fmt: str | None = None
) -> Path:
    """Save ``transcript`` to ``path`` as ``fmt`` (default: from the file extension).

    The file is written to a temporary sibling and renamed over ``path`` only once complete, so
    a failure (full disk, missing folder) leaves any earlier file untouched and no partial file.
    Returns the path written; raises an :class:`ExportWriteError` subclass on failure.
    """
    target = Path(path)
    data = export(transcript, fmt if fmt is not None else target.suffix).encode("utf-8", "replace")
    temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    created = False
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        created = True
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, target)
        created = False
    except OSError as exc:
        raise _write_error(exc, target) from exc
    finally:
        if created:
            with contextlib.suppress(OSError):
                os.unlink(temp)
    return target


def _write_error(exc: OSError, target: Path) -> ExportWriteError:
    code = exc.errno
    if code in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        return ExportDiskFullError(
            f"The disk is full, so {target} could not be saved. Free some space or choose "
            "another folder.",
            target,
        )
    if code == errno.ENOENT or not target.parent.is_dir():
        return ExportFolderMissingError(
            f"The folder {target.parent} does not exist, so {target.name} could not be saved. "
            "Choose an existing folder.",
            target,
        )
    if code in (errno.EACCES, errno.EPERM, errno.EROFS):
        return ExportWriteError(
            f"No permission to write {target}. Choose a folder you can write to.", target
        )
    if code == errno.EISDIR or target.is_dir():
        return ExportWriteError(f"{target} is a folder. Choose a file name to save to.", target)
    return ExportWriteError(f"Could not save {target}: {exc.strerror or exc}.", target)
