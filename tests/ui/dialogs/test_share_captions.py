"""The Share captions dialog on a real window: on/off, link, QR code, copy, new link."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from PySide6.QtGui import QGuiApplication

from desktop_rt.config import ShareSettings
from desktop_rt.live.caption_share import ShareState
from desktop_rt.ui.dialogs.share_captions import ShareCaptionsDialog, qr_pixmap


def status_of(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.fixture
def dialog(idle_app, qtbot):
    controller = idle_app.controller
    controller.apply_settings(controller.settings.with_group(share=ShareSettings(port=0)))
    dialog = ShareCaptionsDialog(idle_app.window.share, idle_app.window)
    qtbot.addWidget(dialog)
    return dialog


def share_and_wait(qtbot, dialog, on: bool) -> ShareState:
    with qtbot.waitSignal(dialog.control.state_changed, timeout=30_000) as blocker:
        dialog.enabled.setChecked(on)
    return blocker.args[0]


def test_sharing_is_off_by_default(idle_app, dialog):
    assert idle_app.controller.settings.share == ShareSettings(port=0)
    assert ShareSettings().enabled is False
    assert not dialog.enabled.isChecked() and dialog.url.text() == ""
    assert not dialog.copy_button.isEnabled()
    assert idle_app.window.share.share.server is None


def test_enabling_shows_a_working_link_with_its_qr_code_and_copies_it(idle_app, dialog, qtbot):
    state = share_and_wait(qtbot, dialog, True)
    assert state.shared and dialog.url.text() == state.url
    token = idle_app.controller.settings.share.token
    assert token and token != idle_app.controller.settings.server.api_key
    assert state.url.endswith(f"/captions?token={token}")
    assert status_of(state.url) == 200
    pixmap = dialog.qr.pixmap()
    assert not pixmap.isNull() and pixmap.width() == pixmap.height() > 100
    assert pixmap.toImage() == qr_pixmap(state.url).toImage()
    dialog.copy_button.click()
    assert QGuiApplication.clipboard().text() == state.url


def test_a_new_link_retires_the_old_one(idle_app, dialog, qtbot):
    old = share_and_wait(qtbot, dialog, True)
    with qtbot.waitSignal(dialog.control.state_changed, timeout=30_000) as blocker:
        dialog.new_button.click()
    new = blocker.args[0]
    assert new.shared and new.url != old.url and dialog.url.text() == new.url
    assert status_of(old.url) == 403
    assert status_of(new.url) == 200


def test_disabling_stops_the_listener(idle_app, dialog, qtbot):
    state = share_and_wait(qtbot, dialog, True)
    off = share_and_wait(qtbot, dialog, False)
    assert not off.shared and dialog.url.text() == "" and dialog.qr.pixmap().isNull()
    assert idle_app.controller.settings.share.enabled is False
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(state.url, timeout=30)


def test_a_busy_port_is_shown_not_raised(idle_app, qtbot):
    import socket

    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = taken.getsockname()[1]
        controller = idle_app.controller
        controller.apply_settings(controller.settings.with_group(share=ShareSettings(port=port)))
        dialog = ShareCaptionsDialog(idle_app.window.share, idle_app.window)
        qtbot.addWidget(dialog)
        state = share_and_wait(qtbot, dialog, True)
    assert not state.shared and "Could not share captions" in dialog.status.text()


def test_every_control_is_named_described_and_has_its_own_mnemonic(dialog):
    controls = [dialog.enabled, dialog.url, dialog.copy_button, dialog.new_button, dialog.qr]
    assert all(c.accessibleName() and c.accessibleDescription() for c in controls)
    keys = [
        b.text().split("&")[1][0].lower()
        for b in (dialog.enabled, dialog.copy_button, dialog.new_button)
    ]
    assert len(set(keys)) == len(keys)
