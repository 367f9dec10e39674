#!/usr/bin/env bash
# Install the Claude Code native binary into a project-local folder, for the e2e tests
# (tests/e2e) and CI. Idempotent: a working binary already there is reused without
# touching the network. On success the last line of stdout is the absolute path of a
# working `claude` binary; everything else goes to stderr.
#
#   scripts/install_claude.sh                       # latest release into ./.claude-bin
#   CLAUDE_CODE_VERSION=2.1.332 scripts/install_claude.sh   # a pinned release
#   CLAUDE_BIN_DIR=/opt/claude scripts/install_claude.sh    # somewhere else
#
# How: npm installs only the platform package (@anthropic-ai/claude-code-<os>-<arch>[-musl]),
# which holds the self-contained native binary; the wrapper package
# @anthropic-ai/claude-code would only copy that same file into place in a postinstall
# script, which npm may hold back. Needs node/npm and the npm registry, nothing else.
# Then point the tests at it: CLAUDE_BIN=$(scripts/install_claude.sh | tail -1)
# (the tests also find ./.claude-bin/claude by themselves). Keep .claude-bin/ out of git.
set -euo pipefail

say() { printf 'install_claude: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest=${CLAUDE_BIN_DIR:-$repo/.claude-bin}
want=${CLAUDE_CODE_VERSION:-}

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) die "unsupported OS $(uname -s) (Linux and macOS only)" ;;
esac
case "$(uname -m)" in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) die "unsupported CPU $(uname -m)" ;;
esac
platform=$os-$arch
if [ "$os" = linux ] && { ls /lib/ld-musl-* >/dev/null 2>&1 || ldd --version 2>&1 | grep -qi musl; }; then
  platform=$platform-musl
fi
pkg=@anthropic-ai/claude-code-$platform
bin=$dest/node_modules/$pkg/claude
link=$dest/claude

installed_version() { # prints e.g. 2.1.332, or nothing when the binary does not run
  "$1" --version 2>/dev/null | awk 'NR==1 {print $1}'
}

have=""
if [ -x "$bin" ]; then
  have=$(installed_version "$bin" || true)
fi

if [ -n "$have" ] && { [ -z "$want" ] || [ "$want" = "$have" ]; }; then
  say "reusing Claude Code $have at $bin"
else
  command -v npm >/dev/null 2>&1 || die "npm not found; install Node.js (with npm) first"
  spec=$pkg@${want:-latest}
  say "installing $spec into $dest"
  mkdir -p "$dest"
  npm install --prefix "$dest" --no-audit --no-fund --ignore-scripts --no-save "$spec" >&2 ||
    die "npm install $spec failed"
  [ -x "$bin" ] || die "npm installed $spec but $bin is missing"
  have=$(installed_version "$bin" || true)
  [ -n "$have" ] || die "$bin does not run (--version failed)"
  if [ -n "$want" ] && [ "$want" != "$have" ]; then
    die "asked for $want, got $have"
  fi
fi

ln -sfn "$bin" "$link"
say "Claude Code $have ready"
printf '%s\n' "$(cd "$(dirname "$link")" && pwd)/$(basename "$link")"
