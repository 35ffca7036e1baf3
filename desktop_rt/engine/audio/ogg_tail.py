"""Whether an Ogg file ends as a finished stream does: ``ogg_end_problem(path)``.

An Ogg stream's last page carries the end-of-stream flag (RFC 3533, section 6). A file cut
short ends inside a page, or after a page without that flag, and FFmpeg then reports the
length up to the last page that is there, so nothing else shows the loss. This module reads
only the file's tail (one page is at most 65,307 bytes) and checks the last page's CRC, so a
page that merely looks complete is not taken for one.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["ogg_end_problem"]

_CAPTURE = b"OggS"
_HEADER = 27  # bytes before the segment table
_MAX_PAGE = _HEADER + 255 + 255 * 255
_END_OF_STREAM = 0x04


def _crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else crc << 1
        table.append(crc & 0xFFFFFFFF)
    return table


_TABLE = _crc_table()


def _ogg_crc(page: bytes) -> int:
    """Ogg's CRC-32 (polynomial 0x04C11DB7, not reflected, initial 0) of a whole page whose
    CRC field is zeroed."""
    crc = 0
    for byte in page:
        crc = ((crc << 8) & 0xFFFFFFFF) ^ _TABLE[(crc >> 24) ^ byte]
    return crc


def _page_length(tail: bytes, at: int) -> int | None:
    """The length of the page whose header starts at ``tail[at]``, None when the header is cut."""
    if len(tail) - at < _HEADER:
        return None
    segments = tail[at + 26]
    if len(tail) - at < _HEADER + segments:
        return None
    return _HEADER + segments + sum(tail[at + _HEADER : at + _HEADER + segments])


def _is_whole_page(page: bytes) -> bool:
    if page[4] != 0:  # stream structure version
        return False
    stored = int.from_bytes(page[22:26], "little")
    return _ogg_crc(page[:22] + b"\0\0\0\0" + page[26:]) == stored


def ogg_end_problem(path: str | Path) -> str | None:
    """None when the file ends with a whole page that closes its stream; otherwise why not, as
    a sentence's clause ("the file ends inside an Ogg page", ...)."""
    with Path(path).open("rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        fh.seek(max(0, size - _MAX_PAGE))
        tail = fh.read()
    at = tail.rfind(_CAPTURE)
    while at >= 0:
        length = _page_length(tail, at)
        if length is not None and at + length == len(tail) and _is_whole_page(tail[at:]):
            if tail[at + 5] & _END_OF_STREAM:
                return None
            return "the Ogg stream has no end-of-stream page: the file was cut short"
        at = tail.rfind(_CAPTURE, 0, at)
    return "the file ends inside an Ogg page: it was cut short"
