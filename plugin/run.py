"""Run memstore's command line from the plugin's own environment, on the plugin's agent root.

The plugin's MCP server, its SessionEnd debrief and its slash commands come through here.
The environment (`${CLAUDE_PLUGIN_DATA}/venv`, memstore installed from this very folder) is
built by prepare.py when the person runs `claude --init-only` once. Standard library only: it
runs on the system's python3.
"""

from __future__ import annotations

import os
import sys


def environment() -> str | None:
    """memstore's console script in the plugin's data folder, or None when it is not built yet.

    Without ${CLAUDE_PLUGIN_DATA} (a slash command's shell, an MCP server not given it), the data
    folder of each memstore plugin the user's settings name, by its exact name: never a pattern over
    the folder, where anything that could write under ~/.claude/plugins/data/ would pick the
    program run."""
    data = os.environ.get("CLAUDE_PLUGIN_DATA")
    candidates = [os.path.join(data, "venv", "bin", "memstore")] if data else []
    if not candidates:
        # this folder holds the memstore package
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from memstore.core.plugin_config import data_dir, installs

        candidates = [os.path.join(data_dir(ident), "venv", "bin", "memstore")
                      for ident, on, _root in installs() if on is not False]
    return next((c for c in candidates if os.access(c, os.X_OK)), None)


def configured_root() -> str | None:
    """The plugin's `root` option as Claude Code keeps it (memstore.core.plugin_config): a slash
    command's shell is given none of the plugin's variables."""
    # this folder holds the memstore package
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from memstore.core.plugin_config import plugin_root

    return plugin_root()


def main(argv: list[str]) -> int:
    hook = "--hook" in argv  # a hook: never fail the session, say nothing on stdout
    root = (os.environ.get("CLAUDE_PLUGIN_OPTION_ROOT") or os.environ.get("MEMSTORE_ROOT")
            or configured_root())
    exe = environment()
    if exe is None or not root or "${" in root:
        if hook:
            return 0
        why = ("memstore's environment is not built yet: run `claude --init-only` once"
               if exe is None else
               "no agent root is set: claude plugin configure memstore@memstore "
               "(the `root` option)")
        print(f"memstore plugin: {why}", file=sys.stderr)
        return 1
    os.execv(exe, [exe, "--root", os.path.expanduser(root), *argv])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
