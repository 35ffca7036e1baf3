"""The end of an Ogg file: a whole last page with the end-of-stream flag, or a cut."""

from __future__ import annotations

import numpy as np

from desktop_rt.engine.audio.ogg_tail import ogg_end_problem
from tests.support.clips import read_clip
from tests.support.damaged_files import write_encoded


def test_whole_ogg_files_end_their_stream(tmp_path):
    for kind in ("vorbis", "opus"):
        folder = tmp_path / kind
        folder.mkdir()
        assert ogg_end_problem(write_encoded(folder, kind, read_clip("beckett"))) is None


def test_every_cut_is_seen(tmp_path):
    data = write_encoded(tmp_path, "vorbis", read_clip("beckett")).read_bytes()
    cut = tmp_path / "cut.ogg"
    for end in np.linspace(200, len(data) - 1, 40).astype(int):
        cut.write_bytes(data[:end])
        assert ogg_end_problem(cut) is not None, end


def test_a_last_page_with_a_bad_crc_is_not_whole(tmp_path):
    data = bytearray(write_encoded(tmp_path, "vorbis", read_clip("beckett")).read_bytes())
    data[-1] ^= 0xFF
    damaged = tmp_path / "crc.ogg"
    damaged.write_bytes(bytes(data))
    assert ogg_end_problem(damaged) == "the file ends inside an Ogg page: it was cut short"
