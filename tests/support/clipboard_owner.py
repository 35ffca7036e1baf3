"""The user's clipboard for paste tests: another application (Tk) that copied something.

Run as ``python -m tests.support.clipboard_owner KIND TEXT`` with ``DISPLAY`` set: it owns the
X11 CLIPBOARD, holding TEXT as text (KIND ``text``) or only as an ``image/png`` (KIND ``image``:
a request for text is refused), and prints "ready". It never takes focus (it has no window on
screen). It serves the clipboard until another client takes it or it is terminated.
"""

from __future__ import annotations

import sys
import tkinter as tk


def main() -> None:
    kind, text = sys.argv[1], sys.argv[2]
    root = tk.Tk()
    root.withdraw()
    root.clipboard_clear()
    if kind == "image":
        root.clipboard_append(text, type="image/png")
    else:
        root.clipboard_append(text)
    root.update()
    print("ready", flush=True)
    root.mainloop()


if __name__ == "__main__":
    main()
