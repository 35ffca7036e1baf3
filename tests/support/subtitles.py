"""Strict readers of the SubRip and WebVTT files the exports write, for tests."""

from __future__ import annotations

import re

SRT_TIME = r"(\d{2,}):(\d{2}):(\d{2}),(\d{3})"
VTT_TIME = r"(\d{2,}):(\d{2}):(\d{2})\.(\d{3})"


def _ms(match: re.Match[str]) -> int:
    h, m, s, ms = (int(g) for g in match.groups())
    return ((h * 60 + m) * 60 + s) * 1000 + ms


def parse_srt(text: str) -> list[tuple[int, int, str]]:
    """A strict SubRip reader: number, timing line, one or more text lines, blank separators."""
    if not text:
        return []
    assert text.endswith("\n") and not text.endswith("\n\n\n")
    cues = []
    for number, block in enumerate(text.rstrip("\n").split("\n\n"), start=1):
        lines = block.split("\n")
        assert lines[0] == str(number)
        timing = re.fullmatch(f"{SRT_TIME} --> {SRT_TIME}", lines[1])
        assert timing, lines[1]
        body = lines[2:]
        assert body and all(line.strip() for line in body)
        assert not any("-->" in line for line in body)
        start = _ms(re.match(SRT_TIME, lines[1]))
        end = _ms(re.search(f"{SRT_TIME}$", lines[1]))
        cues.append((start, end, "\n".join(body)))
    return cues


def parse_vtt(text: str) -> list[tuple[int, int, str]]:
    """A strict WebVTT reader for what we write: header, then timing line and text per cue."""
    assert text.startswith("WEBVTT\n")
    blocks = text.rstrip("\n").split("\n\n")
    assert blocks[0] == "WEBVTT"
    cues = []
    for block in blocks[1:]:
        lines = block.split("\n")
        assert re.fullmatch(f"{VTT_TIME} --> {VTT_TIME}", lines[0]), lines[0]
        body = lines[1:]
        assert body and all(line.strip() for line in body)
        assert not any("-->" in line for line in body)
        assert not re.search(r"<|>|&(?!amp;|lt;|gt;)", "\n".join(body))
        start = _ms(re.match(VTT_TIME, lines[0]))
        end = _ms(re.search(f"{VTT_TIME}$", lines[0]))
        cues.append((start, end, "\n".join(body)))
    return cues


def vtt_unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
