#!/bin/sh
# Install this Coven Desktop bundle for the current user (no root, no pip), or remove it:
#
#   ./install.sh              copy the bundle to ~/.local/lib/coven-desktop, put coven and
#                             coven-desktop in ~/.local/bin, and add the menu entry and icons
#   ./install.sh --uninstall  remove all of that (your routines and their data stay)
#
# Honours XDG_DATA_HOME. Start at login is switched on from the tray menu, not here.
set -eu

APP_ID=io.coven.Desktop
here=$(cd "$(dirname "$0")" && pwd)
data_home=${XDG_DATA_HOME:-$HOME/.local/share}
case "$data_home" in /*) ;; *) data_home=$HOME/.local/share ;; esac  # the XDG spec: absolute only
lib=$HOME/.local/lib/coven-desktop
bin=$HOME/.local/bin

remove() {
    rm -f "$bin/coven" "$bin/coven-desktop"
    rm -f "$data_home/applications/$APP_ID.desktop" "$data_home/metainfo/$APP_ID.metainfo.xml"
    rm -f "$data_home"/icons/hicolor/*/apps/"$APP_ID".png "$data_home/icons/hicolor/scalable/apps/$APP_ID.svg"
    rm -rf "$lib"
}

if [ "${1:-}" = "--uninstall" ]; then
    remove
    echo "Coven Desktop removed (your data directory is untouched)."
    exit 0
fi

case "$lib" in
    *[\"\`\$\\%]*) echo "install.sh: cannot write a menu entry for $lib (it has \" \` \$ \\ or %)" >&2; exit 2 ;;
esac
[ -x "$here/coven-desktop" ] || { echo "install.sh: run me from the unpacked bundle" >&2; exit 2; }

remove
mkdir -p "$lib" "$bin" "$data_home/applications" "$data_home/metainfo"
cp -a "$here/." "$lib/"
ln -s "$lib/coven" "$bin/coven"
ln -s "$lib/coven-desktop" "$bin/coven-desktop"
# Exec is absolute: ~/.local/bin is not on every desktop session's PATH.
sed "s|^Exec=coven-desktop\$|Exec=\"$lib/coven-desktop\"|" \
    "$here/share/applications/$APP_ID.desktop" >"$data_home/applications/$APP_ID.desktop"
cp "$here/share/metainfo/$APP_ID.metainfo.xml" "$data_home/metainfo/"
cp -r "$here/share/icons" "$data_home/"
command -v update-desktop-database >/dev/null && update-desktop-database -q "$data_home/applications" || true
command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -t "$data_home/icons/hicolor" || true
echo "Coven Desktop installed: find it in your menu, or run $bin/coven-desktop"
