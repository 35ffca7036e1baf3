"""The tiny random-weight Qwen3-ASR pair and a backend over it, for the GGUF tests."""

from __future__ import annotations

import pytest

from desktop_rt.engine.asr.llama.backend import LlamaAsrBackend, LlamaOptions
from tests.support.tiny_qwen3asr import write_pair


@pytest.fixture(scope="session")
def pair(tmp_path_factory):
    return write_pair(tmp_path_factory.mktemp("tiny-qwen3asr"))


@pytest.fixture(scope="module")
def backend(pair):
    b = LlamaAsrBackend(*pair, LlamaOptions(threads=1))
    yield b
    b.close()
