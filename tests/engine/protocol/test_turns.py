"""The item ledger: commits chain, completed and cleared items are never found again."""

from __future__ import annotations

from desktop_rt.engine.protocol.events import Clear, Flush
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
