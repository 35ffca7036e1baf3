"""Checking a GGUF pair before llama.cpp sees it; the tiny pair's own layout."""

from __future__ import annotations

import gguf
import pytest

from desktop_rt.engine.asr.llama.backend import LlamaAsrBackend
from desktop_rt.engine.asr.llama.gguf_check import check_pair, read_metadata
from desktop_rt.engine.models.kinds import open_backend
from desktop_rt.errors import ModelFormatError, ModelMismatchError, ModelMissingError
from tests.support.tiny_qwen3asr import TINY, Dims, write_mmproj, write_pair


def test_written_pair_has_the_reference_layout(pair):
    text, mmproj = pair
    t = {
        x.name: ([int(d) for d in x.shape], x.tensor_type.name)
        for x in gguf.GGUFReader(text).tensors
    }
    m = {
        x.name: ([int(d) for d in x.shape], x.tensor_type.name)
        for x in gguf.GGUFReader(mmproj).tensors
    }
    assert len(t) == 2 + 11 * TINY.n_layer and len(m) == 30
    assert t["token_embd.weight"] == ([64, 267], "F32")
    assert t["blk.1.attn_k.weight"] == ([64, 32], "F32")
    assert t["blk.0.attn_q_norm.weight"] == ([16], "F32")
    assert m["a.conv2d.2.weight"] == ([3, 3, 8, 8], "F16")
    assert m["a.conv2d.1.bias"] == ([1, 1, 8], "F32")
    assert m["a.conv_out.weight"] == ([128, 32], "F32")
    assert m["a.position_embd.weight"] == ([32, 1500], "F32")
    assert m["mm.a.mlp.2.weight"] == ([32, 64], "F32")


def test_header_reader_agrees_with_gguf_reader(pair):
    for path in pair:
        ours = read_metadata(path)
        theirs = gguf.GGUFReader(path).fields
        for key, value in ours.items():
            field = theirs[key]
            if isinstance(value, tuple):  # a long array, summarised
                assert value == ("<array>", len(field.data))
            else:
                expected = field.contents()
                assert (
                    value == pytest.approx(expected)
                    if isinstance(value, float)
                    else value == expected
                ), key


def test_file_that_is_not_gguf(tmp_path, pair):
    bad = tmp_path / "model.gguf"
    bad.write_bytes(b"PK\x03\x04 not a gguf at all" * 10)
    with pytest.raises(ModelFormatError, match="not a GGUF file"):
        open_backend(str(bad), mmproj=str(pair[1]))
    with pytest.raises(ModelFormatError, match="not a GGUF file"):
        LlamaAsrBackend(pair[0], bad)
    truncated = tmp_path / "cut-text.gguf"
    truncated.write_bytes(pair[0].read_bytes()[:300])
    with pytest.raises(ModelFormatError, match="damaged"):
        check_pair(truncated, pair[1])


def test_swapped_missing_and_mismatched_files(tmp_path, pair):
    text, mmproj = pair
    with pytest.raises(ModelFormatError, match="text model .*not an audio projector"):
        LlamaAsrBackend(text, text)
    with pytest.raises(ModelFormatError, match="not a text model"):
        LlamaAsrBackend(mmproj, mmproj)
    alone = tmp_path / "alone"
    alone.mkdir()
    lone_text = alone / "model.gguf"
    lone_text.write_bytes(text.read_bytes())
    with pytest.raises(ModelMissingError, match="--mmproj"):
        LlamaAsrBackend(lone_text)
    with pytest.raises(ModelMissingError, match="does not exist"):
        LlamaAsrBackend(text, alone / "nope.gguf")
    narrow = write_mmproj(tmp_path / "narrow-mmproj.gguf", TINY, projection_dim=32)
    with pytest.raises(ModelMismatchError, match="width 32.*width 64"):
        LlamaAsrBackend(text, narrow)
    vision = tmp_path / "vision-mmproj.gguf"
    w = gguf.GGUFWriter(str(vision), "clip")
    w.add_bool("clip.has_vision_encoder", True)
    w.add_bool("clip.has_audio_encoder", False)
    w.write_header_to_file(), w.write_kv_data_to_file(), w.write_tensors_to_file(), w.close()
    with pytest.raises(ModelFormatError, match="no audio encoder"):
        LlamaAsrBackend(text, vision)
    with pytest.raises(ModelFormatError, match="--mmproj goes with a GGUF"):
        open_backend(str(alone), mmproj=str(mmproj))


def test_the_one_mmproj_beside_the_model_is_found(tmp_path):
    text, mmproj = write_pair(tmp_path, Dims(seed=3), prefix="other")
    b = open_backend(str(text), threads=1)
    try:
        assert b.pair.mmproj == mmproj
    finally:
        b.close()
