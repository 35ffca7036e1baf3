"""Dictation into any app: a global shortcut starts a turn, its committed words are typed into
the focused application. No Qt here; ``desktop_rt/ui/dictation.py`` is the window's adapter.
See docs/design/dictation.md."""
