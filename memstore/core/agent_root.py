"""Where every file lives under an agent root, and how the root is found. Standard library only.

This is the one module that spells a path under a root; everything else asks it. The
hook uses it too, so its functions take and return plain strings (no pathlib on the
hook's path); `RootPaths` gives the same places as attributes for the library.
"""

from __future__ import annotations

import os

from memstore.core.errors import RootNotFound

CONFIG_FILE = "memstore.toml"
IDENTITY = "identity.md"
MEMORY = "memory"
INDEX = "MEMORY.md"
ARCHIVE = "MEMORY-archive.md"
CURRENT_STATE = "current-state.md"
# Where init lays out folders, relative to the root.
FOLDERS = (
    "memory",
    "memory/short-term",
    "memory/dream-journal",
    "memory/bugs",
    "lenses",
    "meditations",
    "runtime",
    "runtime/journal",
    "runtime/state",
)


def _join(root: str | os.PathLike[str], *parts: str) -> str:
    return os.path.join(os.fspath(root), *parts)


def db_file(root: str | os.PathLike[str]) -> str:
    return _join(root, "runtime", "memstore.db")


def state_dir(root: str | os.PathLike[str]) -> str:
    return _join(root, "runtime", "state")


def meaning_file(root: str | os.PathLike[str]) -> str:
    """How much of the root has a vector, as the last embedding pass left it
    (mirror.embed_background writes it; the bundle reads it, on the hook's path, with no SQL and no
    model)."""
    return _join(root, "runtime", "state", "meaning.json")


SOCKET_MAX = 100  # bytes of a Unix socket's path (the system's limit is 104 to 108)


def meaning_socket(root: str | os.PathLike[str]) -> str:
    """Where the root's meaning process listens (mirror/meaning_server.py): runtime/state/
    meaning.sock, or where that path is too long for a socket, a name made from the root in the
    user's own folder under /tmp (core.meaning_client checks that folder is theirs alone)."""
    real = os.path.realpath(root)  # one root reached by two spellings: one socket
    path = os.path.join(real, "runtime", "state", "meaning.sock")
    if len(os.fsencode(path)) <= SOCKET_MAX:
        return path
    import hashlib

    name = hashlib.sha256(os.fsencode(real)).hexdigest()[:24]
    return os.path.join(private_tmp(), f"{name}.sock")


def private_tmp() -> str:
    """The user's own folder under /tmp for memstore's sockets."""
    return f"/tmp/memstore-{os.getuid()}"


def wake_failed_file(root: str | os.PathLike[str]) -> str:
    """The last wake's failure, while it stands (life.lastrun writes it; status and the bundle say
    it)."""
    return _join(root, "runtime", "state", "wake-failed.json")


def journal_dir(root: str | os.PathLike[str]) -> str:
    return _join(root, "runtime", "journal")


def hook_log(root: str | os.PathLike[str]) -> str:
    return _join(root, "runtime", "state", "hook-errors.log")


def journal_lost_file(root: str | os.PathLike[str]) -> str:
    """How many journal appends failed (a full disk) and were taken back: journal.append counts,
    status says."""
    return _join(root, "runtime", "state", "journal-lost.json")


def team_shared_file(root: str | os.PathLike[str]) -> str:
    """What `share` sent to which team, and what the teams took from the person or took out since
    (memstore.team.handover writes it; the bundle reads it)."""
    return _join(root, "runtime", "state", "team-shared.json")


def clone_id_file(root: str | os.PathLike[str]) -> str:
    """This clone's journal identity (journal.clone_id): machine-local, like all of
    runtime/state."""
    return _join(root, "runtime", "state", "clone-id")


def memory_dir(root: str | os.PathLike[str]) -> str:
    return _join(root, MEMORY)


class RootPaths:
    """Every place under one agent root, as strings (os.fspath-able, cheap to build)."""

    __slots__ = ("root",)

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = os.fspath(root)

    def _at(self, *parts: str) -> str:
        return os.path.join(self.root, *parts)

    # the truth: files a person or the agent writes
    @property
    def config(self) -> str:
        return self._at(CONFIG_FILE)

    @property
    def identity(self) -> str:
        return self._at(IDENTITY)

    @property
    def memory(self) -> str:
        return self._at(MEMORY)

    @property
    def short_term(self) -> str:
        return self._at(MEMORY, "short-term")

    @property
    def dream_journal(self) -> str:
        return self._at(MEMORY, "dream-journal")

    @property
    def bugs(self) -> str:
        return self._at(MEMORY, "bugs")

    @property
    def lenses(self) -> str:
        return self._at("lenses")

    @property
    def meditations(self) -> str:
        return self._at("meditations")

    # derived files (rendered from the mirror)
    @property
    def index(self) -> str:
        return self._at(MEMORY, INDEX)

    @property
    def archive(self) -> str:
        return self._at(MEMORY, ARCHIVE)

    @property
    def current_state(self) -> str:
        return self._at(MEMORY, CURRENT_STATE)

    # machine state
    @property
    def runtime(self) -> str:
        return self._at("runtime")

    @property
    def db(self) -> str:
        return db_file(self.root)

    @property
    def journal(self) -> str:
        return journal_dir(self.root)

    @property
    def state(self) -> str:
        return state_dir(self.root)

    @property
    def clone_id(self) -> str:
        return clone_id_file(self.root)

    @property
    def mirror_lock(self) -> str:
        """Held by whoever writes the mirror in bulk (sync, rebuild, flush), so they never
        interleave."""
        return self._at("runtime", "state", "mirror.lock")

    @property
    def ledger_lock(self) -> str:
        """Held while a ledger verb picks a new file's name (the next bug id, a new memory's
        name)."""
        return self._at("runtime", "state", "ledger.lock")

    @property
    def render_lock(self) -> str:
        return self._at("runtime", "state", "render.lock")

    @property
    def hook_log(self) -> str:
        return hook_log(self.root)

    @property
    def journal_lost(self) -> str:
        return journal_lost_file(self.root)

    @property
    def tick_status(self) -> str:
        return self._at("runtime", "state", "tick-status.json")

    @property
    def tick_log(self) -> str:
        return self._at("runtime", "state", "tick.log")

    @property
    def cue(self) -> str:
        """Written by the nightly tick: whether there is anything for `memstore wake` to dream
        about."""
        return self._at("runtime", "state", "cue.json")

    @property
    def wake_status(self) -> str:
        """Written by `memstore wake` after a successful dream and sit."""
        return self._at("runtime", "state", "wake-status.json")

    @property
    def tamper(self) -> str:
        """The digests of the person's files and the wiring as last accepted, and the sessions seen
        (tamper.py)."""
        return self._at("runtime", "state", "tamper.json")

    @property
    def embed_lock(self) -> str:
        """Held while files are embedded, so two passes never embed the same files twice over."""
        return self._at("runtime", "state", "embed.lock")

    @property
    def watch_lock(self) -> str:
        """Held (flock) by the one `memstore watch` of this root; holds that watcher's pid."""
        return self._at("runtime", "state", "watch.lock")


def is_root(folder: str) -> bool:
    return os.path.isdir(memory_dir(folder))


def nearest_root(start: str) -> str | None:
    """The nearest folder at or above `start` that holds memory/, or None."""
    folder = os.path.abspath(start)
    while True:
        if is_root(folder):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def locate(explicit: str | None, env: str | None, cwd: str | None) -> str | None:
    """--root, else $MEMSTORE_ROOT, else the nearest root at or above cwd; None when none fits.

    The hook's lenient form: it must never fail, so a wrong name just finds nothing.
    """
    for candidate in (explicit, env):
        if candidate and "\x00" not in candidate and is_root(candidate):
            return os.path.abspath(candidate)
    if cwd and "\x00" not in cwd:
        return nearest_root(cwd)
    return None


def find_root(explicit: str | os.PathLike[str] | None, env: str | None,
              cwd: str | os.PathLike[str]) -> str:
    """The library's strict form of `locate`: a named root must exist and hold memory/.

    Pointing memstore at an arbitrary folder would index every markdown file in it and
    leave a runtime/ folder behind, so a named folder without memory/ is an error.
    """
    for value, label in ((explicit, "root"), (env, "$MEMSTORE_ROOT")):
        if not value:
            continue
        root = os.path.expanduser(os.fspath(value))
        if not os.path.isdir(root):
            raise RootNotFound(f"{label} {root} does not exist",
                               hint=f"create it with: memstore init {root} --apply")
        if not is_root(root):
            raise RootNotFound(
                f"{label} {root} is not an agent root (it has no memory/ folder)",
                hint=f"lay one out with: memstore init {root} --apply",
            )
        return os.path.realpath(root)
    here = os.path.realpath(os.fspath(cwd))
    found = nearest_root(here)
    if found is None:
        installed = installed_root()
        if installed is not None and is_root(installed):
            return os.path.realpath(installed)
        from memstore.core.plugin_config import plugin_root

        # the Claude Code plugin's `root` option: a plugin user's shell finds it too
        plugged = plugin_root()
        if plugged is not None and is_root(plugged):
            return os.path.realpath(plugged)
        where = f" (it names {installed}, which is not an agent root)" if installed else ""
        raise RootNotFound(
            f"no agent root at or above {here}, and none recorded by install in "
            f"{user_config_file()}{where}",
            hint="point at your root: memstore --root DIR ..., or MEMSTORE_ROOT=DIR, or record it "
                 "once with memstore --root DIR install --scope user --apply; a new one: "
                 "memstore init DIR --apply",
        )
    return found


def user_config_file() -> str:
    """memstore's per-person settings: $XDG_CONFIG_HOME/memstore/config.toml (~/.config by default).

    `install --scope user` records the agent root there (`root = "..."`), so the CLI and the
    MCP server find it from any folder, with no flag and no variable.
    """
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "memstore", "config.toml")


def installed_root() -> str | None:
    """The root `install --scope user` recorded, or None (no file, unreadable, no `root`)."""
    import tomllib

    try:
        with open(user_config_file(), "rb") as handle:
            value = tomllib.load(handle).get("root")
    except (OSError, ValueError):
        return None
    return os.path.expanduser(value) if isinstance(value, str) and value else None
