#!/bin/sh
# Add desktop-rt to the applications menu (for this user), pointing at this folder.
#   ./add-to-menu.sh            add (or update, after moving the folder)
#   ./add-to-menu.sh --remove   remove the menu entry and icon again
# Nothing outside ~/.local/share is touched; the app itself stays in this folder.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${XDG_DATA_HOME:-$HOME/.local/share}
ENTRY="$DATA/applications/desktop-rt.desktop"
ICON="$DATA/icons/hicolor/scalable/apps/desktop-rt.svg"

if [ "${1:-}" = "--remove" ]; then
  rm -f "$ENTRY" "$ICON"
  echo "desktop-rt removed from the menu (the folder $HERE is left as it is)."
else
  mkdir -p "$(dirname "$ENTRY")" "$(dirname "$ICON")"
  cp "$HERE/desktop-rt.svg" "$ICON"
  # Exec must be an absolute path, double-quoted per the desktop entry spec: inside the quotes
  # \ " ` $ take a backslash, and string-value escaping doubles every backslash again.
  EXEC_PATH="$HERE/desktop-rt" awk '
    /^Exec=/ {
      p = ENVIRON["EXEC_PATH"]; q = ""
      for (i = 1; i <= length(p); i++) {
        c = substr(p, i, 1)
        if (c == "\\") q = q "\\\\\\\\"; else if (index("\"`$", c)) q = q "\\\\" c; else q = q c
      }
      print "Exec=\"" q "\""; next
    }
    { print }' "$HERE/desktop-rt.desktop" > "$ENTRY"
  chmod 644 "$ENTRY"
  echo "desktop-rt added to the menu: $ENTRY"
fi
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$DATA/applications" || true
command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t "$DATA/icons/hicolor" || true
