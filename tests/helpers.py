"""What many test modules share that is not a fixture: files, the pinned clock, git, hook calls.

The fixtures are in tests/conftest.py (and tests/e2e/conftest.py); a test module imports
plain helpers from here or from the other helper modules (tests/wakestub.py,
tests/mcpclient.py, tests/clones.py, tests/ptyrun.py, tests/serving.py), never from
another test module (tests/test_tiers.py holds that).
"""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from click.testing import Result

import memstore
from memstore import Store

NOW = "2026-07-30T12:00:00Z"  # the clock the `run` fixture pins (MEMSTORE_NOW)
NOW_DT = dt.datetime(2026, 7, 30, 12, 0, tzinfo=dt.UTC)


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


def memory(
    name: str,
    summary: str = "",
    body: str = "Body text.",
    **fields: object,
) -> str:
    """Text of a well-formed T2 memory file."""
    lines = ["---", f"name: {name}", f"type: {name.split('_', 1)[0]}"]
    if summary:
        lines.append(f"summary: {json.dumps(summary)}")
    for key, value in fields.items():
        lines.append(f"{key}: {value}")
    lines += ["---", "", f"# {name}", "", body, ""]
    return "\n".join(lines)


def embedded(root: Path, notes: Mapping[str, tuple[str, str]]) -> Store:
    """`notes` (key: (summary, body)) written as reference memories of root, then the mirror
    synced and every file embedded (the semantic extra, meaning on)."""
    for key, (summary, body) in notes.items():
        write(root, f"memory/reference_{key}.md",
              memory(f"reference_{key}", summary, body=body, created="2026-11-01"))
    store = Store(root)
    store.sync()
    store.embed()
    return store


def search_json(run: Callable[..., Result], root: Path, query: str,
                *extra: str) -> list[dict[str, object]]:
    result = run(root, "search", query, "--json", *extra)
    assert result.exit_code == 0, result.output + result.stderr
    return list(json.loads(result.stdout))


# ---------------------------------------------------------------------------------- git

# Who a test's commits are by: git() passes it unless the environment names someone, and the
# `git_identity` fixture puts it in the environment for the commits memstore itself makes.
GIT_ID = {"GIT_AUTHOR_NAME": "Ann Teammate", "GIT_AUTHOR_EMAIL": "ann@example.com",
          "GIT_COMMITTER_NAME": "Ann Teammate", "GIT_COMMITTER_EMAIL": "ann@example.com"}


def git(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    """git run by the test's own hand in cwd: its stdout without the last newline. A failure fails
    the test."""
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60,
                          env={**GIT_ID, **os.environ, **(env or {})}, check=False)
    assert done.returncode == 0, f"git {' '.join(args)} in {cwd}: {done.stdout}{done.stderr}"
    return done.stdout.rstrip("\n")


def git_project(folder: Path, remote: str | None = None) -> Path:
    """A git work tree at folder (made if need be), with `remote` as its origin when given."""
    folder.mkdir(parents=True, exist_ok=True)
    git(folder, "init", "-q")
    if remote:
        git(folder, "remote", "add", "origin", remote)
    return folder


# ------------------------------------------------------------------------------ a team

def bash_lens(name: str, text: str) -> str:
    """The text of a lens file shown before Bash."""
    return f"---\nname: {name}\ntype: lens\ntrigger:\n  tool_match: ^Bash$\n---\n{text}\n"


def team_remote(folder: Path) -> tuple[Path, Path]:
    """(a working clone the team commits in, the bare remote) in folder, with one memory and one
    lens."""
    from memstore.api.teams import Teams

    seed = folder / "seed"
    Teams.init(seed)
    write(seed, "memory/feedback_vendor-quirk.md", memory(
        "feedback_vendor-quirk", "Acme payments API answers 200 with an error body on timeouts",
        "Check body.status, never the HTTP code.", access_count=99, pin="true"))
    write(seed, "lenses/friday.md", bash_lens("no-friday-deploys",
                                              "TEAMLENS-7f3a: never deploy on a Friday."))
    git(seed, "add", "-A")
    git(seed, "commit", "-qm", "seed the team memory")
    bare = folder / "remote.git"
    git(folder, "clone", "-q", "--bare", str(seed), str(bare))
    git(seed, "remote", "add", "origin", str(bare))
    git(seed, "fetch", "-q", "origin")
    return seed, bare


def person(folder: Path, own: int = 0, who: str = "me") -> Store:
    """A person's root (folder/who) with `own` memories of their own, on the pinned clock."""
    root = folder / who
    (root / "memory").mkdir(parents=True)
    for i in range(own):
        write(root, f"memory/project_own-{i:03d}.md",
              memory(f"project_own-{i:03d}",
                     f"own memory number {i} about the billing service" + " words" * 8))
    return Store(root, NOW_DT)


def joined(folder: Path, bare: Path, who: str = "me", own: int = 0) -> Store:
    """person(folder, own, who), who has joined the team at `bare` as "acme"."""
    store = person(folder, own, who)
    store.teams.add(str(bare), name="acme")
    return Store(store.root, NOW_DT)


# ------------------------------------------------------------------------ the hook in-process

LENS = """---
name: bash-care
type: lens
trigger:
  tool_match: "^Bash$"
body_token_cap: 20
---
LENSMARK Before running shell commands, check the working directory. """ \
    + "More words follow here. " * 40


def agent_root(root: Path, *, notes_lens: bool = True) -> Path:
    """The `agent` fixture's root, synced: a memory, an identity, the Bash lens (LENSMARK), a lens
    on Edit of notes/ (PATHLENS; left out with notes_lens=False) and a meditation."""
    # here: a module that fails to import fails only its callers
    from memstore.mirror.sync import sync

    write(root, "memory/feedback_alpha.md", memory("feedback_alpha", "alpha rule"))
    write(root, "identity.md", "# me\n")
    write(root, "lenses/bash-care.md", LENS)
    if notes_lens:
        write(root, "lenses/edit-notes.md",
              "---\ntype: lens\ntrigger:\n  tool_match: Edit\n  path_pattern: notes/\n"
              "---\nPATHLENS only for notes\n")
    write(root, "meditations/still.md", "---\ntype: meditation\nshelf: awareness\n---\nsit\n")
    sync(root)
    return root


def call(root: Path | None, payload: object, *, raw: bytes | None = None, now: str = NOW
         ) -> tuple[int, Any]:
    """The hook run in-process on one payload: (exit code, its JSON answer or None)."""
    from memstore.hook.handler import main as hook_main  # here: see agent_root

    data = raw if raw is not None else json.dumps(payload).encode()
    out = io.StringIO()
    argv = (["--root", str(root)] if root else []) + ["--now", now]
    code = hook_main(argv, stdin=io.BytesIO(data), stdout=out)
    text = out.getvalue()
    return code, (json.loads(text) if text else None)


def pre(tool: str, file_path: str | None = None, session: str = "s1",
        cwd: str = "/") -> dict[str, Any]:
    tool_input = {"file_path": file_path} if file_path is not None else {"command": "ls"}
    return {"hook_event_name": "PreToolUse", "session_id": session, "cwd": cwd, "tool_name": tool,
            "tool_input": tool_input}


def decision(response: dict[str, Any] | None) -> str | None:
    return (response or {}).get("hookSpecificOutput", {}).get("permissionDecision")


def start(root: Path, session: str = "s1") -> dict[str, Any] | None:
    """The hook's answer to a SessionStart (the bundle)."""
    return call(root, {"hook_event_name": "SessionStart", "session_id": session, "cwd": str(root),
                       "source": "startup"})[1]


def context_of(response: dict[str, Any] | None) -> str:
    return str((response or {}).get("hookSpecificOutput", {}).get("additionalContext", ""))


def install_user(run: Callable[..., Result], root: Path) -> Result:
    result = run(root, "install", "--scope", "user", "--apply")
    assert result.exit_code == 0, result.output
    return result


# ----------------------------------------------------- the hook as a process, what the agent writes

WRITTEN_AT = "2026-07-30T12:00:00Z"  # the hook's clock when the agent wrote
TICK_AT = "2026-08-06T03:00:00Z"  # a week on: "yesterday" read then would mean 08-05


def run_hook(root: Path, payload: dict[str, object], *client: str) -> None:
    """`memstore hook` as a process on one payload, on the clock of WRITTEN_AT; it must say
    nothing."""
    proc = subprocess.run([sys.executable, "-m", "memstore", "--root", str(root), "hook", *client],
                          input=json.dumps(payload).encode(), capture_output=True, timeout=60,
                          env={**os.environ, "MEMSTORE_NOW": WRITTEN_AT})
    assert proc.returncode == 0 and not proc.stderr, proc.stderr


def agent_wrote(root: Path, rel: str, text: str, tool: str = "Write", **tool_input: object) -> None:
    """What Claude Code does: the file changes, then PostToolUse names the tool and what it
    wrote."""
    path = root / rel
    path.write_text(text, encoding="utf-8")
    os.utime(path, (1785000000, 1785000000))  # 2026-07-25: no live session at the tick
    given = tool_input or {"content": text}
    run_hook(root, {"hook_event_name": "PostToolUse", "session_id": "s1", "cwd": str(root),
                    "tool_name": tool, "tool_input": {"file_path": str(path), **given}})


# ------------------------------------------------------------------------------- hostile text

# seen by a model, not a person
SMUGGLED = "".join(chr(0xE0000 + ord(c)) for c in "OBEY") + "\ufe0f\u00ad\u3164"


def raw_forms(text: str, *, persons: bool = False) -> list[str]:
    """The hostile forms found in `text`: what must never reach a file the client loads. A person's
    own file (`persons`: a lens) keeps its markdown, `@` and headings included; never its tags or
    controls."""
    found = []
    if "</system-reminder>" in text or "<system-reminder>" in text:
        found.append("a raw wrapper tag")
    if not persons and re.search(r"(?<!\\)@[~/]", text):
        found.append("an unescaped @ import")
    if not persons and re.search(r"^\s{0,3}#+ Orders", text, re.M):
        found.append("a heading from memory text")
    if "\u202e" in text or "\x1b" in text:
        found.append("a control or bidi character")
    # issue 32's attacker: tag characters spell words only a model reads
    if any(c in text for c in SMUGGLED):
        found.append("an invisible character (tag, variation selector, filler)")
    return found


# ------------------------------------------------------------------------- the previous release

PREVIOUS_SETTINGS = Path(__file__).parent / "data" / "previous-release" / "settings.json"
PACKAGE = Path(memstore.__file__).resolve().parents[1]  # the folder holding the memstore package


def previous_settings(home: Path, root: Path, package: Path = PACKAGE) -> dict[str, Any]:
    """The previous release's install in `home` (its settings.json and rules file), for `root`."""
    text = PREVIOUS_SETTINGS.read_text()
    for key, value in {"{PACKAGE}": str(package), "{PYTHON}": sys.executable,
                       "{BIN}": str(Path(sys.executable).parent),
                       "{BASH}": shutil.which("bash") or "/bin/bash", "{ROOT}": str(root),
                       "{HOME}": str(home)}.items():
        text = text.replace(key, value)
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(text)
    rules = home / ".claude" / "rules" / "memstore.md"
    rules.parent.mkdir(parents=True, exist_ok=True)
    rules.write_text("<!-- memstore:begin (managed by `memstore install`; edits between these "
                     "lines are replaced) -->\n"
                     f"@{root}/identity.md\n@{root}/memory/MEMORY.md\n<!-- memstore:end -->\n")
    return dict(json.loads(text))
