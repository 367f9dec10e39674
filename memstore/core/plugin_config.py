"""Where the Claude Code plugin keeps what it knows: its `root` option, if it's on, its data folder.

The one place that answers "does the plugin wire this root?", for everything that must behave
differently under the plugin: the command line finds the plugin's root from any folder,
`install` refuses a second wiring beside the plugin (the nightly jobs alone: `install
--cron-only`), `verify` checks the plugin instead of a settings file, and every hint names a
command that works there. Standard library only: the plugin's run.py and prepare.py run it on
the system's python3 before memstore's environment exists.

Claude Code keeps a plugin's options in the user's settings file (`pluginConfigs`, keyed by
`name@marketplace`) and whether it is on in `enabledPlugins`; a slash command's shell and the
person's own shell get none of the plugin's variables, so this file is read.
"""

from __future__ import annotations

import json
import os

PLUGIN_NAME = "memstore"
# Where Setup links the plugin's `memstore` (pip's --user scripts folder; on PATH in most
# distributions' default profiles once it exists, and where a person looks first).
LINK_DIR = os.path.join("~", ".local", "bin")


def _user_dir() -> str:
    moved = os.environ.get("CLAUDE_CONFIG_DIR")
    return os.path.expanduser(moved) if moved else os.path.join(os.path.expanduser("~"), ".claude")


def _settings() -> dict[str, object]:
    try:
        with open(os.path.join(_user_dir(), "settings.json"), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def installs() -> list[tuple[str, bool | None, str | None]]:
    """(id, enabled, root option) of every memstore plugin the user's settings name; enabled is
    None when the user's settings do not say (a plugin enabled in a project's settings only)."""
    data = _settings()
    said, config_said = data.get("enabledPlugins"), data.get("pluginConfigs")
    enabled: dict[object, object] = said if isinstance(said, dict) else {}
    configs: dict[object, object] = config_said if isinstance(config_said, dict) else {}
    found = []
    for ident in dict.fromkeys([*enabled, *configs]):
        if not isinstance(ident, str) or ident.split("@", 1)[0] != PLUGIN_NAME:
            continue
        config = configs.get(ident)
        options = config.get("options") if isinstance(config, dict) else None
        value = options.get("root") if isinstance(options, dict) else None
        root = (os.path.expanduser(value) if isinstance(value, str) and value and "${" not in value
                else None)
        on = enabled.get(ident)
        found.append((ident, on if isinstance(on, bool) else None, root))
    return found


def plugin_root() -> str | None:
    """The `root` option of the memstore plugin (the first, if several), or None; a plugin the
    user's settings switch off does not count."""
    return next((root for _ident, on, root in installs() if on is not False and root), None)


def wiring(root: str | os.PathLike[str]) -> str | None:
    """The id of the enabled plugin (memstore@...) whose root is this root, or None."""
    real = os.path.realpath(os.fspath(root))
    return next((ident for ident, on, value in installs()
                 if on is True and value and os.path.realpath(value) == real), None)


def data_dir(ident: str = "memstore@memstore") -> str:
    """The plugin's data folder (Claude Code's ${CLAUDE_PLUGIN_DATA}):
    plugins/data/<name>-<marketplace>."""
    name, _, market = ident.partition("@")
    return os.path.join(_user_dir(), "plugins", "data", f"{name}-{market or name}")


def command_word() -> str:
    """How a hint names memstore: `memstore` when that is on PATH, else the plugin's own console
    script by its absolute path (a plugin user whose ~/.local/bin is not on PATH yet)."""
    import shutil

    if shutil.which("memstore"):
        return "memstore"
    for ident, on, _root in installs():
        exe = os.path.join(data_dir(ident), "venv", "bin", "memstore")
        if on is not False and os.access(exe, os.X_OK):
            return exe
    return "memstore"
