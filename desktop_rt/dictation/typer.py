"""The typer protocol: what dictation types or pastes committed words through.

Every backend (:class:`~desktop_rt.dictation.x11_typer.X11Typer`,
:class:`~desktop_rt.dictation.x11_paster.X11Paster`,
:class:`~desktop_rt.dictation.wayland_typer.WtypeTyper`,
:class:`~desktop_rt.dictation.wayland_typer.YdotoolTyper`) works on a thread of its own with the
same call order: :meth:`Typer.start` (raises
:class:`~desktop_rt.dictation.errors.DictationError` with a message for people), then any number
of :meth:`Typer.type_text` (queues, returns at once; text is put in in order) and
:meth:`Typer.wait_idle`, then :meth:`Typer.stop`. Failures while typing go to the ``on_error``
callback the backend was made with. :mod:`~desktop_rt.dictation.typer_choice` picks one.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["Typer"]


class Typer(Protocol):
    """See the module docstring."""

    def start(self) -> None: ...

    def type_text(self, text: str) -> None: ...

    def wait_idle(self, timeout: float) -> bool:
        """True once everything queued so far was put in (False after ``timeout`` seconds)."""
        ...

    def stop(self) -> None: ...
