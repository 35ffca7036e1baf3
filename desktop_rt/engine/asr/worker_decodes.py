"""When the inference worker runs a stream's whole-turn decode: :func:`decode_to_run`.

A flush whose turn is to be decoded whole (``Transcriber.turn_to_decode``) leaves a
:class:`PendingDecode` on its stream; the decode is a job of its own, so that it never holds
another stream's due pass. The rule, for each stream with a pending decode, oldest first:

1. **Alone, at once.** With no other stream active, it runs right after its flush (one
   stream: as it always did).
2. **In the gaps.** Otherwise it waits while another stream has a pass to take (commands
   queued that it may run; a flood's are not counted: its passes are rare) or ran a model pass
   within the last ``quiet`` seconds (it is in speech and its next pass is near), and runs in
   the first gap, before its own stream's next pass.
3. **Bounded.** A decode that has waited ``wait`` seconds (its turn's length, at most one budget
   window) runs next, before any pass, as soon as the turn in progress ends.

Nothing is dropped: every decode runs, and a stream's decodes run in order: its next flush,
clear or configure waits for the one pending, and once one does, the worker runs the decode as
that stream's next turn, in the fair order of the passes (its audio goes on being heard
before). The budget does not hold a decode back (it never did: it ran inside its flush's
turn); its busy time counts, so the passes after it wait for room. Pure: times are the worker
clock's seconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import inf

__all__ = ["PendingDecode", "DecodeView", "decode_to_run"]


@dataclass(frozen=True, slots=True)
class PendingDecode:
    """A flushed item of a stream waiting to be decoded whole: since ``since``, for at most
    ``wait`` seconds before it runs ahead of every pass."""

    item_id: str
    since: float
    wait: float

    @property
    def deadline(self) -> float:
        return self.since + self.wait


@dataclass(frozen=True, slots=True)
class DecodeView:
    """What the rule needs to know of one open stream."""

    name: str
    decode: PendingDecode | None
    queued: bool
    """Commands waiting that it may run now (a flood's not counted)."""
    last_pass: float | None
    """When its latest model pass began (``None``: none yet)."""
    active: bool
    """Work queued or passes within the budget window."""


def decode_to_run(
    now: float, views: Sequence[DecodeView], quiet: float
) -> tuple[str | None, float]:
    """The stream whose decode runs now (``None``: none) and, when none does, the earliest time
    one might without anything else happening (``inf``: no decode is pending)."""
    pending = sorted(
        ((v, v.decode) for v in views if v.decode is not None), key=lambda p: p[1].since
    )
    if not pending:
        return None, inf
    for view, decode in pending:
        if decode.deadline <= now + 1e-9:
            return view.name, now  # waited its bound: it runs next
    wake = min(decode.deadline for _, decode in pending)
    for view, _ in pending:
        others = [o for o in views if o.name != view.name and o.active]
        if any(o.queued for o in others):
            continue
        busy_until = max((_quiet_end(o, quiet) for o in others), default=-inf)
        if busy_until <= now + 1e-9:
            return view.name, now
        wake = min(wake, busy_until)
    return None, wake


def _quiet_end(view: DecodeView, quiet: float) -> float:
    """When ``view``'s stream will have gone ``quiet`` seconds without a model pass."""
    return -inf if view.last_pass is None else view.last_pass + quiet
