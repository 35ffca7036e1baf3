"""Other names for models: the ``[aliases]`` table of models.toml and OpenAI's model names.

OpenAI's transcription and realtime model names (:data:`OPENAI_NAMES`) route to the default
model out of the box, so clients that send a framework's default (``gpt-4o-mini-transcribe``)
are served; a dated snapshot of one (``gpt-4o-transcribe-2025-03-20``) routes like the name.
``[aliases]`` maps a name to a model id, and an empty target turns a built-in name off.
Invariants (checked by :func:`read_aliases`): an alias never shadows a model id and always
names a model of the file; a model id always wins over a built-in name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from desktop_rt.engine.models.catalogue_read import ID_PATTERN, Where, read_table, type_word

__all__ = ["OPENAI_NAMES", "AliasMap", "read_aliases"]

OPENAI_NAMES = (
    "whisper-1",
    "gpt-4o-transcribe",
    "gpt-4o-mini-transcribe",
    "gpt-4o-transcribe-diarize",
    "gpt-realtime",
    "gpt-realtime-mini",
    "gpt-4o-realtime-preview",
    "gpt-4o-mini-realtime-preview",
)
"""Names OpenAI clients send in ``?model=`` or ``session.update``; all go to the default model."""

_DATED = re.compile(r"(.+)-\d{4}-\d{2}-\d{2}")


def _check_alias(where: Where, name: str, target: object, ids: tuple[str, ...]) -> str:
    key = f"aliases.{name}"
    if not ID_PATTERN.fullmatch(name):
        raise where.error(key, "an alias uses letters, digits and . _ : - like a model id")
    if name in ids:
        raise where.error(
            key, f"'{name}' is a model id; an alias cannot take it. Rename the alias or the model."
        )
    if not isinstance(target, str):
        raise where.error(key, f"must be a model id (a string), not {type_word(target)}")
    target = target.strip()
    if not target and name not in OPENAI_NAMES:
        raise where.error(
            key,
            f"an empty target turns off a built-in name ({', '.join(OPENAI_NAMES)}); "
            f"'{name}' is not one",
        )
    if target and target not in ids:
        raise where.error(
            key,
            f"names the model '{target}', which is not in this file; an alias names one of "
            f"the models: {', '.join(ids)}",
        )
    return target


def read_aliases(where: Where, raw: object, ids: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """The ``[aliases]`` table, checked against the model ``ids`` of the same file."""
    table = read_table(where, "aliases", raw)
    return tuple((name, _check_alias(where, name, target, ids)) for name, target in table.items())


@dataclass(frozen=True)
class AliasMap:
    """Every name a server answers to: its model ids, then aliases to them."""

    ids: tuple[str, ...]
    targets: Mapping[str, str]
    """Alias -> model id (built-in names first, then the file's)."""

    @classmethod
    def build(
        cls, ids: tuple[str, ...], aliases: tuple[tuple[str, str], ...], default_id: str | None
    ) -> AliasMap:
        """``aliases`` from the file over the built-in names, which route to ``default_id``
        (none without one)."""
        targets: dict[str, str] = {}
        if default_id is not None:
            targets = {name: default_id for name in OPENAI_NAMES if name not in ids}
        for name, target in aliases:
            if target:
                targets[name] = target
            else:
                targets.pop(name, None)
        return cls(ids, targets)

    @property
    def names(self) -> tuple[str, ...]:
        """Model ids, then aliases (what ``GET /v1/models`` lists)."""
        return self.ids + tuple(self.targets)

    def resolve(self, name: str) -> str | None:
        """The model id ``name`` stands for, or None when it names nothing here."""
        if name in self.ids:
            return name
        target = self.targets.get(name)
        dated = _DATED.fullmatch(name)
        if target is None and dated is not None and dated.group(1) in OPENAI_NAMES:
            target = self.targets.get(dated.group(1))
        return target
