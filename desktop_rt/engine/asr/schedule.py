"""When a pass is due and how much of the window it hears: :class:`PassSchedule`.

Call order: ask ``grid_pass_due`` (a block backend) or ``regular_pass_due`` at each
``process``; before a pass take its size from ``pass_samples`` and set ``heard_end``; ``reset``
when the segment ends; insert no more than ``room`` before a ``process``. A pass comes after
enough new audio (less at a segment's onset, never less than the backend asked for); a block
backend's passes come each time the window crosses a grid step, on the audio's clock, and hear
whole blocks.
"""

from __future__ import annotations

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.asr.backend import BackendTraits
from desktop_rt.engine.asr.streaming_config import StreamingConfig
from desktop_rt.engine.asr.window import AudioWindow

__all__ = ["PassSchedule"]


class PassSchedule:
    """The pace of one stream's passes, from its config and its backend's traits."""

    def __init__(self, config: StreamingConfig, traits: BackendTraits):
        self._config = config
        self._backend_chunk = traits.min_update_seconds  # least new audio an update is worth
        self.grid = traits.update_grid_seconds or None
        """A block backend's block length (``None``: no grid)."""
        self._grid_step = (
            self.grid * max(1, round(self._backend_chunk / self.grid)) if self.grid else None
        )  # the backend's min_update_seconds in whole blocks
        self.heard_end: float | None = None
        """Stream time the latest hypothesis's window ended (``None``: none this segment)."""
        window = traits.window_seconds
        self._room_limit = (
            config.max_window_seconds if window is None else window - config.min_chunk_seconds
        )

    def reset(self) -> None:
        self.heard_end = None

    def room(self, window: AudioWindow) -> float:
        """Seconds of audio ``window`` may take in before its next pass: so much that one pass
        still hears it as one window of the backend's, less a chunk (a longer one would be cut
        at the backend's limit mid-speech; ``max_window_seconds`` for a backend that declares
        no window); at least ``min_chunk_seconds``, as each pass's trim makes room again."""
        return max(self._room_limit - window.seconds, self._config.min_chunk_seconds)

    @property
    def passes_are_cheap(self) -> bool:
        """Whether the backend affords passes beyond the regular pace (it did not ask for fewer)."""
        return self._backend_chunk <= self._config.min_chunk_seconds

    def heard_to(self, t: float, now: float) -> bool:
        """Whether the latest hypothesis was made on a window reaching stream time ``t``
        (or ``now``, if that is earlier)."""
        return self.heard_end is not None and self.heard_end >= min(t, now) - 1e-6

    def closing_pass_allowed(self, window: AudioWindow) -> bool:
        """Whether to transcribe a pause as soon as its pad is in.

        An endpoint or ``finish`` then commits that hypothesis without another pass. Not for
        backends that asked for fewer updates: every pause in speech would cost them one.
        """
        return self.passes_are_cheap and window.seconds >= self._config.min_window_seconds

    def regular_pass_due(self, window: AudioWindow) -> bool:
        """Whether enough new audio came for a pass (no grid).

        The quick pace is for a segment's onset; a window a trim left short has the text before
        it as prompt and goes at the normal pace.
        """
        cfg = self._config
        onset = not window.trimmed and window.seconds < cfg.min_agree_seconds
        chunk = max(
            cfg.onset_chunk_seconds if onset else cfg.min_chunk_seconds, self._backend_chunk
        )
        return not (
            window.new_samples < chunk * SAMPLE_RATE or window.seconds < cfg.min_window_seconds
        )

    def grid_pass_due(self, window: AudioWindow) -> bool:
        """Whether the window has crossed a grid step since the last pass (False with no grid).

        A block backend keeps the blocks it encoded, so passes at whole blocks encode each block
        once. Steps count from the window's start, not from the last pass: a late pass does not
        push back the ones after it.
        """
        step = self._grid_step
        if step is None:
            return False
        heard = 0.0 if self.heard_end is None else max(0.0, self.heard_end - window.start)
        due = int(window.seconds / step + 1e-6)
        return due > int(heard / step + 1e-6) and due * step >= self._config.min_window_seconds

    def pass_samples(self, window: AudioWindow, final: bool) -> int:
        """How many of the window's samples a pass hears: whole blocks on a grid, except for a
        segment's final pass, which hears everything."""
        size = len(window)
        if self.grid is not None and not final:
            size = (
                int(window.seconds / self.grid + 1e-6) * int(round(self.grid * SAMPLE_RATE)) or size
            )
        return size
