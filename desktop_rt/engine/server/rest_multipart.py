"""A ``multipart/form-data`` body parsed as it arrives: the file part to disk, fields in memory.

Call order: ``boundary = boundary_of(content_type)``, ``parser = MultipartParser(boundary,
folder)``, ``parser.feed(data)`` for each piece of the body, then ``parser.finish()``; read
``parser.fields`` (name -> values, in order) and ``parser.file`` (the one part with a filename, or
named ``file``, written to ``folder``). Invariants: memory holds at most one delimiter's length of
file data plus the small fields; anything malformed raises :class:`MultipartError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import BinaryIO

__all__ = ["MultipartError", "MultipartParser", "UploadedFile", "boundary_of"]

MAX_FIELD_BYTES = 64 * 1024  # one text field (a prompt is far shorter)
MAX_FIELDS = 100
MAX_HEADER_BYTES = 16 * 1024  # one part's headers
MAX_PREAMBLE_BYTES = 64 * 1024


class MultipartError(Exception):
    """The body is not the multipart/form-data it claims to be; the message says why."""


@dataclass(frozen=True)
class UploadedFile:
    """The uploaded file as written to the temp folder."""

    filename: str
    content_type: str | None
    path: Path
    size: int


def boundary_of(content_type: str | None) -> bytes:
    """The boundary of a ``multipart/form-data`` Content-Type; MultipartError otherwise."""
    message = Message()
    message["Content-Type"] = content_type or ""
    if message.get_content_type() != "multipart/form-data":
        raise MultipartError(
            f"Send the request as multipart/form-data (this one is {content_type or 'untyped'})."
        )
    boundary = message.get_param("boundary")
    if not isinstance(boundary, str) or not 0 < len(boundary) <= 200:
        raise MultipartError("The multipart/form-data Content-Type has no usable boundary.")
    return boundary.encode("latin-1", "replace")


class MultipartParser:
    """See the module docstring. ``folder`` must exist; the file is written there as ``upload``."""

    def __init__(self, boundary: bytes, folder: Path):
        self._first = b"--" + boundary
        self._delimiter = b"\r\n--" + boundary
        self._folder = folder
        self._buffer = bytearray()
        self._state = "preamble"
        self.fields: dict[str, list[str]] = {}
        self.file: UploadedFile | None = None
        self._field: tuple[str, bytearray] | None = None
        self._sink: BinaryIO | None = None
        self._file_meta: tuple[str, str | None] | None = None
        self._file_size = 0
        self._count = 0

    def feed(self, data: bytes) -> None:
        self._buffer += data
        while self._step():
            pass

    def finish(self) -> None:
        """The body ended: raises MultipartError unless the closing delimiter was seen."""
        self._close_sink()
        if self._state != "done":
            raise MultipartError("The multipart body ends before its closing boundary.")

    def close(self) -> None:
        """Close the file being written, if any (after an error)."""
        self._close_sink()

    # ---- the state machine -----------------------------------------------------------------

    def _step(self) -> bool:
        """Consume what the buffer allows in the current state; True if it may go on."""
        buffer = self._buffer
        if self._state == "preamble":
            at = buffer.find(self._first)
            if at < 0:
                if len(buffer) > MAX_PREAMBLE_BYTES:
                    raise MultipartError("No multipart boundary where the body should start.")
                return False
            del buffer[: at + len(self._first)]
            self._state = "after"
            return True
        if self._state == "after":
            if len(buffer) < 2:
                return False
            if buffer[:2] == b"--":
                self._state = "done"
                return False
            if buffer[:2] != b"\r\n":
                raise MultipartError("A multipart boundary is not followed by a line break.")
            del buffer[:2]
            self._state = "headers"
            return True
        if self._state == "headers":
            at = buffer.find(b"\r\n\r\n")
            if at < 0:
                if len(buffer) > MAX_HEADER_BYTES:
                    raise MultipartError("A multipart part's headers are too long.")
                return False
            self._begin_part(bytes(buffer[:at]))
            del buffer[: at + 4]
            self._state = "body"
            return True
        if self._state == "body":
            return self._body_step(buffer)
        buffer.clear()  # the epilogue after the closing delimiter is ignored
        return False

    def _body_step(self, buffer: bytearray) -> bool:
        at = buffer.find(self._delimiter)
        if at < 0:
            keep = len(self._delimiter) - 1
            if len(buffer) > keep:
                self._write(bytes(buffer[:-keep]))
                del buffer[:-keep]
            return False
        self._write(bytes(buffer[:at]))
        del buffer[: at + len(self._delimiter)]
        self._end_part()
        self._state = "after"
        return True

    # ---- parts -----------------------------------------------------------------------------

    def _begin_part(self, raw: bytes) -> None:
        self._count += 1
        if self._count > MAX_FIELDS:
            raise MultipartError(f"More than {MAX_FIELDS} multipart parts.")
        headers = Message()
        for line in raw.decode("utf-8", "replace").split("\r\n"):
            key, colon, value = line.partition(":")
            if not colon:
                raise MultipartError(f"A malformed multipart part header: {line[:80]!r}.")
            headers[key.strip()] = value.strip()
        disposition = headers.get("Content-Disposition")
        if disposition is None or not disposition.lower().startswith("form-data"):
            raise MultipartError("A multipart part has no 'Content-Disposition: form-data'.")
        name = headers.get_param("name", header="content-disposition")
        filename = headers.get_param("filename", header="content-disposition")
        if not isinstance(name, str) or not name:
            raise MultipartError("A multipart part has no name.")
        if isinstance(filename, tuple):  # RFC 2231 filename*=
            filename = filename[2]
        if filename is not None or name == "file":
            if name != "file" or self._file_meta is not None:
                raise MultipartError("Send exactly one file, in the part named 'file'.")
            content_type = headers.get("Content-Type")
            self._file_meta = (str(filename or "upload"), content_type)
            self._sink = (self._folder / "upload").open("wb")
        else:
            self._field = (name, bytearray())

    def _write(self, data: bytes) -> None:
        if not data:
            return
        if self._sink is not None:
            self._sink.write(data)
            self._file_size += len(data)
        elif self._field is not None:
            value = self._field[1]
            value += data
            if len(value) > MAX_FIELD_BYTES:
                raise MultipartError(f"The field '{self._field[0]}' is too long.")

    def _end_part(self) -> None:
        if self._sink is not None and self._file_meta is not None:
            self._close_sink()
            filename, content_type = self._file_meta
            path = self._folder / "upload"
            self.file = UploadedFile(filename, content_type, path, self._file_size)
        elif self._field is not None:
            name, value = self._field
            try:
                text = value.decode("utf-8")
            except UnicodeDecodeError:
                raise MultipartError(f"The field '{name}' is not UTF-8 text.") from None
            self.fields.setdefault(name, []).append(text)
            self._field = None

    def _close_sink(self) -> None:
        sink, self._sink = self._sink, None
        if sink is not None:
            sink.close()
