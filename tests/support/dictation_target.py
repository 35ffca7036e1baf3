"""Another application for dictation tests: a Tk window with one text field that has focus.

Run as ``python -m tests.support.dictation_target OUT_FILE [TIMES_FILE]`` with ``DISPLAY`` set.
The field's whole text is written to OUT_FILE (atomically) whenever it changes; with TIMES_FILE,
a line ``<time.monotonic()> <length>`` is appended there too (the clock is the machine's, so
bench/bench_dictation.py compares it with its own). "ready" is printed once the field has focus.
"""

from __future__ import annotations

import os
import sys
import time
import tkinter as tk
from pathlib import Path


def main() -> None:
    out = Path(sys.argv[1])
    times = open(sys.argv[2], "a", buffering=1) if len(sys.argv) > 2 else None  # noqa: SIM115
    root = tk.Tk()
    root.title("dictation target")
    root.geometry("600x200+50+50")
    field = tk.Text(root, width=70, height=8)
    field.pack(fill="both", expand=True)

    def save(_event: object = None) -> None:
        field.edit_modified(False)
        text = field.get("1.0", "end-1c")
        if times is not None:
            times.write(f"{time.monotonic():.6f} {len(text)}\n")
        tmp = out.with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out)

    field.bind("<<Modified>>", save)
    save()

    def focus() -> None:
        root.focus_force()
        field.focus_set()
        root.after(200, announce)

    def announce() -> None:
        if root.focus_get() is field:
            print("ready", flush=True)
        else:
            root.after(100, focus)

    root.after(200, focus)
    root.mainloop()


if __name__ == "__main__":
    main()
