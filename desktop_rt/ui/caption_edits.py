"""Caption corrections and shading, wired between the window's views, the settings and the history.

:func:`connect_caption_edits` sends a live line corrected in the captions to the history writer
(queued behind that turn's own writes, on the writer's thread; the History tab reads it again
when shown), to the overlay and the caption page's viewers (the corrected line replaces the old
one there), and to the live session, whose model is prompted with the words the user changed for
the rest of the session (:meth:`LiveSession.learn <desktop_rt.live.session.LiveSession.learn>`).
None of it blocks: writes and prompts are queued to their own threads. It also has the captions
and the history shade uncertain words as the captions settings say, now and after every change
of the settings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop_rt.config import CaptionSettings, Settings
from desktop_rt.live.transcript_recorder import CaptionTurn
from desktop_rt.ui.widgets.caption_formats import Shading

if TYPE_CHECKING:
    from desktop_rt.ui.controller import AppController
    from desktop_rt.ui.widgets.caption_view import CaptionView
    from desktop_rt.ui.widgets.history_view import HistoryView
    from desktop_rt.ui.widgets.overlay import CaptionOverlay

__all__ = ["connect_caption_edits", "shading_of"]


def shading_of(captions: CaptionSettings) -> Shading:
    return Shading(captions.shade_uncertain, captions.uncertain_below)


def connect_caption_edits(
    controller: AppController,
    captions: CaptionView,
    history: HistoryView,
    overlay: CaptionOverlay | None = None,
) -> None:
    """See the module docstring."""

    def corrected(turn: CaptionTurn, text: str) -> None:
        writer = controller.writer
        if writer is not None and turn.session_uid:
            writer.correct_turn(turn.session_uid, turn.item_id, text)
        if overlay is not None:
            overlay.apply_correction(turn.item_id, text)
        server = controller.server
        if server is not None:
            server.captions.observe_correction(turn.item_id, text)
        live = controller.live
        if live is not None:
            live.learn(turn.committed, text)

    def apply(settings: Settings) -> None:
        shading = shading_of(settings.captions)
        captions.set_shading(shading)
        history.set_shading(shading)

    captions.corrected.connect(corrected)
    controller.settings_changed.connect(apply)
    apply(controller.settings)
