"""The item ledger: commits chain, completed and cleared items are never found again."""

from __future__ import annotations

import math

import pytest

from desktop_rt.core_types import Word
from desktop_rt.engine.protocol.events import Clear, Flush, TranscriptionFailed
from desktop_rt.engine.protocol.turns import Item, ItemLedger
from tests.support.session_support import words


def test_commits_chain_and_open_the_next_item():
    ledger = ItemLedger()
    first = ledger.open
    first.samples = 160
    committed, flush = ledger.commit(final=False)
    assert (committed.item_id, committed.previous_item_id) == (first.id, None)
    assert flush == Flush(first.id, False)
    second = ledger.open
    assert second.id != first.id and ledger.awaiting_flush
    committed, flush = ledger.commit(final=True)
    assert (committed.item_id, committed.previous_item_id) == (second.id, first.id)
    assert flush.final


def test_complete_takes_a_committed_item_once():
    ledger = ItemLedger()
    item = ledger.open
    ledger.commit(final=False)
    assert ledger.find(item.id) is item
    assert ledger.complete(item.id) is item
    assert ledger.complete(item.id) is None and ledger.find(item.id) is None
    assert not ledger.awaiting_flush


def test_clear_drops_the_open_item():
    ledger = ItemLedger()
    quiet = ledger.open
    assert ledger.clear() is None and ledger.open.id == quiet.id  # nothing reached the worker
    heard = ledger.open
    heard.samples = 320
    assert ledger.clear() == Clear(heard.id)
    assert ledger.open.id != heard.id and ledger.find(heard.id) is None


def test_deltas_join_into_the_transcript_without_a_leading_space():
    item = Item("item_1")
    assert item.add_words(words(" Hello", ",")) == "Hello,"
    assert item.add_words([]) == ""
    assert item.add_words(words(" world")) == " world"
    assert item.text == "Hello, world"
    assert item.set_tentative(words(" again")) and item.tentative == " again"
    assert not item.set_tentative(words(" again"))
    done = item.completed()
    assert (done.item_id, done.transcript) == ("item_1", "Hello, world")


def test_an_item_decoded_whole_completes_with_that_text_and_its_probabilities():
    ledger = ItemLedger()
    item = ledger.open
    item.samples = 16000
    ledger.commit(final=False)
    streamed = ledger.words(item.id, words(" Hello", " word"), None, None, logprobs=True)
    assert [e.delta for e in streamed] == ["Hello word"]
    final = [Word(" Hello,", 0, 1, 0.9), Word(" world.", 1, 2, 0.5)]
    *last, done = ledger.flushed(item.id, words(" again"), "en", logprobs=True, final=final)
    assert [e.delta for e in last] == [" again"]  # the streamed words go out as they were
    assert done.transcript == "Hello, world."  # completed carries the whole decode
    assert done.logprobs is not None
    assert [lp.token for lp in done.logprobs] == ["Hello,", " world."]
    assert done.logprobs[1].logprob == pytest.approx(math.log(0.5))
    assert ledger.find(item.id) is None


def test_a_whole_decode_that_heard_nothing_leaves_the_streamed_text():
    item = Item("item_1")
    item.add_words(words(" Kept"))
    assert item.completed(final=[]).transcript == "Kept"
    assert item.completed(final=words(" ")).transcript == "Kept"
    assert item.completed(final=None).transcript == "Kept"
    item.failure = "transcription failed: boom"
    failed = item.completed(final=words(" Heard", " whole"))
    assert isinstance(failed, TranscriptionFailed) and failed.transcript == "Heard whole"
