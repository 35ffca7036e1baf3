"""The settings of one transcription session, and reading them from ``session.update`` payloads.

:class:`SessionConfig` is the current state (it renders the wire ``session`` object);
:func:`parse_session_patch` reads the ``session`` of a ``session.update`` (GA shape, under
``audio.input``) or of a beta ``transcription_session.update`` (``input_audio_format``,
``input_audio_transcription``, ``turn_detection``) into a :class:`SessionPatch` holding only what
the client named. Invalid values, and fields this server cannot honour (noise reduction,
``delay``), raise :class:`ProtocolError` naming the field; text fields are bounded in size
(:mod:`.fields`). A patch's language is the client's tag until :meth:`SessionPatch.resolved`
maps it onto the session's languages (and refuses ``translate`` for a model that cannot).
``transcription.translate`` (desktop-rt's, not OpenAI's) adds an English translation of every
item (docs/protocol.md, "Live translation"); ``transcription.respellings`` (desktop-rt's too)
respell the committed text later prompts are built from (:mod:`.respellings`). No I/O here.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from desktop_rt.engine.audio.codecs import PCM16, AudioFormat
from desktop_rt.engine.audio.vad import TurnDetectorSettings
from desktop_rt.engine.protocol.fields import (
    MAX_INCLUDE_ITEMS,
    MAX_LANGUAGE_BYTES,
    MAX_NAME_BYTES,
    MAX_PROMPT_BYTES,
    ProtocolError,
    bounded_text,
    invalid_type,
    json_object,
    optional_text,
    shown,
    text_list,
)
from desktop_rt.engine.protocol.formats import (
    DEFAULT_FORMAT,
    G711_RATE,
    MAX_RATE,
    MIN_RATE,
    OPENAI_PCM_RATE,
    describe_format,
    parse_beta_format,
    parse_format,
)
from desktop_rt.engine.protocol.languages import resolve_language
from desktop_rt.engine.protocol.respellings import Respelling, parse_respellings
from desktop_rt.engine.protocol.turn_detection import (
    TurnOptions,
    parse_turn_detection,
    turn_detection_wire,
)

__all__ = [
    "ProtocolError",
    "UNSET",
    "MIN_RATE",
    "MAX_RATE",
    "OPENAI_PCM_RATE",
    "G711_RATE",
    "LOGPROBS",
    "MAX_KEYWORDS",
    "SessionConfig",
    "SessionPatch",
    "parse_session_patch",
    "describe_format",
]

LOGPROBS = "item.input_audio_transcription.logprobs"
"""The one ``include`` value OpenAI defines: log probabilities on transcription deltas."""
MAX_KEYWORDS = 64
_NOISE_REDUCTION_TYPES = ("near_field", "far_field")
_LANGUAGE = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*")
_GA_TRANSCRIPTION = "session.audio.input.transcription"


class _Unset(enum.Enum):
    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET = _Unset.UNSET
"""Marks a :class:`SessionPatch` field the client did not name."""

Unset = Literal[_Unset.UNSET]


@dataclass(frozen=True)
class SessionPatch:
    """The settings a ``session.update`` names; :data:`UNSET` fields stay as they are.

    ``model`` is the model the client named, if any. The connection's model is fixed, so the
    session ignores it; the server may use it to choose a model before the session exists.
    ``language`` is the client's tag; ``language_param`` is the field it came from.
    ``turn_options`` go with ``turn_detection`` (they are replaced whenever it is set).
    """

    format: AudioFormat | Unset = UNSET
    language: str | None | Unset = UNSET
    prompt: str | None | Unset = UNSET
    turn_detection: TurnDetectorSettings | None | Unset = UNSET
    model: str | None = None
    language_param: str = field(default=f"{_GA_TRANSCRIPTION}.language", compare=False, repr=False)
    turn_options: TurnOptions | None = None
    include: tuple[str, ...] | Unset = UNSET
    keywords: tuple[str, ...] | Unset = UNSET
    respellings: tuple[Respelling, ...] | Unset = UNSET
    translate: bool | Unset = UNSET
    translate_param: str = field(
        default=f"{_GA_TRANSCRIPTION}.translate", compare=False, repr=False
    )

    def resolved(self, languages: Collection[str], translates: bool = False) -> SessionPatch:
        """This patch with its language tag mapped onto ``languages`` (``en-US`` -> ``en``).

        Raises :class:`ProtocolError` naming the field when ``languages`` has no such language,
        when it turns ``translate`` on for a model that cannot (``translates`` false), or when
        its prompt is over the bound (a patch built in code, not parsed).
        """
        if self.translate is True and not translates:
            raise ProtocolError(
                f"'{self.translate_param}' is true, but this session's model cannot translate "
                "speech to English; choose a multilingual Whisper model, or leave it false",
                param=self.translate_param,
            )
        if isinstance(self.prompt, str):  # parsed patches are checked already; built ones too
            bounded_text(self.prompt, f"{_GA_TRANSCRIPTION}.prompt", MAX_PROMPT_BYTES)
        if not isinstance(self.language, str):
            return self
        code = resolve_language(self.language, languages)
        if code is None:
            raise ProtocolError(
                f"'{self.language_param}' is {shown(self.language)}, not a language this model "
                "transcribes; name one by its ISO 639-1 code such as 'en' or 'de' (a tag such as "
                "'en-US' works too), or null to detect it",
                param=self.language_param,
            )
        return replace(self, language=code)


@dataclass(frozen=True)
class SessionConfig:
    """The current settings of a session; :meth:`to_wire` is the protocol's ``session`` object."""

    id: str
    model: str
    format: AudioFormat = DEFAULT_FORMAT
    language: str | None = None
    prompt: str | None = None
    turn_detection: TurnDetectorSettings | None = None
    turn_options: TurnOptions | None = None
    include: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    respellings: tuple[Respelling, ...] = ()
    """Spellings the committed text the model is prompted with takes (desktop-rt's)."""
    translate: bool = False
    """Every item is also translated to English (desktop-rt's ``transcription.translate``)."""

    @property
    def logprobs(self) -> bool:
        """Deltas and completions carry ``logprobs``."""
        return LOGPROBS in self.include

    @property
    def model_prompt(self) -> str | None:
        """What the model is prompted with: the prompt, then the keywords joined by commas."""
        text = " ".join(p for p in (self.prompt, ", ".join(self.keywords)) if p)
        return text or None

    @property
    def recognizer_settings(self) -> tuple[str | None, str | None, tuple[Respelling, ...]]:
        """What the recognizer is configured with: when any changes, it is told (``Configure``)."""
        return (self.language, self.model_prompt, self.respellings)

    def apply(self, patch: SessionPatch) -> SessionConfig:
        """The settings after ``patch``; the model never changes."""
        names = (
            "format",
            "language",
            "prompt",
            "turn_detection",
            "include",
            "keywords",
            "respellings",
            "translate",
        )
        changes = {
            name: getattr(patch, name) for name in names if getattr(patch, name) is not UNSET
        }
        if patch.turn_detection is not UNSET:
            changes["turn_options"] = patch.turn_options
        return replace(self, **changes)

    def to_wire(self) -> dict[str, Any]:
        fmt: dict[str, Any] = {"type": self.format.type}
        if self.format.type == PCM16:
            fmt["rate"] = self.format.rate
        transcription: dict[str, Any] = {
            "model": self.model,
            "language": self.language,
            "prompt": self.prompt,
        }
        if self.keywords:
            transcription["keywords"] = list(self.keywords)
        if self.respellings:
            transcription["respellings"] = [r.to_wire() for r in self.respellings]
        if self.translate:  # only when on: an OpenAI client sees OpenAI's object otherwise
            transcription["translate"] = True
        wire: dict[str, Any] = {
            "id": self.id,
            "object": "realtime.transcription_session",
            "type": "transcription",
            "audio": {
                "input": {
                    "format": fmt,
                    "transcription": transcription,
                    "turn_detection": turn_detection_wire(self.turn_detection, self.turn_options),
                    "noise_reduction": None,  # no denoiser here: asking for one is refused
                }
            },
        }
        if self.include:
            wire["include"] = list(self.include)
        return wire


def _language(value: object, param: str) -> str | None:
    value = optional_text(value, param, MAX_LANGUAGE_BYTES)
    if not value:
        return None
    if not _LANGUAGE.fullmatch(value):
        raise ProtocolError(
            f"'{param}' must be a language code such as 'en' or 'de', or null", param=param
        )
    return value


def _flag(value: object, param: str) -> bool:
    """A boolean; ``null`` is false."""
    if value is None:
        return False
    if not isinstance(value, bool):
        raise invalid_type(param, "a boolean", value)
    return value


def _noise_reduction(value: object, param: str) -> None:
    """``null`` (or no type) is accepted; a denoiser is refused: there is none on this server."""
    if value is None:
        return
    kind = json_object(value, param).get("type")
    if kind is None:
        return
    if kind not in _NOISE_REDUCTION_TYPES:
        raise ProtocolError(
            f"'{param}.type' must be one of {', '.join(_NOISE_REDUCTION_TYPES)}",
            param=f"{param}.type",
        )
    raise ProtocolError(
        f"'{param}' asks for {kind} noise reduction, which this server does not have (no "
        "denoiser is installed); set it to null and send the audio as it is",
        param=param,
    )


def _include(value: object, param: str) -> tuple[str, ...]:
    include = text_list(value, param, MAX_INCLUDE_ITEMS, MAX_NAME_BYTES)
    for i, item in enumerate(include):
        if item != LOGPROBS:
            raise ProtocolError(
                f"'{param}[{i}]' is {shown(item)}; the only value is '{LOGPROBS}'",
                param=f"{param}[{i}]",
            )
    return include


def _languages(obj: dict[str, Any], param: str, fields: dict[str, Any]) -> None:
    """``languages``: one entry is read as ``language``; several are refused."""
    tags = text_list(obj["languages"], f"{param}.languages", MAX_INCLUDE_ITEMS, MAX_LANGUAGE_BYTES)
    if len(tags) > 1:
        raise ProtocolError(
            f"'{param}.languages' names {len(tags)} languages; this server transcribes one "
            "language or detects it among all it knows: name one, or use 'language'",
            param=f"{param}.languages",
        )
    if tags and "language" in obj and obj["language"] != tags[0]:
        raise ProtocolError(
            f"'{param}.languages' and '{param}.language' disagree; send one of them",
            param=f"{param}.languages",
        )
    if tags:
        fields["language"] = _language(tags[0], f"{param}.languages[0]")
        fields["language_param"] = f"{param}.languages[0]"


def _transcription(value: object, param: str, fields: dict[str, Any]) -> None:
    """Present keys update; ``null`` resets language, prompt, keywords and respellings."""
    if value is None:
        fields.update(language=None, prompt=None, keywords=(), respellings=(), translate=False)
        return
    obj = json_object(value, param)
    if "model" in obj:
        fields["model"] = optional_text(obj["model"], f"{param}.model", MAX_NAME_BYTES)
    if "language" in obj:
        fields["language"] = _language(obj["language"], f"{param}.language")
        fields["language_param"] = f"{param}.language"
    if obj.get("languages") is not None:
        _languages(obj, param, fields)
    if "prompt" in obj:
        fields["prompt"] = optional_text(obj["prompt"], f"{param}.prompt", MAX_PROMPT_BYTES) or None
    if "keywords" in obj:
        fields["keywords"] = text_list(
            obj["keywords"], f"{param}.keywords", MAX_KEYWORDS, MAX_NAME_BYTES
        )
    if "respellings" in obj:
        fields["respellings"] = parse_respellings(obj["respellings"], f"{param}.respellings")
    if "translate" in obj:
        fields["translate"] = _flag(obj["translate"], f"{param}.translate")
        fields["translate_param"] = f"{param}.translate"
    if obj.get("delay") is not None:
        raise ProtocolError(
            f"'{param}.delay' is not supported: the streaming engine sets its own pace (words "
            "are sent as soon as two passes agree); set it to null",
            param=f"{param}.delay",
        )


def _turns(value: object, param: str, fields: dict[str, Any]) -> None:
    fields["turn_detection"], fields["turn_options"] = parse_turn_detection(value, param)


def _beta(obj: dict[str, Any], param: str, fields: dict[str, Any]) -> None:
    """The beta (``transcription_session.update``) keys."""
    if "input_audio_format" in obj:
        fields["format"] = parse_beta_format(
            obj["input_audio_format"], f"{param}.input_audio_format"
        )
    if "input_audio_transcription" in obj:
        _transcription(
            obj["input_audio_transcription"], f"{param}.input_audio_transcription", fields
        )
    if "turn_detection" in obj:
        _turns(obj["turn_detection"], f"{param}.turn_detection", fields)
    if "input_audio_noise_reduction" in obj:
        _noise_reduction(obj["input_audio_noise_reduction"], f"{param}.input_audio_noise_reduction")


def _ga_audio_input(audio: object, param: str, fields: dict[str, Any]) -> None:
    """The GA keys under ``audio.input``."""
    audio_in = json_object(audio, f"{param}.audio").get("input")
    if audio_in is None:
        return
    where = f"{param}.audio.input"
    audio_in = json_object(audio_in, where)
    if audio_in.get("format") is not None:
        fields["format"] = parse_format(audio_in["format"], f"{where}.format")
    if "transcription" in audio_in:
        _transcription(audio_in["transcription"], f"{where}.transcription", fields)
    if "turn_detection" in audio_in:
        _turns(audio_in["turn_detection"], f"{where}.turn_detection", fields)
    if "noise_reduction" in audio_in:
        _noise_reduction(audio_in["noise_reduction"], f"{where}.noise_reduction")


def parse_session_patch(value: object, param: str = "session") -> SessionPatch:
    """Read a ``session`` object of either update shape; unknown keys are ignored.

    Beta keys are read first, then the GA ``audio.input`` ones, so the GA shape wins when a
    client sends both.
    """
    obj = json_object(value, param)
    fields: dict[str, Any] = {}
    kind = obj.get("type")
    if kind is not None and kind != "transcription":
        raise ProtocolError(
            f"'{param}.type' must be 'transcription': this server only transcribes; got {shown(kind)}",
            param=f"{param}.type",
        )
    if "model" in obj:
        fields["model"] = optional_text(obj["model"], f"{param}.model", MAX_NAME_BYTES)
    if "include" in obj:
        fields["include"] = _include(obj["include"], f"{param}.include")
    _beta(obj, param, fields)
    if obj.get("audio") is not None:
        _ga_audio_input(obj["audio"], param, fields)
    return SessionPatch(**fields)
