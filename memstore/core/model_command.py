"""The wake's model command: its default and how a command is split and resolved.

Standard library only.

Here, below both the memory's life (the wake runs it) and wiring (install writes it, resolved, into
the cron job; verify checks it), so that neither imports the other for it.
"""

from __future__ import annotations

import os
import shlex
import shutil

from memstore.core.errors import BadUsage

# No tools at all: the dream and the sit only write text. With tools, the memory hooks would
# approve the model's own edits of memory files, and proposals must never be applied unattended.
# `--tools ''` takes the built-in tools only: MCP servers (the plugin's, the person's own) were
# still offered, so --strict-mcp-config with an empty --mcp-config drops every server, and no skill
# or command is listed (seen with Claude Code 2.1.332; tests/e2e/test_wake_claude.py).
DEFAULT_MODEL_CMD = ("claude -p --tools '' --strict-mcp-config --mcp-config '{\"mcpServers\":{}}' "
                     "--disable-slash-commands")


def model_argv(command: str) -> list[str]:
    """`command` split as a shell would; BadUsage when it cannot be, or is empty."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise BadUsage(f"--model-cmd cannot be split: {exc}",
                       hint="quote it as a shell would") from None
    if not argv:
        raise BadUsage("--model-cmd is empty",
                       hint=f"for example: --model-cmd {shlex.quote(DEFAULT_MODEL_CMD)}")
    return argv


def resolve_model_cmd(command: str | None) -> tuple[str, bool]:
    """The model command, its program made absolute where PATH finds it, and whether it was found.

    cron runs with a bare PATH (/usr/bin:/bin) where `claude` is rarely found, so the
    wake job carries the absolute command install resolved on the person's own PATH.
    """
    argv = model_argv(DEFAULT_MODEL_CMD if command is None else command)
    program = argv[0]
    if os.path.isabs(program):
        return shlex.join(argv), os.access(program, os.X_OK)
    found = shutil.which(program)
    if found is None:
        return shlex.join(argv), False
    return shlex.join([os.path.abspath(found), *argv[1:]]), True
