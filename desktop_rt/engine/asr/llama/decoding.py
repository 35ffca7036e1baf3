"""Greedy decoding after the prefill, with a forced prefix and a verified draft.

Call order: the prompt is prefilled (its last logits ready), then one :class:`Decoding` per
window: ``Decoding(...).run(n_past, after_header)``. The forced prefix (streaming's committed
words) is prefilled in one batch where the text begins; the draft (the previous window's output,
:func:`realign`-ed to the prefix) is verified in one batch up to the first token greedy decoding
would not have chosen. Invariant: the output is token for token what plain greedy decoding with
the same forced prefix gives; every token put in the KV cache is reported to ``record``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from desktop_rt.engine.asr.llama.mtmd import NativeSpeechModel
from desktop_rt.engine.asr.llama.options import TranscriptionStats

__all__ = ["Decoding", "Pick", "greedy_pick", "realign"]

Pick = Callable[[np.ndarray, list[int]], tuple[int, float]]
"""Logits and the output so far -> the chosen token and its probability."""

_MAX_VERIFIED = 64  # draft tokens verified in one batch


def greedy_pick(
    logits: np.ndarray, history: list[int], penalty: float, last_n: int
) -> tuple[int, float]:
    """The arg-max token after the repeat ``penalty`` over the last ``last_n`` of ``history``,
    and its probability."""
    if penalty != 1.0 and history:
        recent = np.unique(np.asarray(history[-last_n:], dtype=np.int64))
        logits = np.array(logits)
        values = logits[recent]
        logits[recent] = np.where(values > 0, values / penalty, values * penalty)
    token = int(np.argmax(logits))
    top = float(logits[token])
    prob = 1.0 / float(np.exp(logits - top, dtype=np.float64).sum())
    return token, prob


def realign(native: NativeSpeechModel, draft: list[int], out: list[int]) -> list[int]:
    """The draft re-cut so it starts with ``out``: the previous output's tokens after the text
    ``out`` spells (a forced prefix is tokenized afresh, so its tokens may differ from the ones
    the model wrote for it); empty when the texts part."""
    if draft[: len(out)] == out:
        return draft
    target = b"".join(native.piece(t) for t in out)
    spelled = b""
    cut = len(draft)
    for i, t in enumerate(draft):
        if len(spelled) >= len(target):
            cut = i
            break
        spelled += native.piece(t)
    return out + draft[cut:] if spelled == target else []


class Decoding:
    """The decoding of one window; ``out`` and ``probs`` grow as it runs."""

    def __init__(
        self,
        native: NativeSpeechModel,
        pick: Pick,
        *,
        budget: int,
        forced: list[int],
        draft: list[int],
        asr_text: int | None,
        record: Callable[[int], None],
        stats: TranscriptionStats,
    ):
        self._native = native
        self._pick = pick
        self._budget = budget
        self._forced = forced
        self._pending = bool(forced)  # the forced prefix waits for <asr_text>
        self._draft = draft
        self._asr_text = asr_text
        self._record = record
        self._stats = stats
        self.out: list[int] = []
        self.probs: list[float] = []

    def run(self, n_past: int, after_header: bool) -> tuple[list[int], list[float]]:
        """Decode from ``n_past`` to an end-of-generation token or the budget.

        ``forced`` is prefilled at once when the prompt ends with the ``<asr_text>`` of a forced
        language (``after_header``), else after the model writes ``<asr_text>``."""
        native = self._native
        logits = native.logits(-1)
        if self._forced and after_header:
            n_past, logits = self._force([], n_past)
        while True:
            token, p = self._pick(logits, self.out)
            if native.is_eog(token) or len(self.out) >= self._budget:
                break
            self._emit(token, p)
            if self._pending and token == self._asr_text:
                n_past, logits = self._force([token], n_past)
            elif self._draft[: len(self.out)] == self.out and len(self._draft) > len(self.out):
                n_past, logits = self._verify(token, n_past)
            else:
                n_past = native.decode_tokens([token], n_past)
                logits = native.logits(-1)
        self._stats.generated = len(self.out)
        return self.out, self.probs

    def _emit(self, token: int, p: float) -> None:
        self.out.append(token)
        self.probs.append(p)
        self._record(token)

    def _force(self, chosen: list[int], n_past: int) -> tuple[int, np.ndarray]:
        """Prefill ``chosen`` (the token just picked, already in ``out``) and the forced
        prefix; the new position and the logits after them."""
        self._pending = False
        take = self._forced[: max(0, self._budget - len(self.out))]
        if chosen or take:
            n_past = self._native.decode_tokens(chosen + take, n_past)
        for t in take:
            self._emit(t, 1.0)
        self._stats.forced = len(take)
        self._draft = realign(self._native, self._draft, self.out)
        return n_past, self._native.logits(-1)

    def _verify(self, token: int, n_past: int) -> tuple[int, np.ndarray]:
        """Decode ``token`` with the draft after it in one batch (up to its ``<asr_text>``
        while the prefix waits to be forced after that), keep the draft's tokens greedy
        decoding agrees with, and drop the rest from the cache."""
        native, draft, k, asr_text = self._native, self._draft, len(self.out), self._asr_text
        end = k + min(len(draft) - k, self._budget - k, _MAX_VERIFIED)
        if self._pending and asr_text is not None and asr_text in draft[k:end]:
            end = draft.index(asr_text, k) + 1
        batch = [token] + draft[k:end]
        n_past = native.decode_tokens(batch, n_past, all_logits=True)
        j = self._accept(batch)
        logits = native.logits(j)
        rejected = len(batch) - 1 - j
        native.forget_from(n_past - rejected)
        n_past -= rejected
        if self._pending and self.out[-1] == self._asr_text:
            n_past, logits = self._force([], n_past)
        return n_past, logits

    def _accept(self, batch: list[int]) -> int:
        """Emit the batch's tokens after the first while greedy decoding would have chosen
        them; the index of the last output whose logits hold the next choice."""
        native = self._native
        for j in range(len(batch) - 1):
            nxt, p = self._pick(native.logits(j), self.out)
            if nxt != batch[j + 1] or native.is_eog(nxt) or len(self.out) >= self._budget:
                return j
            self._emit(nxt, p)
            self._stats.drafted += 1
        return len(batch) - 1
