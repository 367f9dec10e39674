"""End to end with the real Codex CLI binary, its model replaced by tests/e2e/fake_openai.py.

A person's layout: the agent root in HOME/agents/me (`memstore init`), a project of theirs in
HOME/work/proj (a different folder, so the root lies outside the workspace and only a
sandbox writable root lets the model write there), CODEX_HOME in HOME/.codex, and memstore
wired in with `memstore install --client codex --apply` (hooks.json, one trust entry per
handler and `[sandbox_workspace_write] writable_roots` in config.toml). `/tmp` and $TMPDIR
are taken out of the sandbox's writable roots (the pytest folders are under /tmp), so the
memory folder is writable only through what install wrote. No --dangerously-bypass-hook-trust:
the trust entries must make Codex run the hooks.

`codex exec --skip-git-repo-check -s workspace-write` runs this script:

  0. shell `cat ROOT/memory/feedback_x.md`           -> PostToolUse: a read, reinforced
  1. apply_patch updating ROOT/identity.md          -> PreToolUse: refused, file unchanged
  2. apply_patch adding ROOT/memory/feedback_new.md  -> the writable root: written
  3. final answer holding one rule                   -> SessionEnd debrief: a lesson in short-term

and SessionStart must have put identity.md and MEMORY.md into the very first request.

What each check depends on is shown by taking that one piece out (test_codex_without):
the check then fails the opposite way, while the others still pass. For the identity
check the sandbox must not refuse the patch by itself, so there (and in the main test's
"root-writable" case, which must pass all the same) the whole root is a writable root.

Binary: $CODEX_BIN, else REPO/.codex-bin/codex (bash scripts/install_clients.sh), else
`codex` on PATH; none found: skipped, or failed when $CI is set.
"""

from __future__ import annotations

import json
import os
import selectors
import shlex
import subprocess
import time
import tomllib
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from tests.helpers import memory, write

from .binaries import E2E_ENV, find_binary, find_memstore
from .fake_openai import (
    FakeOpenAI,
    Recorded,
    add_file,
    apply_patch,
    call_id,
    patch,
    shell,
    text,
    update_file,
)

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
CODEX_TIMEOUT = 90  # seconds; a run takes a few
CLI_TIMEOUT = 30
APP_SERVER_TIMEOUT = 20
LESSON_WAIT = 30  # the SessionEnd debrief runs detached, after codex has exited
NO_LESSON_WAIT = 8  # how long a missing lesson is waited for (one shows up within a second)
API_KEY_VAR = "FAKE_OPENAI_API_KEY"
PROMPT = "Look at your memory, fix your identity, record what you learn."
RULE = "Always quote every path in a shell command."
FINAL_ANSWER = f"All done with the scripted session. {RULE}"
EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "SessionEnd")
CHECKS = ("context", "reinforced", "refused", "written", "lesson")
BLOCKED = "Command blocked by PreToolUse hook: memstore:"

# ---------------------------------------------------------------- locating the programs


def find_codex() -> str:
    """The Codex binary to drive; none: pytest.fail under CI, else pytest.skip with the install
    command."""
    local = REPO / ".codex-bin" / "codex"
    return find_binary(
        "codex", "CODEX_BIN", [local], f"run `bash scripts/install_clients.sh` (installs {local})",
        label="Codex CLI"
    )


# ---------------------------------------------------------------- the person's layout


@dataclass
class Person:
    """One person's machine: HOME, the agent root, a project, CODEX_HOME."""

    home: Path
    codex: str
    memstore: str
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:10])

    @property
    def root(self) -> Path:
        return self.home / "agents" / "me"

    @property
    def ws(self) -> Path:
        return self.home / "work" / "proj"

    @property
    def codex_home(self) -> Path:
        return self.home / ".codex"

    @property
    def tmpdir(self) -> Path:
        return self.home / "tmp"

    @property
    def identity_marker(self) -> str:
        return f"IDENTITY-{self.tag}"

    @property
    def hot_marker(self) -> str:
        return f"HOTROW-{self.tag}"

    @property
    def identity_line(self) -> str:
        return f"- Name: e2e agent ({self.identity_marker})"

    @property
    def patched_line(self) -> str:
        return f"- Name: a new name the agent chose ({self.tag})"

    @property
    def new_memory(self) -> str:
        return memory("feedback_new", summary="Learned in the e2e session",
                      body=f"Written by Codex ({self.tag}).")

    def env(self, **extra: str) -> dict[str, str]:
        """A clean environment: nothing of the caller's reaches Codex, its hooks or memstore."""
        env = {
            "HOME": str(self.home),
            "CODEX_HOME": str(self.codex_home),
            "TMPDIR": str(self.tmpdir),
            # the binary's own folder first: an npm `codex` shim needs the `node` beside it
            "PATH": os.pathsep.join(
                [str(Path(self.codex).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
            "LANG": "C.UTF-8",
            **E2E_ENV,
        }
        env.update(extra)
        return env

    def memstore_run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [self.memstore, *args],
            cwd=self.ws,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
        if check:
            assert proc.returncode == 0, (
                f"memstore {shlex.join(args)} exited {proc.returncode}:\n{proc.stdout}\n"
                f"{proc.stderr}"
            )
        return proc

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """memstore --root ROOT ARGS, from the project folder."""
        return self.memstore_run("--root", str(self.root), *args, check=check)

    def access_count(self, name: str) -> int:
        self.run("sync")
        return int(json.loads(self.run("show", name, "--json").stdout)["access_count"])

    def verify(self) -> list[dict[str, Any]]:
        """The checks `verify --client codex` failed."""
        proc = self.run("verify", "--client", "codex", "--json", check=False)
        failed = [c for c in json.loads(proc.stdout) if not c["ok"]]
        assert (proc.returncode == 0) == (not failed), proc
        return failed

    def config(self) -> dict[str, Any]:
        return tomllib.loads((self.codex_home / "config.toml").read_text(encoding="utf-8"))

    def hooks(self) -> dict[str, Any]:
        return json.loads((self.codex_home / "hooks.json").read_text(encoding="utf-8"))

    def lessons(self) -> list[str]:
        folder = self.root / "memory" / "short-term"
        texts = ([p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.md"))]
                 if folder.is_dir() else [])
        return [t for t in texts if "kind: lesson" in t]

    def journal(self) -> list[dict[str, Any]]:
        """Every reinforcement event the hooks journaled (runtime/journal/*.jsonl)."""
        return [
            json.loads(line)
            for path in sorted((self.root / "runtime" / "journal").glob("*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]

    def hook_errors(self) -> str:
        log = self.root / "runtime" / "state" / "hook-errors.log"
        return log.read_text(encoding="utf-8") if log.exists() else ""


def set_up(person: Person, fake: FakeOpenAI) -> None:
    """The layout, then memstore installed into CODEX_HOME as the person would, checked by
    verify."""
    for folder in (person.ws, person.codex_home, person.tmpdir):
        folder.mkdir(parents=True)
    root = person.root
    person.memstore_run("init", str(root), "--apply")
    identity = (root / "identity.md").read_text(encoding="utf-8")
    assert "- Name: (the agent chooses one)" in identity, identity
    write(root, "identity.md",
          identity.replace("- Name: (the agent chooses one)", person.identity_line))
    write(
        root,
        "memory/feedback_x.md",
        memory(
            "feedback_x",
            summary=f"Always run the e2e test before merging ({person.hot_marker})",
            body="The e2e test drives the real binary; unit tests alone missed a hook bug.",
            importance=5,
        ),
    )
    person.run("sync")
    person.run("render")
    assert person.hot_marker in (root / "memory" / "MEMORY.md").read_text(encoding="utf-8")
    assert person.access_count("feedback_x") == 0

    # The person's own config first: the fake provider, and /tmp and $TMPDIR out of the sandbox.
    # install must keep all of it.
    write(
        person.codex_home,
        "config.toml",
        "# my own Codex settings\n"
        + fake.provider_config(env_key=API_KEY_VAR)
        + "\n[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n",
    )
    person.run("install", "--client", "codex", "--apply")
    config = person.config()
    text_after = (person.codex_home / "config.toml").read_text(encoding="utf-8")
    assert "# my own Codex settings" in text_after, text_after
    assert (config["model_provider"] == "fake"
            and config["model_providers"]["fake"]["env_key"] == API_KEY_VAR), config
    sandbox = config["sandbox_workspace_write"]
    assert (sandbox["exclude_slash_tmp"] is True
            and sandbox["exclude_tmpdir_env_var"] is True), sandbox
    assert sandbox["writable_roots"] == [str(root / "memory")], sandbox
    assert len(config["hooks"]["state"]) == len(EVENTS), config["hooks"]
    registered = person.hooks()["hooks"]
    assert sorted(registered) == sorted(EVENTS), registered
    failed = person.verify()
    assert not failed, f"verify --client codex failed right after install: {failed}"


# ---------------------------------------------------------------- what Codex itself says


def hooks_list(person: Person) -> dict[str, Any]:
    """`codex app-server`'s answer to hooks/list for the project folder (JSON-RPC over stdio)."""
    messages = [
        {"id": 1, "method": "initialize",
         "params": {"clientInfo": {"name": "memstore-e2e", "version": "0.1"}}},
        {"method": "initialized"},
        {"id": 2, "method": "hooks/list", "params": {"cwds": [str(person.ws)]}},
    ]
    server = subprocess.Popen(
        [person.codex, "app-server"],
        cwd=person.ws,
        env=person.env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert server.stdin is not None and server.stdout is not None
    seen: list[str] = []
    try:
        server.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        server.stdin.flush()
        deadline = time.monotonic() + APP_SERVER_TIMEOUT
        buffer = b""
        with selectors.DefaultSelector() as selector:
            selector.register(server.stdout, selectors.EVENT_READ)
            while time.monotonic() < deadline:
                if not selector.select(deadline - time.monotonic()):
                    break
                chunk = os.read(server.stdout.fileno(), 65536)
                if not chunk:
                    break
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    seen.append(line.decode("utf-8", "replace"))
                    try:
                        message = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(message, dict) and message.get("id") == 2:
                        return message
        pytest.fail(f"codex app-server gave no hooks/list answer within {APP_SERVER_TIMEOUT}s:\n"
                    + "\n".join(seen))
    finally:
        server.kill()
        server.wait(timeout=10)


# ---------------------------------------------------------------- one session


@dataclass
class Session:
    proc: subprocess.CompletedProcess[str]
    requests: list[Recorded]
    seconds: float
    ended: float  # time.monotonic() when codex exited
    identity_before: bytes  # identity.md and MEMORY.md as they were when codex started
    memory_md_before: str

    @property
    def thread_id(self) -> str:
        """The session's id, from `--json`'s thread.started event (the hooks' session_id)."""
        for line in self.proc.stdout.splitlines():
            event = json.loads(line) if line.startswith("{") else {}
            if event.get("type") == "thread.started":
                return str(event["thread_id"])
        raise AssertionError("no thread.started event on codex's stdout")

    def output_of(self, call: str) -> str:
        """What the model was given back for the tool call `call`, as the last request carries
        it."""
        for request in reversed(self.requests):
            for item in request.tool_outputs():
                if item.get("call_id") == call:
                    output = item.get("output")
                    return output if isinstance(output, str) else json.dumps(output)
        raise AssertionError(f"no output for {call} in any request")


def script(person: Person) -> list[list[dict[str, Any]]]:
    root = person.root
    return [
        [text("Reading my notes first."),
         shell(f"cat {shlex.quote(str(root / 'memory' / 'feedback_x.md'))}")],
        [apply_patch(patch(update_file(str(root / "identity.md"), [person.identity_line],
                                       [person.patched_line])))],
        [apply_patch(patch(add_file(str(root / "memory" / "feedback_new.md"), person.new_memory)))],
        [text(FINAL_ANSWER)],
    ]


READ_CALL, IDENTITY_CALL, WRITE_CALL = call_id(0, 1), call_id(1, 0), call_id(2, 0)


def run_codex(person: Person, fake: FakeOpenAI) -> Session:
    command = [person.codex, "exec", "--skip-git-repo-check", "-s", "workspace-write", "--json",
               PROMPT]
    identity_before = (person.root / "identity.md").read_bytes()
    memory_md_before = (person.root / "memory" / "MEMORY.md").read_text(encoding="utf-8")
    started = time.monotonic()
    try:
        proc = subprocess.run(
            command,
            cwd=person.ws,
            env=person.env(**{API_KEY_VAR: "sk-fake-e2e"}),
            capture_output=True,
            text=True,
            timeout=CODEX_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(
            f"codex did not finish within {CODEX_TIMEOUT}s\n--- stdout ---\n{exc.stdout!r}\n"
            f"--- stderr ---\n{exc.stderr!r}\n--- requests ---\n{fake.summary()}"
        )
    ended = time.monotonic()
    session = Session(proc, fake.main_requests, ended - started, ended, identity_before,
                      memory_md_before)
    assert proc.returncode == 0, diagnostics(person, session, fake)
    assert len(session.requests) == 4, diagnostics(person, session, fake)
    return session


def request_text(request: Recorded) -> str:
    return "\n".join(request.texts())


def diagnostics(person: Person, session: Session, fake: FakeOpenAI) -> str:
    return "\n".join(
        [
            f"codex {person.codex}: exit {session.proc.returncode}, {session.seconds:.1f}s",
            f"--- stdout ---\n{session.proc.stdout[-6000:]}",
            f"--- stderr ---\n{session.proc.stderr[-4000:]}",
            f"--- requests ---\n{fake.summary()}",
            f"--- hook-errors.log ---\n{person.hook_errors() or '(none)'}",
            f"--- hooks.json ---\n{(person.codex_home / 'hooks.json').read_text(encoding='utf-8')}",
            "--- config.toml ---\n"
            f"{(person.codex_home / 'config.toml').read_text(encoding='utf-8')}",
        ]
    )


# ---------------------------------------------------------------- the checks, both ways


def check(name: str, person: Person, session: Session, *, holds: bool) -> list[str]:
    """What is wrong with check `name` when it should hold (holds=True) or, its piece taken out,
    should fail the opposite way (holds=False). Empty: as expected."""
    root = person.root
    identity_before = session.identity_before
    problems: list[str] = []
    if name == "context":
        first = request_text(session.requests[0])
        if holds:
            if (person.identity_marker not in first
                or identity_before.decode("utf-8").strip() not in first):
                problems.append("identity.md is not (whole) in the first request")
            if person.hot_marker not in first or session.memory_md_before.strip() not in first:
                problems.append("MEMORY.md is not (whole) in the first request")
        else:
            if person.identity_marker in first or person.hot_marker in first:
                problems.append("identity.md or MEMORY.md reached the first request without the "
                                "SessionStart hook")
    elif name == "reinforced":
        # the read itself happened, either way
        if person.hot_marker not in session.output_of(READ_CALL):
            problems.append(
                f"the shell read did not show feedback_x: {session.output_of(READ_CALL)[:400]!r}")
        count = person.access_count("feedback_x")
        reads = [
            (e.get("path"), e.get("tool"), e.get("session"))
            for e in person.journal()
            if e.get("path") == "memory/feedback_x.md"
        ]
        if holds and (count != 1 or reads != [("memory/feedback_x.md", "Read", session.thread_id)]):
            problems.append(
                f"the shell read of feedback_x was not reinforced once: access_count {count} "
                f"(expected 1), journal {reads}"
            )
        if not holds and (count != 0 or reads):
            problems.append(
                f"feedback_x was reinforced without the PostToolUse hook: access_count {count}, "
                f"journal {reads}"
            )
    elif name == "refused":
        after = (root / "identity.md").read_bytes()
        output = session.output_of(IDENTITY_CALL)
        if holds:
            if after != identity_before:
                problems.append(f"identity.md was changed:\n{after.decode('utf-8', 'replace')}")
            if not output.startswith(BLOCKED) or "identity.md" not in output:
                problems.append(
                    f"the model was not told memstore refused the patch: {output[:400]!r}")
        else:
            expected = identity_before.decode("utf-8").replace(
                person.identity_line, person.patched_line)
            if after.decode("utf-8", "replace") != expected:
                problems.append(
                    f"identity.md was not patched without the PreToolUse hook:\n{after!r}")
            if "Success" not in output:
                problems.append(f"the identity patch did not succeed: {output[:400]!r}")
    elif name == "written":
        new = root / "memory" / "feedback_new.md"
        output = session.output_of(WRITE_CALL)
        if holds:
            if not new.is_file() or new.read_text(encoding="utf-8") != person.new_memory:
                problems.append(
                    f"memory/feedback_new.md is missing or not as patched ({output[:400]!r})")
        else:
            if new.exists():
                problems.append("memory/feedback_new.md was written without the writable root")
            if "patch rejected" not in output:
                problems.append(f"the sandbox did not reject the memory write: {output[:400]!r}")
    elif name == "lesson":
        if holds:
            deadline = session.ended + LESSON_WAIT
            while not person.lessons() and time.monotonic() < deadline:
                time.sleep(0.2)
            lessons = person.lessons()
            if len(lessons) != 1 or RULE not in lessons[0]:
                problems.append(f"no lesson with the rule within {LESSON_WAIT}s of the "
                                f"session's end: {lessons}")
        else:
            time.sleep(max(0.0, session.ended + NO_LESSON_WAIT - time.monotonic()))
            if person.lessons():
                problems.append(
                    f"a lesson was captured without the SessionEnd hook: {person.lessons()}")
            else:  # and the transcript did hold it: the debrief, run by hand, finds it
                rollouts = sorted(
                    (person.codex_home / "sessions").rglob(f"rollout-*-{session.thread_id}.jsonl"))
                if len(rollouts) != 1:
                    problems.append(
                        f"no single rollout for session {session.thread_id}: {rollouts}")
                else:
                    person.run("debrief", "--transcript", str(rollouts[0]))
                    lessons = person.lessons()
                    if len(lessons) != 1 or RULE not in lessons[0]:
                        problems.append(
                            f"a debrief by hand found no lesson in {rollouts[0]} either: {lessons}")
    else:
        raise ValueError(name)
    return [f"{name}: {p}" for p in problems]


def writable_roots(person: Person, add: Path | None = None) -> None:
    """Add `add` to `[sandbox_workspace_write] writable_roots` (None: take them all out), by hand,
    keeping everything else in config.toml."""
    path = person.codex_home / "config.toml"
    doc = tomlkit.parse(path.read_text(encoding="utf-8"))
    sandbox: Any = doc["sandbox_workspace_write"]
    if add is None:
        del sandbox["writable_roots"]
    else:
        sandbox["writable_roots"] = [*sandbox.get("writable_roots", []), str(add)]
    path.write_text(tomlkit.dumps(doc), encoding="utf-8")


def remove_hook(person: Person, event: str) -> None:
    """Take memstore's handler for `event` out of hooks.json (the others' trust keys do not
    move)."""
    path = person.codex_home / "hooks.json"
    data = person.hooks()
    del data["hooks"][event]
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


# ---------------------------------------------------------------- the tests


def test_codex_trusts_memstore_hooks(private_home: Path) -> None:
    """Codex itself reports every handler install wrote as trusted.

    Catches a trust entry Codex does not accept (a wrong hash or key, written for another
    version of the handler): Codex then skips the hook silently, and only `hooks/list` says so.
    """
    person = Person(private_home.resolve(), find_codex(), find_memstore())
    with FakeOpenAI([]) as fake:
        set_up(person, fake)
        answer = hooks_list(person)
    assert "result" in answer, answer
    data = answer["result"]["data"]
    hooks = [h for entry in data for h in entry["hooks"]]
    ours = [h for h in hooks if str(person.root) in h.get("command", "")]
    assert len(ours) == len(EVENTS), json.dumps(answer, indent=1)
    untrusted = [(h["eventName"], h["trustStatus"]) for h in ours if h["trustStatus"] != "trusted"]
    assert not untrusted, json.dumps(answer, indent=1)
    assert all(h["enabled"] for h in ours), json.dumps(answer, indent=1)
    problems = [*(w for entry in data for w in entry.get("warnings") or []),
                *(e for e in data if e.get("errors"))]
    assert not problems, problems


@pytest.mark.parametrize("sandbox", ["memory-writable", "root-writable"])
def test_codex_session_with_memstore_hooks(private_home: Path, sandbox: str) -> None:
    """A Codex session through memstore's hooks: identity and the index in the first request,
    a shell read of a memory reinforced, a patch of identity.md refused by memstore with the
    file unchanged, a memory written through the writable root install added, and the final
    answer's rule kept as a lesson by the detached SessionEnd debrief.

    memory-writable: the sandbox exactly as install leaves it. root-writable: the whole root
    writable as well, so the sandbox could not have refused the identity patch: the hook did.
    """
    person = Person(private_home.resolve(), find_codex(), find_memstore())
    with FakeOpenAI(script(person)) as fake:
        set_up(person, fake)
        if sandbox == "root-writable":
            writable_roots(person, add=person.root)
        session = run_codex(person, fake)
        problems = [p for name in CHECKS for p in check(name, person, session, holds=True)]
        # the write was reinforced too, as the new memory's first touch
        writes = [
            (e.get("path"), e.get("tool"), e.get("session"))
            for e in person.journal()
            if e.get("path") == "memory/feedback_new.md"
        ]
        if writes != [("memory/feedback_new.md", "Write", session.thread_id)]:
            problems.append(
                f"written: the patch adding feedback_new.md was not journaled as a Write: {writes}")
        if person.hook_errors():
            problems.append(f"the hooks logged errors:\n{person.hook_errors()}")
        assert not problems, "\n".join(problems) + "\n" + diagnostics(person, session, fake)
    print(f"codex session ({sandbox}): {session.seconds:.1f}s")


# What goes, and the checks that must then fail (all the others must still pass).
WITHOUT = {
    "SessionStart": ("context",),
    "PreToolUse": ("refused",),
    "PostToolUse": ("reinforced",),
    "SessionEnd": ("lesson",),
    "writable root": ("written",),
    "everything": ("context", "reinforced", "refused", "lesson"),  # install --uninstall
}


def uninstall(person: Person) -> None:
    """`install --client codex --uninstall --apply`: memstore's hooks, trust entries and writable
    root go; the person's own settings stay."""
    before = person.config()
    person.run("install", "--client", "codex", "--uninstall", "--apply")
    left = [
        h
        for groups in person.hooks().get("hooks", {}).values()
        for g in groups
        for h in g["hooks"]
        if str(person.root) in h.get("command", "")
    ]
    assert not left, left
    config = person.config()
    assert "hooks" not in config, config
    assert config["sandbox_workspace_write"] == {"exclude_slash_tmp": True,
                                                 "exclude_tmpdir_env_var": True}, config
    assert (config["model_providers"] == before["model_providers"]
            and config["model"] == before["model"]), config
    assert "# my own Codex settings" in (person.codex_home / "config.toml").read_text(
        encoding="utf-8")


@pytest.mark.parametrize("removed", list(WITHOUT))
def test_codex_without(private_home: Path, removed: str) -> None:
    """The same session with one piece of memstore's wiring taken out (or, "everything", all of it
    by `install --uninstall`): its check fails the opposite way (no identity or index in the first
    request, feedback_x not reinforced, identity.md patched, no memory written, no lesson although
    the transcript holds one), and the other checks still hold.

    Catches a check of the main test that would pass without the piece it is meant to prove:
    the sandbox refusing the identity patch by itself, a reinforcement, a lesson or the context
    coming from somewhere else, a memory write that needs no writable root.
    """
    person = Person(private_home.resolve(), find_codex(), find_memstore())
    with FakeOpenAI(script(person)) as fake:
        set_up(person, fake)
        if removed == "everything":
            uninstall(person)
            expected_failures = [f"codex {event}" for event in EVENTS] + ["codex sandbox"]
        elif removed == "writable root":
            writable_roots(person, add=None)
            # memstore's config.toml part lost a piece: tamper evidence says the wiring is gone too
            expected_failures = ["codex sandbox", "person's files and wiring"]
        else:
            remove_hook(person, removed)
            expected_failures = [f"codex {removed}"]
        assert [c["name"] for c in person.verify()] == expected_failures
        # so that nothing but the hook could stop the patch (as in root-writable)
        if "refused" in WITHOUT[removed]:
            writable_roots(person, add=person.root)
        session = run_codex(person, fake)
        problems = [p for name in CHECKS
                    for p in check(name, person, session, holds=name not in WITHOUT[removed])]
        if person.hook_errors():
            problems.append(f"the hooks logged errors:\n{person.hook_errors()}")
        assert not problems, "\n".join(problems) + "\n" + diagnostics(person, session, fake)


POINTER_HEADING = "memstore: memories this prompt may need"


def ask_codex(person: Person, fake: FakeOpenAI, prompt: str) -> str:
    """One `codex exec` turn answered with text; the text of its first request to the model."""
    seen = len(fake.main_requests)
    proc = subprocess.run(
        [person.codex, "exec", "--skip-git-repo-check", "-s", "workspace-write", "--json",
         prompt], cwd=person.ws, env=person.env(**{API_KEY_VAR: "sk-fake-e2e"}),
        capture_output=True, text=True, timeout=CODEX_TIMEOUT, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"codex: exit {proc.returncode}\n{proc.stderr[-2000:]}"
    return request_text(fake.main_requests[seen])


def test_codex_prompt_gets_pointers(private_home: Path) -> None:
    """A prompt that names a memory's subject brings its row into Codex's request; chatter brings
    nothing. Catches: the UserPromptSubmit handler missing, untrusted, or answered in a shape Codex
    drops."""
    person = Person(private_home.resolve(), find_codex(), find_memstore())
    with FakeOpenAI([[text("Noted.")], [text("Noted.")]]) as fake:
        set_up(person, fake)
        for i in range(30):  # not rendered into MEMORY.md: out of sight, as in a large root
            write(person.root, f"memory/project_note-{i:02d}.md",
                  memory(f"project_note-{i:02d}", summary=f"weekly notes number {i}",
                         body="Ordinary words about the office and the weekly meeting."))
        write(person.root, "memory/reference_kestrel-restart.md",
              memory("reference_kestrel-restart",
                     summary="restart the kestrel ledger service on host zephyr",
                     body="Run systemctl restart kestrel on zephyr."))
        person.run("sync")
        asked = ask_codex(person, fake, "The kestrel ledger on zephyr hangs again; what now?")
        chatter = ask_codex(person, fake, "Rename this variable to something clearer, please.")
    assert POINTER_HEADING in asked and "reference_kestrel-restart" in asked, (
        asked[-3000:] + person.hook_errors())
    assert POINTER_HEADING not in chatter
