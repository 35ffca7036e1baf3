"""Which typer a session gets: from its environment variables and what its PATH holds.

The PATHs are folders holding links to the real wtype and ydotool (or nothing): the choice is
made on what is installed, as on a user's machine.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from desktop_rt.dictation.errors import DictationError
from desktop_rt.dictation.pynput_listener import MACOS_PERMISSION, NO_PERMISSION
from desktop_rt.dictation.pynput_typer import PynputTyper
from desktop_rt.dictation.typer_choice import choose_typer, session_kind, wayland_typer
from desktop_rt.dictation.wayland_typer import WtypeTyper, YdotoolTyper
from desktop_rt.dictation.x11_paster import X11Paster
from desktop_rt.dictation.x11_typer import X11Typer


def tools_folder(folder: Path, *names: str) -> str:
    """A PATH entry holding only ``names`` (links to the installed programs)."""
    folder.mkdir()
    for name in names:
        real = shutil.which(name)
        assert real is not None, f"{name} is not installed: run scripts/install.sh --test"
        (folder / name).symlink_to(real)
    return str(folder)


def wayland_env(path: str, desktop: str = "sway") -> dict[str, str]:
    return {
        "PATH": path,
        "WAYLAND_DISPLAY": "wayland-1",
        "XDG_SESSION_TYPE": "wayland",
        "XDG_CURRENT_DESKTOP": desktop,
        "DISPLAY": ":0",  # XWayland is there too: the session is still Wayland
    }


@pytest.mark.parametrize(
    ("env", "kind"),
    [
        ({"DISPLAY": ":0"}, "x11"),
        ({"DISPLAY": ":0", "XDG_SESSION_TYPE": "x11"}, "x11"),
        ({"WAYLAND_DISPLAY": "wayland-0"}, "wayland"),
        (
            {"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0", "XDG_SESSION_TYPE": "wayland"},
            "wayland",
        ),
        ({}, None),
    ],
)
def test_the_session_kind_comes_from_its_variables(env, kind):
    assert session_kind(env) == kind


def test_an_x11_session_types_with_xtest_or_pastes_as_the_setting_says():
    assert isinstance(choose_typer("type", {"DISPLAY": ":0"}, print), X11Typer)
    assert isinstance(choose_typer("paste", {"DISPLAY": ":0"}, print), X11Paster)


def test_a_session_with_no_display_cannot_type():
    with pytest.raises(DictationError, match="no X or Wayland display"):
        choose_typer("type", {}, print)


def test_wtype_comes_first_on_wlroots_desktops_and_ydotool_on_gnome_and_kde(tmp_path):
    both = tools_folder(tmp_path / "both", "wtype", "ydotool")
    assert isinstance(choose_typer("type", wayland_env(both), print), WtypeTyper)
    assert isinstance(choose_typer("paste", wayland_env(both), print), WtypeTyper)
    for desktop in ("GNOME", "ubuntu:GNOME", "KDE"):
        assert isinstance(wayland_typer(wayland_env(both, desktop), print), YdotoolTyper)


def test_the_one_that_is_installed_is_used(tmp_path):
    only_wtype = tools_folder(tmp_path / "w", "wtype")
    only_ydotool = tools_folder(tmp_path / "y", "ydotool")
    assert isinstance(wayland_typer(wayland_env(only_wtype, "GNOME"), print), WtypeTyper)
    assert isinstance(wayland_typer(wayland_env(only_ydotool), print), YdotoolTyper)


def test_neither_installed_is_an_error_naming_what_to_install(tmp_path):
    empty = tools_folder(tmp_path / "none")
    with pytest.raises(DictationError) as caught:
        choose_typer("type", wayland_env(empty), print)
    message = str(caught.value)
    assert "neither wtype nor ydotool is installed" in message
    assert message.index("Install wtype") < message.index("Or install ydotool")  # sway: wtype first
    assert "apt install wtype" in message and "/dev/uinput" in message
    with pytest.raises(DictationError, match="installed. Install ydotool"):
        wayland_typer(wayland_env(empty, "KDE"), print)


@pytest.mark.parametrize(("platform", "kind"), [("win32", "windows"), ("darwin", "macos")])
def test_windows_and_macos_are_their_own_kind_whatever_the_variables(platform, kind):
    assert session_kind({}, platform) == kind
    assert session_kind({"DISPLAY": ":0", "WAYLAND_DISPLAY": "w"}, platform) == kind  # XQuartz
    assert session_kind({"DISPLAY": ":0"}, "linux") == "x11"


@pytest.mark.parametrize("typing", ["type", "paste"])
def test_windows_and_macos_type_through_pynput_in_either_mode(typing):
    windows = choose_typer(typing, {}, print, "win32")
    macos = choose_typer(typing, {"DISPLAY": ":0"}, print, "darwin")
    assert isinstance(windows, PynputTyper) and isinstance(macos, PynputTyper)
    assert windows.permission is NO_PERMISSION and macos.permission is MACOS_PERMISSION
