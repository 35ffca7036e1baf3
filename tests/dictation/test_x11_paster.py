"""Paste mode on a real X server (Xvfb): the text goes in through the clipboard and Ctrl+V, and
the user's clipboard is put back. The field is another process's Tk text field (focused); the
user's clipboard is a third process's (tests/support/clipboard_owner.py)."""

from __future__ import annotations

import pytest
from Xlib import X, display

from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.x11_paster import X11Paster
from desktop_rt.dictation.x11_selection import EMPTY, ClipboardContent, X11Clipboard
from tests.support.x_clipboard import clipboard_now, user_clipboard

TEXT = "Pasted words: Café déjà vu, привет 東京 €5 (yes) ~ a_b"


@pytest.fixture
def paster(x_display):
    errors: list[str] = []
    paster = X11Paster(x_display, errors.append)
    paster.start()
    paster.errors = errors
    yield paster
    paster.stop()
    assert not errors


def test_the_field_gets_the_text_and_the_users_clipboard_comes_back(paster, field, x_display):
    with user_clipboard(x_display, "text", "the user's own copy"):
        assert clipboard_now(x_display) == ClipboardContent("text", "the user's own copy")
        paster.type_text(TEXT)
        assert paster.wait_idle(30)
        field.wait_text(TEXT)
        assert paster.typed_instead == 0  # pasted, not typed
        assert clipboard_now(x_display) == ClipboardContent("text", "the user's own copy")
        paster.type_text(" and more")
        assert paster.wait_idle(30)
        field.wait_text(TEXT + " and more")
        assert clipboard_now(x_display) == ClipboardContent("text", "the user's own copy")


def test_an_empty_clipboard_is_empty_again(paster, field, x_display):
    connection = display.Display(x_display)
    clipboard = X11Clipboard(connection)
    clipboard.own("x")  # then release it: nobody owns the clipboard
    clipboard.release()
    connection.close()
    assert clipboard_now(x_display) == EMPTY
    paster.type_text("from an empty clipboard")
    assert paster.wait_idle(30)
    field.wait_text("from an empty clipboard")
    assert paster.typed_instead == 0
    assert clipboard_now(x_display) == EMPTY
    probe = display.Display(x_display)
    assert probe.get_selection_owner(probe.intern_atom("CLIPBOARD")) == X.NONE
    probe.close()


def test_a_clipboard_that_is_not_text_is_left_alone_and_the_words_are_typed(
    paster, field, x_display
):
    with user_clipboard(x_display, "image", "PNG-bytes") as owner:
        assert clipboard_now(x_display).kind == "unreadable"
        paster.type_text("typed, not pasted")
        assert paster.wait_idle(30)
        field.wait_text("typed, not pasted")
        assert paster.typed_instead == 1
        probe = display.Display(x_display)
        owner_window = probe.get_selection_owner(probe.intern_atom("CLIPBOARD"))
        probe.close()
        assert owner_window != X.NONE and owner.poll() is None  # still the user's app's


def test_a_display_that_is_not_there_is_a_clear_error():
    with pytest.raises(DictationError, match="could not reach the X display"):
        X11Paster(":999").start()


def test_a_paste_nobody_takes_is_typed_instead_and_the_clipboard_still_comes_back(x_display):
    """No window has focus: Ctrl+V fetches nothing within the paste timeout."""
    errors: list[str] = []
    paster = X11Paster(x_display, errors.append, paste_timeout=0.5)
    paster.start()
    try:
        with user_clipboard(x_display, "text", "kept"):
            paster.type_text("nobody pastes this")
            assert paster.wait_idle(30)
            assert paster.typed_instead == 1
            assert clipboard_now(x_display) == ClipboardContent("text", "kept")
    finally:
        paster.stop()
    assert not errors


def test_a_copy_made_between_two_pastes_is_the_one_put_back(paster, field, x_display):
    with user_clipboard(x_display, "text", "first copy"):
        paster.type_text("one")
        assert paster.wait_idle(30)
        field.wait_text("one")
        with user_clipboard(x_display, "text", "second copy"):  # the user copies again
            paster.type_text(" two")
            assert paster.wait_idle(30)
            field.wait_text("one two")
            assert clipboard_now(x_display) == ClipboardContent("text", "second copy")
