"""The English-translation view of a backend (engine/asr/translation.py)."""

from __future__ import annotations

import pytest

from desktop_rt.engine.asr.translation import EnglishTranslation, TranslationUnsupportedError
from tests.support.clips import read_clip, reference_text, wer


def test_the_view_translates_with_the_shared_model(whisper_backend):
    view = EnglishTranslation(whisper_backend)
    assert view.name == whisper_backend.name and view.traits == whisper_backend.traits
    audio = read_clip("ss-0870")
    words = view.transcribe(audio, language="fr")  # French said: transcribing would be French
    assert wer(reference_text("ss-0870"), "".join(w.text for w in words)) <= 0.15
    view.close()  # the model stays loaded: it is the owner's
    again = whisper_backend.transcribe(audio, language="en")
    assert wer(reference_text("ss-0870"), "".join(w.text for w in again)) <= 0.15


@pytest.mark.slow
def test_a_gguf_backend_cannot_be_translated(tmp_path_factory):
    """The real (tiny, random-weight) GGUF backend declares it cannot translate: refused by
    name, and asked anyway it raises instead of writing another language."""
    from desktop_rt.engine.asr.llama.backend import LlamaAsrBackend, LlamaOptions
    from tests.support.tiny_qwen3asr import write_pair

    backend = LlamaAsrBackend(*write_pair(tmp_path_factory.mktemp("gguf")), LlamaOptions(threads=1))
    try:
        assert not backend.traits.can_translate
        with pytest.raises(TranslationUnsupportedError, match="cannot translate"):
            EnglishTranslation(backend)
        with pytest.raises(ValueError, match="cannot translate"):
            backend.transcribe(read_clip("beckett"), task="translate")
    finally:
        backend.close()


def test_a_whole_window_is_translated_whole():
    from desktop_rt.core_types import Word
    from desktop_rt.engine.asr.backend import BackendTraits

    class Recording:
        name = "recording"
        detected_language = None
        traits = BackendTraits(can_translate=True, whole_context=True)

        def __init__(self):
            self.calls = []

        def transcribe(self, audio, **kwargs):
            self.calls.append(kwargs)
            return [Word(" hi", 0.0, 1.0)]

    backend = Recording()
    view = EnglishTranslation(backend)
    view.transcribe(read_clip("beckett"), whole=True)
    view.transcribe(read_clip("beckett"))
    assert [c["task"] for c in backend.calls] == ["translate", "translate"]
    assert [c.get("whole", False) for c in backend.calls] == [True, False]
