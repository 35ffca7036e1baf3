"""The window's side of sharing captions: the setting, the listener's helper thread, the dialog.

:class:`CaptionShareControl` lives on the UI thread. :meth:`~CaptionShareControl.set_shared`
and :meth:`~CaptionShareControl.new_link` save the ``share`` settings group (a token is made on
first use) and hand the listener's start or stop to one helper thread
(:class:`~desktop_rt.live.caption_share.CaptionShare` blocks while it binds or closes);
:attr:`~CaptionShareControl.state_changed` then carries the new
:class:`~desktop_rt.live.caption_share.ShareState`. Whenever the server becomes ready or stops,
the listener follows the new server's captions. Closing the window stops sharing (the setting
stays, so the next start shares again).
"""

from __future__ import annotations

import secrets
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from desktop_rt.config import ShareSettings
from desktop_rt.live.caption_share import CaptionShare, ShareState
from desktop_rt.ui.bridge import ServerState

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from desktop_rt.ui.controller import AppController

__all__ = ["CaptionShareControl", "new_token"]


def new_token() -> str:
    """A viewer token: 24 URL-safe characters, 144 random bits."""
    return secrets.token_urlsafe(18)


class CaptionShareControl(QObject):
    """See the module docstring."""

    state_changed = Signal(object)  # ShareState, emitted on the UI thread

    def __init__(
        self,
        controller: AppController,
        parent: QObject | None = None,
        *,
        address: str | None = None,
    ):
        super().__init__(parent)
        self.controller = controller
        self.share = CaptionShare(address)
        self.state = ShareState(False, message="Captions are not shared.")
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="desktop-rt-share")
        self._closed = False
        self._done: Future[None] | None = None
        self.state_changed.connect(self._remember)
        controller.bridge.server_state.connect(self._server_changed)
        self._server_changed(controller.server_state)
        if controller.settings.share.enabled:
            self._submit(controller.settings.share)

    @property
    def settings(self) -> ShareSettings:
        return self.controller.settings.share

    def set_shared(self, on: bool) -> None:
        """Share the captions on the LAN (or stop), and remember it."""
        share = replace(self.settings, enabled=on, token=self.settings.token or new_token())
        self._save(share)

    def new_link(self) -> None:
        """A new token: links and QR codes given out before stop working."""
        self._save(replace(self.settings, token=new_token()))

    def open_dialog(self, parent: QWidget | None = None) -> None:
        from desktop_rt.ui.dialogs.share_captions import ShareCaptionsDialog

        ShareCaptionsDialog(self, parent).exec()

    def shutdown(self) -> Future[None]:
        """Stop sharing (on the helper thread); the setting is kept. The future is done once the
        helper thread has finished all it was given. Calling it again is harmless."""
        if self._done is None:
            self._closed = True
            self._done = self._pool.submit(self.share.stop)
            self._pool.shutdown(wait=False)
        return self._done

    def _save(self, share: ShareSettings) -> None:
        s = self.controller.settings
        self.controller.apply_settings(s.with_group(share=share))
        self._submit(share)

    def _submit(self, share: ShareSettings) -> None:
        if not self._closed:
            self._pool.submit(lambda: self.state_changed.emit(self.share.apply(share)))

    def _remember(self, state: ShareState) -> None:
        self.state = state

    def _server_changed(self, _state: ServerState) -> None:
        server = self.controller.server
        self.share.follow(server.captions if server is not None else None)
