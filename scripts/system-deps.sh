#!/usr/bin/env bash
# Makes sure the Debian packages Desk needs are present: installs them when we are root on a
# Debian-like system, otherwise prints one line naming what is missing and fails.
# Usage: scripts/system-deps.sh run|package|test
set -euo pipefail
purpose=${1:-run}

# Packages that `make run` needs (build the native module, the UI, show the Qt window).
# git: the checkpoints' shadow repositories (desktop/checkpoints) run it.
run_packages=(gcc git python3-dev python3-venv nodejs npm
  libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxcb-xkb1
  libxcb-shape0 libxcb-randr0 libxcb-xinerama0 libxkbcommon-x11-0 libegl1 libgl1
  libfontconfig1 libdbus-1-3 libnss3 libxcomposite1 libxdamage1 libxrandr2 libxtst6
  fonts-noto-cjk fonts-noto-color-emoji)  # terminal fallbacks: CJK text and emoji, not boxes
# And what the test suite drives: a real browser, a virtual screen, screenshots, and ripgrep
# (the grep tool uses it when present; its tests cover both it and the Python fallback).
test_packages=(chromium xvfb xdotool x11-utils imagemagick ripgrep)
# `make package` renders the icon's PNGs; the package tests also validate the desktop entry
# and install the wheel with pipx.
package_packages=(librsvg2-bin)
package_test_packages=(desktop-file-utils pipx)

wanted=("${run_packages[@]}")
[ "$purpose" = package ] && wanted+=("${package_packages[@]}")
[ "$purpose" = test ] && wanted+=("${test_packages[@]}" "${package_packages[@]}" "${package_test_packages[@]}")

if ! command -v dpkg-query >/dev/null 2>&1; then
  # Not Debian: trust the developer's machine, but name the tools we will call.
  for tool in cc git node npm; do
    command -v "$tool" >/dev/null 2>&1 || { echo "desk: missing '$tool' (install it with your package manager)" >&2; exit 1; }
  done
  exit 0
fi

missing=()
for pkg in "${wanted[@]}"; do
  # A tool already on PATH from elsewhere (pyenv's python, nvm's node) counts as present.
  case "$pkg" in
    nodejs) command -v node >/dev/null 2>&1 && continue ;;
    npm) command -v npm >/dev/null 2>&1 && continue ;;
    python3-dev|python3-venv) python3 -c 'import sysconfig, venv, os; assert os.path.exists(sysconfig.get_paths()["include"] + "/Python.h")' 2>/dev/null && continue ;;
    gcc) command -v cc >/dev/null 2>&1 && continue ;;
  esac
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "desk: installing system packages: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  exit 0
fi
echo "desk: missing system packages: ${missing[*]} (install with: sudo apt-get install ${missing[*]})" >&2
exit 1
