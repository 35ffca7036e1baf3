"""Qwen3-ASR's text side: the transcription prompt, its output format, and words with times.

Call order: :meth:`PromptLayout.render` gives the prompt (the GGUF's chat template, else
Qwen3-ASR's known layout) with the media marker once and, for a forced language,
``language {Name}<asr_text>`` at its end; the model writes ``language English<asr_text>text``
(:func:`split_output`); :func:`output_words` and :func:`timed_words` spread the text's words
over the window by character count (Qwen3-ASR gives no word times). Invariant: the same output
gives the same words and times. Details: docs/design/gguf.md.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop_rt.core_types import Word

if TYPE_CHECKING:
    from jinja2 import Template

__all__ = [
    "ENCODER_BLOCK_CHOICES",
    "LANGUAGES",
    "ASR_TEXT",
    "PromptLayout",
    "language_name",
    "split_output",
    "timed_words",
    "output_words",
]

log = logging.getLogger("desktop_rt.llama")

ASR_TEXT = "<asr_text>"

# Audio block lengths the GGUF backend can encode on their own: whole seconds (the encoder's conv
# works on 100-frame chunks) that divide Qwen3-ASR's 8 s encoder window. Here, away from the
# modules that load llama.cpp, so the models file can check the option without loading it.
ENCODER_BLOCK_CHOICES = (1, 2, 4, 8)

# The languages Qwen3-ASR names in its output, by ISO 639 code.
LANGUAGES = {
    "zh": "Chinese",
    "en": "English",
    "yue": "Cantonese",
    "ar": "Arabic",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "pt": "Portuguese",
    "id": "Indonesian",
    "it": "Italian",
    "ko": "Korean",
    "ru": "Russian",
    "th": "Thai",
    "vi": "Vietnamese",
    "ja": "Japanese",
    "tr": "Turkish",
    "hi": "Hindi",
    "ms": "Malay",
    "nl": "Dutch",
    "sv": "Swedish",
    "da": "Danish",
    "fi": "Finnish",
    "pl": "Polish",
    "cs": "Czech",
    "fil": "Filipino",
    "tl": "Filipino",
    "fa": "Persian",
    "el": "Greek",
    "hu": "Hungarian",
    "mk": "Macedonian",
    "ro": "Romanian",
}
_NAMES = {name.lower(): name for name in LANGUAGES.values()}

# A word is a run of non-space characters, except that CJK ideographs and kana are one word
# each (those scripts do not put spaces between words).
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_WORD = re.compile(rf"[{_CJK}][^\s{_CJK}\w]*|[^\s{_CJK}]+")
_IS_CJK = re.compile(rf"[{_CJK}]")


def language_name(language: str | None) -> str | None:
    """Qwen3-ASR's name for an ISO code or name (``"en"`` -> ``"English"``); None to detect."""
    if not language:
        return None
    key = language.strip().lower()
    name = LANGUAGES.get(key) or LANGUAGES.get(key.split("-")[0]) or _NAMES.get(key)
    if name is None:
        log.warning(
            "Qwen3-ASR does not know the language %r; detecting the language instead", language
        )
    return name


@dataclass(frozen=True)
class PromptLayout:
    """Renders the transcription prompt from the model's chat template, or the known layout."""

    marker: str
    template: str | None = None

    def render(self, context: str | None = None, language: str | None = None) -> str:
        """The prompt text, with :attr:`marker` where the audio goes."""
        context = (context or "").strip()
        text = self._from_template(self.template, context) if self.template else None
        if text is None:
            text = (
                f"<|im_start|>system\n{context}<|im_end|>\n"
                f"<|im_start|>user\n{self.marker}<|im_end|>\n<|im_start|>assistant\n"
            )
        name = language_name(language)
        if name:
            text += f"language {name}{ASR_TEXT}"
        return text

    def _from_template(self, template: str, context: str) -> str | None:
        try:
            rendered = _compile(template).render(
                messages=[
                    {"role": "system", "content": context},
                    {"role": "user", "content": self.marker},
                ],
                add_generation_prompt=True,
                bos_token="",
                eos_token="",
            )
        except Exception as exc:  # a template we cannot render: fall back, do not fail the window
            log.warning("chat template failed (%s); using Qwen3-ASR's known prompt layout", exc)
            return None
        for beg, end in (("<|audio_start|>", "<|audio_end|>"), ("<|audio_bos|>", "<|audio_eos|>")):
            rendered = rendered.replace(beg + self.marker + end, self.marker)
            rendered = rendered.replace(beg + "<|audio_pad|>" + end, self.marker)
        if rendered.count(self.marker) != 1:
            return None
        return rendered


_COMPILED: dict[str, Template] = {}


def _compile(template: str) -> Template:
    if template not in _COMPILED:
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        _COMPILED[template] = env.from_string(template)
    return _COMPILED[template]


def split_output(text: str, forced_language: str | None = None) -> tuple[str | None, str]:
    """``"language English<asr_text>Hi."`` -> ``("English", "Hi.")``."""
    if forced_language:
        return forced_language, text.strip()
    if ASR_TEXT in text:
        head, _, body = text.partition(ASR_TEXT)
        head = head.strip()
        language = head[len("language") :].strip() if head.startswith("language") else None
        return (None if language in (None, "", "None") else language), body.strip()
    if text.strip().startswith("language"):
        return None, ""  # stopped before the text began
    return None, text.strip()


def timed_words(
    text: str, duration: float, token_spans: Sequence[tuple[int, int, float]] = (), skip: int = 0
) -> list[Word]:
    """Words of ``text`` spread over ``[0, duration]`` by character count.

    ``token_spans`` are ``(byte_start, byte_end, probability)`` of the tokens that spelled
    ``text`` (UTF-8 offsets); a word's probability is the lowest among its tokens. The first
    ``skip`` characters (a forced prefix) keep their share of the time but give no words; a word
    they end inside gives its rest, without a leading space (it continues the word before).
    """
    matches = list(_WORD.finditer(text))
    total = sum(len(m.group()) for m in matches)
    words: list[Word] = []
    done = 0
    for m in matches:
        body = m.group()
        first = done
        done += len(body)
        if m.end() <= skip:
            continue
        cut = max(0, skip - m.start())
        start = duration * (first + cut) / total
        end = duration * done / total
        b0 = len(text[: m.start() + cut].encode())
        b1 = len(text[: m.end()].encode())
        probs = [p for s, e, p in token_spans if s < b1 and e > b0]
        lead = "" if cut or _IS_CJK.match(body) else " "
        words.append(
            Word(lead + body[cut:], round(start, 3), round(end, 3), min(probs) if probs else 1.0)
        )
    return words


def output_words(
    pieces: Sequence[bytes],
    probs: Sequence[float],
    forced_language: str | None,
    duration: float,
    skip: int = 0,
) -> list[Word]:
    """The timed words of the model's output, given as its tokens' bytes and probabilities.

    The output is ``language X<asr_text>text``, or just the text when the language was forced
    (or the header already cut off); the first ``skip`` characters of the text (a forced
    prefix) give no words (see :func:`timed_words`)."""
    raw = b"".join(pieces).decode("utf-8", "replace")
    _language, text = split_output(raw, forced_language)
    if not text:
        return []
    offset = -len(raw[: len(raw) - len(raw.lstrip())].encode())  # split_output strips
    spans = []
    for piece, p in zip(pieces, probs, strict=True):
        spans.append((offset, offset + len(piece), p))
        offset += len(piece)
    return timed_words(text, duration, spans, skip=skip)
