#!/usr/bin/env bash
# Install Debian's chromium for the web inspector's browser test (tests/test_serve_browser.py).
# Idempotent: an installed chromium is reused. Needs root (or password-less sudo) and apt.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install_chromium: no apt-get here; install chromium yourself and set CHROMIUM=/path/to/it" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  if sudo -n true 2>/dev/null; then sudo="sudo -n"; else
    echo "install_chromium: needs root to run apt-get install chromium" >&2
    exit 1
  fi
fi
echo "install_chromium: apt-get install chromium ..." >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get install -y -q chromium >/dev/null 2>&1 || { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q chromium >/dev/null; }
command -v chromium >/dev/null
