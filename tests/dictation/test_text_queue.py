"""TextQueue: texts come out in order, and wait_idle waits until each one is done."""

from __future__ import annotations

import threading

from desktop_rt.dictation.text_queue import TextQueue


def test_texts_come_out_in_order_and_idle_waits_for_each_to_be_done():
    texts = TextQueue()
    out: list[str] = []
    release = threading.Event()

    def typer() -> None:
        for text in texts.texts():
            release.wait(10)
            out.append(text)
            texts.done()

    thread = threading.Thread(target=typer)
    thread.start()
    for text in ("one", " two", " three"):
        texts.put(text)
    assert not texts.wait_idle(0.05)  # held by the typer: not idle yet
    release.set()
    assert texts.wait_idle(10)
    texts.close()
    thread.join(10)
    assert out == ["one", " two", " three"] and not thread.is_alive()


def test_an_empty_queue_is_idle():
    assert TextQueue().wait_idle(0)
