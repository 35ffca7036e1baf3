"""The languages a session may name, and mapping a client's language tag onto them.

:data:`WHISPER_LANGUAGES` is the default set a :class:`~.session.RealtimeSession` accepts.
:func:`resolve_language` maps a BCP-47 tag as browsers report it (``en-US``, ``zh-Hant-TW``,
``pt_BR``; any case) to one of a set's codes, or None when the set has no such language.
"""

from __future__ import annotations

from collections.abc import Collection

__all__ = ["WHISPER_LANGUAGES", "resolve_language"]

# Copied from faster-whisper 1.2.1, faster_whisper/tokenizer.py `_LANGUAGE_CODES` (private
# there), which are the keys of OpenAI Whisper's tokenizer.LANGUAGES: mostly ISO 639-1, plus
# "haw" and "yue", and Whisper's own "jw" for Javanese.
# fmt: off
WHISPER_LANGUAGES: frozenset[str] = frozenset((
    "af", "am", "ar", "as", "az", "ba", "be", "bg", "bn", "bo", "br", "bs", "ca", "cs",
    "cy", "da", "de", "el", "en", "es", "et", "eu", "fa", "fi", "fo", "fr", "gl", "gu",
    "ha", "haw", "he", "hi", "hr", "ht", "hu", "hy", "id", "is", "it", "ja", "jw", "ka",
    "kk", "km", "kn", "ko", "la", "lb", "ln", "lo", "lt", "lv", "mg", "mi", "mk", "ml",
    "mn", "mr", "ms", "mt", "my", "ne", "nl", "nn", "no", "oc", "pa", "pl", "ps", "pt",
    "ro", "ru", "sa", "sd", "si", "sk", "sl", "sn", "so", "sq", "sr", "su", "sv", "sw",
    "ta", "te", "tg", "th", "tk", "tl", "tr", "tt", "uk", "ur", "uz", "vi", "yi", "yo",
    "zh", "yue",
))
# fmt: on

# Other codes for the same language: deprecated ISO 639-1 codes that old systems still report,
# Norwegian Bokmal (browsers say nb-NO), Filipino, Mandarin, and ISO's Javanese.
_ALIASES = {
    "iw": "he",
    "in": "id",
    "ji": "yi",
    "mo": "ro",
    "nb": "no",
    "fil": "tl",
    "cmn": "zh",
    "jv": "jw",
    "jw": "jv",
}


def resolve_language(tag: str, languages: Collection[str]) -> str | None:
    """The code in ``languages`` that ``tag`` names: the whole tag, else its primary subtag
    (``en-US`` -> ``en``), else an alias of it; None when there is none."""
    subtags = tag.strip().replace("_", "-").lower().split("-")
    for candidate in ("-".join(subtags), subtags[0], _ALIASES.get(subtags[0])):
        if candidate and candidate in languages:
            return candidate
    return None
