"""Which project a session works in, so that what is captured there stays there. Standard library only.

A project is named by its git remote when it has one (`origin`, else the first remote),
normalised to host/path without scheme, user, port or `.git`: `github.com/me/proja`. That
name is the same on every machine that cloned the repository, wherever the clone lives,
which an absolute path is not. A work tree without a remote is named by its folder name
(`proja`); a folder outside any git work tree is no project (what is captured there is
person-wide). The agent root's own folder is no project either.

Read from the files git keeps (.git/config, a worktree's .git file and commondir), never by
running git: the SessionStart hook pays for this on every session start.
"""

from __future__ import annotations

import os
import re

GLOBAL = "global"  # `project: global` in frontmatter: person-wide, whatever folder it was captured in
_REMOTE = re.compile(r'^\s*\[remote\s+"([^"]+)"\]\s*$')
_URL = re.compile(r"^\s*url\s*=\s*(.+?)\s*$")


def work_tree(start: str) -> str | None:
    """The top of the git work tree holding `start`, or None."""
    folder = os.path.realpath(start)
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _git_dir(top: str) -> str | None:
    """The git directory of a work tree: .git, or where a worktree's .git file points (its commondir)."""
    dot = os.path.join(top, ".git")
    if os.path.isdir(dot):
        return dot
    try:
        with open(dot, encoding="utf-8") as handle:
            line = handle.read(4096).strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    gitdir = os.path.normpath(os.path.join(top, line[len("gitdir:"):].strip()))
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as handle:
            return os.path.normpath(os.path.join(gitdir, handle.read(4096).strip()))
    except OSError:
        return gitdir


def remote_url(top: str) -> str | None:
    """The URL of the `origin` remote (else the first remote) in the repository's config, or None."""
    gitdir = _git_dir(top)
    if gitdir is None:
        return None
    try:
        with open(os.path.join(gitdir, "config"), encoding="utf-8", errors="replace") as handle:
            lines = handle.read(1_000_000).splitlines()
    except OSError:
        return None
    urls: dict[str, str] = {}
    current = None
    for line in lines:
        section = _REMOTE.match(line)
        if section:
            current = section.group(1)
            continue
        if line.lstrip().startswith("["):
            current = None
            continue
        url = _URL.match(line)
        if current is not None and url and current not in urls:
            urls[current] = url.group(1).strip('"')
    return urls.get("origin") or next(iter(urls.values()), None)


def normalise_url(url: str) -> str:
    """`git@github.com:Me/ProjA.git`, `https://user@github.com/me/proja` -> `github.com/me/proja`."""
    text = url.strip()
    text = re.sub(r"^[a-z][a-z0-9+.-]*://", "", text, flags=re.I)  # scheme
    text = re.sub(r"^[^@/]+@", "", text)  # user
    if ":" in text.split("/", 1)[0]:
        host, _, rest = text.partition(":")
        text = f"{host}/{rest}" if not rest.split("/", 1)[0].isdigit() else f"{host}/{rest.split('/', 1)[-1]}"
    text = re.sub(r"\.git/?$", "", text.rstrip("/"))
    return text.lower()


def locate(cwd: str | None, root: str | None = None) -> tuple[str | None, str | None]:
    """(the project a folder belongs to, the top of its work tree), or (None, None)."""
    if not cwd:
        return None, None
    top = work_tree(cwd)
    if top is None:
        return None, None
    if root is not None and os.path.realpath(root) == top:
        return None, None  # the agent root kept in git is no project
    url = remote_url(top)
    return (normalise_url(url) if url else os.path.basename(top).lower()), top


def project_of(cwd: str | None, root: str | None = None) -> str | None:
    """The project a folder belongs to (see the module docstring), or None."""
    return locate(cwd, root)[0]


def belongs(item_project: str | None, current: str | None) -> bool:
    """Does an item recorded for `item_project` reach a session in `current`? Person-wide ones always do."""
    if not item_project or item_project.strip().lower() == GLOBAL:
        return True
    return current is not None and item_project.strip().lower() == current


def by_project(conn: object, hits: list[dict[str, object]], current: str | None, *, only: bool = False
               ) -> list[dict[str, object]]:
    """Search hits with the current project's own first (each group keeps its rank order); with
    `only`, the current project's alone. Without a current project, hits are left as they are."""
    if current is None:
        return [] if only else hits
    paths = [str(hit["path"]) for hit in hits]
    if not paths:
        return hits
    marks = ",".join("?" * len(paths))
    rows = conn.execute(  # type: ignore[attr-defined]
        f"SELECT path, json_extract(meta, '$.project') FROM files WHERE path IN ({marks})", paths).fetchall()
    owner = {row[0]: row[1] for row in rows}
    mine = [hit for hit in hits if str(owner.get(hit["path"]) or "").strip().lower() == current]
    if only:
        return mine
    return mine + [hit for hit in hits if hit not in mine]


WORKTREES = "worktrees.json"  # under runtime/state/: project -> the folder its sessions ran in, on this machine


def remember_worktree(state_dir: str, project: str | None, top: str | None) -> None:
    """Note where this machine keeps a project (`locate`'s answer), so the nightly tick can check the code
    its memories cite (memstore.freshness). One small file, written only when something changed."""
    if top is None or project is None:
        return
    path = os.path.join(state_dir, WORKTREES)
    known = worktrees(state_dir)
    if known.get(project) == top:
        return
    known[project] = top
    os.makedirs(state_dir, exist_ok=True)
    import json
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=state_dir, prefix=".worktrees-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(known, handle, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def worktrees(state_dir: str) -> dict[str, str]:
    import json

    try:
        with open(os.path.join(state_dir, WORKTREES), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
