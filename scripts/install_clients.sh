#!/usr/bin/env bash
# Install the Codex CLI and Gemini CLI binaries into project-local folders, for the
# end-to-end tests (tests/e2e/test_codex.py, test_gemini.py) and CI. Idempotent: a working
# binary already there is reused without touching the network. Needs node/npm and the npm
# registry. The tests find them at .codex-bin/codex and .gemini-bin/gemini (keep both out of git).
#
#   scripts/install_clients.sh                     # the versions below
#   CODEX_VERSION=0.171.0 GEMINI_VERSION=0.61.0 scripts/install_clients.sh
set -euo pipefail

say() { printf 'install_clients: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
codex_version=${CODEX_VERSION:-0.171.0}
gemini_version=${GEMINI_VERSION:-0.61.0}
command -v npm >/dev/null 2>&1 || die "npm not found; install Node.js (with npm) first"

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64 | Linux-amd64) codex_platform=linux-x64; triple=x86_64-unknown-linux-musl ;;
  Linux-aarch64 | Linux-arm64) codex_platform=linux-arm64; triple=aarch64-unknown-linux-musl ;;
  Darwin-arm64) codex_platform=darwin-arm64; triple=aarch64-apple-darwin ;;
  Darwin-x86_64) codex_platform=darwin-x64; triple=x86_64-apple-darwin ;;
  *) die "unsupported platform $(uname -s) $(uname -m)" ;;
esac

# Codex: the platform package holds the native binary (the wrapper only picks it).
codex_dest=$repo/.codex-bin
codex_bin=$codex_dest/node_modules/@openai/codex/vendor/$triple/bin/codex
if [ -x "$codex_bin" ] && "$codex_bin" --version 2>/dev/null | grep -q " $codex_version\$"; then
  say "reusing Codex $codex_version"
else
  say "installing @openai/codex@$codex_version-$codex_platform into $codex_dest"
  npm install --prefix "$codex_dest" --no-audit --no-fund --ignore-scripts --no-save \
    "@openai/codex@$codex_version-$codex_platform" >&2 || die "npm install of Codex failed"
  [ -x "$codex_bin" ] || die "Codex installed but $codex_bin is missing"
fi
ln -sfn "$codex_bin" "$codex_dest/codex"

# Gemini CLI: a node program.
gemini_dest=$repo/.gemini-bin
gemini_bin=$gemini_dest/node_modules/.bin/gemini
if [ -x "$gemini_bin" ] && [ "$("$gemini_bin" --version 2>/dev/null)" = "$gemini_version" ]; then
  say "reusing Gemini CLI $gemini_version"
else
  say "installing @google/gemini-cli@$gemini_version into $gemini_dest"
  npm install --prefix "$gemini_dest" --no-audit --no-fund --no-save "@google/gemini-cli@$gemini_version" >&2 ||
    die "npm install of Gemini CLI failed"
  [ -x "$gemini_bin" ] || die "Gemini CLI installed but $gemini_bin is missing"
fi
ln -sfn "$gemini_bin" "$gemini_dest/gemini"
say "Codex $("$codex_dest/codex" --version) and Gemini CLI $("$gemini_dest/gemini" --version) ready"
