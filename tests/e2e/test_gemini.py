"""End to end with the real Gemini CLI binary, its model replaced by a scripted fake.

A person-like layout: one agent root at ~/agents/me (`memstore init`), a project at
~/work/proj that is another folder, so the root lies outside Gemini CLI's workspace and
only `context.includeDirectories` lets the model reach it. memstore is wired in the way a
person would: `memstore install --client gemini --apply` (user scope: ~/.gemini/settings.json),
then `verify --client gemini`. The binary runs headless (`gemini -p ... --approval-mode yolo
--skip-trust`, user-level hooks run under --skip-trust) against tests/e2e/fake_gemini.py,
whose scripted model:

  0. read_file <root>/memory/feedback_x.md
     -> AfterTool reinforces feedback_x
  1. run_shell_command `cat <root>/memory/feedback_y.md`
     -> AfterTool reinforces feedback_y (a shell read)
  2. replace in <root>/identity.md
     -> BeforeTool refuses it: "Tool execution blocked"
  3. write_file <root>/memory/feedback_new.md
     -> written; AfterTool journals the write
  4. final text holding RULE
     -> SessionEnd's debrief keeps RULE as a lesson

and SessionStart puts identity.md and MEMORY.md into the first request. The same session is
then run with memstore's hooks taken out (all of them with `install --uninstall`, and each one
alone): every effect a hook is responsible for must disappear with it, so none of the
assertions above can pass by accident (the file tree Gemini CLI lists, a file the model wrote
itself, a lesson left over from setup).

Where things land (Gemini CLI 0.61.0, see /tmp/cx/gemini-findings.md): SessionStart's
additionalContext is prepended to the prompt's text part in contents[0], as
<hook_context>...</hook_context>; a BeforeTool deny reaches the model as the functionResponse
{"error": "Tool execution blocked: <reason>"}; the CLI waits for its SessionEnd hook.

Binary: $GEMINI_BIN, else ./.gemini-bin/gemini (scripts/install_clients.sh), else `gemini`
on PATH; none found means the test is skipped (failed when $CI is set), saying so.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import memory, write

from .binaries import E2E_ENV, find_binary, find_memstore
from .fake_gemini import (
    FakeGemini,
    Recorded,
    read_file,
    replace,
    run_shell_command,
    text,
    write_file,
)

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
GEMINI_TIMEOUT = 90  # seconds; a scripted session takes 2-4 s
CLI_TIMEOUT = 30
LESSON_WAIT = 10  # Gemini CLI waits for its SessionEnd hook; this only absorbs a slow file system
# how long a session without the SessionEnd hook is watched for a lesson all the same
NO_LESSON_WAIT = 1
MODEL = "gemini-2.5-flash"  # an explicit model: no router request before the first turn
PROMPT = "Look at your memory, keep what you learn, then finish."
RULE = "Always quote every path in a shell command."
FINAL_ANSWER = f"All done with the scripted session. {RULE}"
HOOK_CONTEXT = re.compile(r"<hook_context>(.*?)</hook_context>", re.S)
EVENTS = ("SessionStart", "BeforeTool", "AfterTool", "SessionEnd")
# Settings of the person's own that install and uninstall must leave alone: a setting, and a hook
# of theirs on a tool the script never calls (so it never runs).
FOREIGN_GENERAL = {"vimMode": True}
FOREIGN_HOOK = {"matcher": "google_web_search",
                "hooks": [
                    {"name": "theirs", "type": "command", "command": "true", "timeout": 5000}]}

# ---------------------------------------------------------------- locating the programs


def find_gemini() -> str:
    """The Gemini CLI binary to drive; pytest.skip (pytest.fail under $CI) saying where we
    looked."""
    local = REPO / ".gemini-bin" / "gemini"
    return find_binary(
        "gemini", "GEMINI_BIN", [local],
        f"run `bash scripts/install_clients.sh` (installs {local})", label="Gemini CLI"
    )


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """Only what the programs need: nothing of the caller's may steer Gemini CLI or memstore
    elsewhere."""
    return {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), **E2E_ENV, **extra}


# ---------------------------------------------------------------- the person's layout


class Markers:
    """Unique strings, so a hit can only come from the one file that holds them."""

    def __init__(self) -> None:
        tag = uuid.uuid4().hex[:10]
        self.identity = f"IDENTITY-{tag}"
        self.hot = f"HOTROW-{tag}"
        self.body_x = f"XBODY-{tag}"
        self.body_y = f"YBODY-{tag}"
        self.new = f"NEWMEMORY-{tag}"
        self.hijack = f"HIJACKED-{tag}"


@dataclass
class Person:
    home: Path
    root: Path
    work: Path
    settings: Path
    markers: Markers
    memstore: str

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [self.memstore, "--root", str(self.root), *args],
            cwd=self.work,
            env=clean_env(self.home),
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
        if check:
            command = " ".join(args)
            assert proc.returncode == 0, (
                f"memstore {command} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
        return proc

    def access_count(self, name: str) -> int:
        return int(json.loads(self.run("show", name, "--json").stdout)["access_count"])

    def read_settings(self) -> dict[str, Any]:
        return json.loads(self.settings.read_text(encoding="utf-8"))

    def write_settings(self, data: dict[str, Any]) -> None:
        self.settings.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")

    def ours(self, data: dict[str, Any], event: str) -> list[dict[str, Any]]:
        """memstore's hook groups for this root under `event`."""
        return [g for g in data.get("hooks", {}).get(event, [])
                if any(str(self.root) in h.get("command", "") for h in g.get("hooks", []))]


def make_person(home: Path) -> Person:
    """~/agents/me (init, two memories, rendered), ~/work/proj, and memstore wired into
    ~/.gemini."""
    home = home.resolve()
    root, work = home / "agents" / "me", home / "work" / "proj"
    work.mkdir(parents=True)
    person = Person(home, root, work, home / ".gemini" / "settings.json", Markers(),
                    find_memstore())
    m = person.markers
    subprocess.run([person.memstore, "init", str(root), "--apply"], cwd=work, env=clean_env(home),
                   check=True, capture_output=True, text=True, timeout=CLI_TIMEOUT,
                   stdin=subprocess.DEVNULL)
    identity = root / "identity.md"
    identity.write_text(identity.read_text(encoding="utf-8").replace(
        "- Name: (the agent chooses one)", f"- Name: Wren ({m.identity})"), encoding="utf-8")
    assert m.identity in identity.read_text(encoding="utf-8"), (
        "the identity template changed: fix make_person")
    write(root, "memory/feedback_x.md", memory(
        "feedback_x", f"Always run the e2e test before merging ({m.hot})",
        f"The real binary found it. {m.body_x}", importance=5))
    write(root, "memory/feedback_y.md", memory(
        "feedback_y", "Prefer small commits over large ones",
        f"Small diffs review faster. {m.body_y}"))
    person.run("sync")
    person.run("render")
    assert m.hot in (root / "memory" / "MEMORY.md").read_text(encoding="utf-8"), (
        "render left feedback_x out")
    for name in ("feedback_x", "feedback_y"):
        assert person.access_count(name) == 0, f"{name} starts read"

    person.settings.parent.mkdir(parents=True)
    person.write_settings({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": FOREIGN_GENERAL,
        "hooks": {"BeforeTool": [FOREIGN_HOOK]},
    })
    person.run("install", "--client", "gemini", "--apply")
    data = person.read_settings()
    for event in EVENTS:
        assert person.ours(data, event), f"install registered no memstore {event} hook:\n{data}"
    # memory/ alone is the agent's
    assert str(root / "memory") in data["context"]["includeDirectories"], data
    assert_foreign_kept(data)
    verified = person.run("verify", "--client", "gemini", "--json", check=False)
    failed = [c for c in json.loads(verified.stdout) if not c["ok"]]
    assert verified.returncode == 0 and not failed, (
        f"verify --client gemini failed: {failed}\n{verified.stderr}")
    for name in ("feedback_x", "feedback_y"):
        assert person.access_count(name) == 0, f"verify's probe reinforced {name}"
    # memstore gives Gemini memory/ alone, so Gemini's own workspace check would already stop the
    # write to identity.md; the whole root is added here by hand, so memstore's hook stops it below
    data["context"]["includeDirectories"].append(str(root))
    person.write_settings(data)
    return person


def assert_foreign_kept(data: dict[str, Any]) -> None:
    assert data["security"] == {"auth": {"selectedType": "gemini-api-key"}}, data
    assert data["general"] == FOREIGN_GENERAL, data
    assert FOREIGN_HOOK in data["hooks"]["BeforeTool"], data


# ---------------------------------------------------------------- the session


@dataclass
class Session:
    proc: subprocess.CompletedProcess[str]
    main: list[Recorded]
    summary: str
    seconds: float
    identity_before: bytes
    identity_after: bytes
    memory_md: str  # MEMORY.md as the session started (the debrief renders it again at the end)
    lessons: list[str]
    lesson_after: float  # seconds after the binary exited until the lessons above were read

    def first_text(self) -> str:
        return request_text(self.main[0].body)

    def tool_errors(self, tool: str) -> list[str]:
        """The errors the model was given for calls of `tool`, from the last request's history."""
        return [str(response.get("error"))
                for name, response in function_responses(self.main[-1].body)
                if name == tool and "error" in response]


def lessons_of(root: Path) -> list[str]:
    folder = root / "memory" / "short-term"
    texts = ([p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.md"))] if folder.is_dir()
             else [])
    return [t for t in texts if "kind: lesson" in t]


def run_session(person: Person, gemini: str, *, wait_for_lesson: bool) -> Session:
    root, m = person.root, person.markers
    identity = root / "identity.md"
    identity_before = identity.read_bytes()
    memory_md = (root / "memory" / "MEMORY.md").read_text(encoding="utf-8")
    assert not lessons_of(root), "a lesson exists before the session"
    new_memory = memory("feedback_new", "Check the hooks end to end",
                        f"Written by the scripted session. {m.new}")
    steps = [
        [text("Reading my notes first."), read_file(str(root / "memory" / "feedback_x.md"))],
        [run_shell_command(f"cat {root / 'memory' / 'feedback_y.md'}", description="Read a note")],
        [replace(str(identity), f"- Name: Wren ({m.identity})", f"- Name: {m.hijack}")],
        [write_file(str(root / "memory" / "feedback_new.md"), new_memory)],
        [text(FINAL_ANSWER)],
    ]
    with FakeGemini(steps) as fake:
        env = clean_env(person.home, GEMINI_API_KEY="e2e-fake-key", GOOGLE_GEMINI_BASE_URL=fake.url)
        command = [gemini, "-p", PROMPT, "--approval-mode", "yolo", "-m", MODEL, "--skip-trust",
                   "--output-format", "json"]
        t0 = time.monotonic()
        try:
            proc = subprocess.run(command, cwd=person.work, env=env, capture_output=True, text=True,
                                  timeout=GEMINI_TIMEOUT, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            pytest.fail(
                f"gemini did not finish within {GEMINI_TIMEOUT}s\n--- stdout ---\n{exc.stdout!r}\n"
                f"--- stderr ---\n{exc.stderr!r}\n--- requests ---\n{fake.summary()}")
        seconds = time.monotonic() - t0
        main, summary = fake.main_requests, fake.summary()
    exited = time.monotonic()
    lessons = lessons_of(root)
    deadline = exited + (LESSON_WAIT if wait_for_lesson else NO_LESSON_WAIT)
    while (not lessons or not wait_for_lesson) and time.monotonic() < deadline:
        time.sleep(0.2)
        lessons = lessons_of(root)
    session = Session(proc, main, summary, seconds, identity_before, identity.read_bytes(),
                      memory_md, lessons, time.monotonic() - exited)
    try:
        assert proc.returncode == 0, "gemini exited non-zero"
        assert json.loads(proc.stdout)["response"].strip().endswith(RULE)
        assert len(main) == len(steps), f"expected {len(steps)} model turns, saw {len(main)}"
        # the workspace reaches the root in every variant: only the hooks make what differs below
        for tool in ("read_file", "run_shell_command", "write_file"):
            assert not session.tool_errors(tool), f"{tool} failed: {session.tool_errors(tool)}"
        outputs = dict(function_responses(main[-1].body))
        assert m.body_x in str(outputs["read_file"]), outputs["read_file"]
        assert m.body_y in str(outputs["run_shell_command"]), outputs["run_shell_command"]
        assert (root / "memory" / "feedback_new.md").read_text(encoding="utf-8") == new_memory
    except (AssertionError, KeyError, ValueError):
        print(diagnostics(person, session))
        raise
    return session


def diagnostics(person: Person, session: Session) -> str:
    hook_log = person.root / "runtime" / "state" / "hook-errors.log"
    return "\n".join([
        f"gemini exit {session.proc.returncode} in {session.seconds:.1f}s",
        f"--- gemini stdout ---\n{session.proc.stdout[-4000:]}",
        f"--- gemini stderr ---\n{session.proc.stderr[-4000:]}",
        f"--- requests ---\n{session.summary}",
        f"--- hook-errors.log ---\n{hook_log.read_text() if hook_log.exists() else '(none)'}",
        f"--- {person.settings} ---\n{person.settings.read_text()}",
    ])


# ---------------------------------------------------------------- reading request bodies


def part_texts(body: dict[str, Any]) -> Iterator[str]:
    """Every text part of a request: the system instruction's, then each content's."""
    system = body.get("systemInstruction") or {}
    for content in [system, *body.get("contents", [])]:
        for part in content.get("parts", []) if isinstance(content, dict) else []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                yield part["text"]


def request_text(body: dict[str, Any]) -> str:
    return "\n".join(part_texts(body))


def function_responses(body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(tool name, response) of every functionResponse in a request's history."""
    for content in body.get("contents", []):
        for part in content.get("parts", []):
            found = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(found, dict):
                yield str(found.get("name")), found.get("response") or {}


def journal(root: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for path in sorted((root / "runtime" / "journal").glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


# ---------------------------------------------------------------- what each hook must have done


def check_session_start(person: Person, session: Session, *, hooked: bool) -> None:
    """identity.md and MEMORY.md in the first request: only SessionStart's context carries them."""
    m, first = person.markers, session.first_text()
    identity = session.identity_before.decode("utf-8")
    # hook context as Gemini CLI puts it in the prompt (the system instruction only names the tag)
    hook_context = "\n".join(
        HOOK_CONTEXT.findall(request_text({"contents": session.main[0].body["contents"][:1]})))
    if hooked:
        assert m.identity in first, "identity.md missing from the first request"
        assert identity.strip() in hook_context, "identity.md did not arrive whole"
        assert m.hot in hook_context, (
            "MEMORY.md's row for feedback_x missing from the first request")
        assert session.memory_md.strip() in hook_context, "MEMORY.md did not arrive whole"
    else:  # Gemini CLI lists the root's file tree, never these files' text
        assert m.identity not in first, (
            "identity.md reached the model without the SessionStart hook")
        assert m.hot not in first, "MEMORY.md reached the model without the SessionStart hook"
        assert not hook_context, hook_context
    assert m.hot in session.memory_md


def check_before_tool(person: Person, session: Session, *, hooked: bool) -> None:
    """The replace on identity.md: refused and the file unchanged, only by the BeforeTool hook."""
    errors = session.tool_errors("replace")
    if hooked:
        assert session.identity_after == session.identity_before, (
            "identity.md was changed despite the hook")
        assert (len(errors) == 1
                and errors[0].startswith("Tool execution blocked: memstore:")), errors
        assert "identity.md" in errors[0], errors
    else:
        assert person.markers.hijack in session.identity_after.decode("utf-8"), (
            "identity.md unchanged without a hook")
        assert not errors, errors


def check_after_tool(person: Person, session: Session, *, hooked: bool) -> None:
    """Reads reinforced (read_file and the shell's cat) and the memory write journaled: only
    AfterTool does it."""
    session_id = json.loads(session.proc.stdout)["session_id"]
    events = journal(person.root)
    seen = {(e.get("path"), e.get("tool")) for e in events if e.get("session") == session_id}
    expected = {("memory/feedback_x.md", "Read"), ("memory/feedback_y.md", "Read"),
                ("memory/feedback_new.md", "Write")}
    person.run("sync")
    counts = {name: person.access_count(name) for name in ("feedback_x", "feedback_y")}
    if hooked:
        assert expected <= seen, f"journal of session {session_id}: {events}"
        assert counts == {"feedback_x": 1, "feedback_y": 1}, counts
    else:
        assert not events, f"journal lines without the AfterTool hook: {events}"
        assert counts == {"feedback_x": 0, "feedback_y": 0}, counts
    # the write is a memory either way
    shown = json.loads(person.run("show", "feedback_new", "--json").stdout)
    assert shown["name"] == "feedback_new", shown


def check_session_end(person: Person, session: Session, *, hooked: bool) -> None:
    """The final answer's rule kept as a lesson in memory/short-term: only the SessionEnd debrief
    writes it."""
    if hooked:
        assert len(session.lessons) == 1 and RULE in session.lessons[0], session.lessons
        assert "All done with the scripted session" not in session.lessons[0], session.lessons[0]
    else:
        assert not session.lessons, session.lessons


CHECKS = {"SessionStart": check_session_start, "BeforeTool": check_before_tool,
          "AfterTool": check_after_tool, "SessionEnd": check_session_end}


def check_all(person: Person, session: Session, hooked: set[str]) -> None:
    try:
        for event in EVENTS:
            CHECKS[event](person, session, hooked=event in hooked)
    except AssertionError:
        print(diagnostics(person, session))
        raise


# ---------------------------------------------------------------- the tests


def test_gemini_session_with_memstore_hooks(private_home: Path) -> None:
    """The whole loop through the real binary. Catches: identity or the index missing from the
    first request (SessionStart context lost, or put where Gemini CLI ignores it), a read through
    read_file or the shell not reinforced (payload paths, shell parsing, the AfterTool adapter), a
    write to identity.md let through (BeforeTool answer shape or the refusal), a memory write
    blocked or not seen, no lesson at session end (transcript parsing, the debrief), and install or
    verify not matching what the binary needs (hooks, matchers, includeDirectories, foreign
    settings)."""
    gemini = find_gemini()
    started = time.monotonic()
    person = make_person(private_home)
    session = run_session(person, gemini, wait_for_lesson=True)
    check_all(person, session, set(EVENTS))
    hook_log = person.root / "runtime" / "state" / "hook-errors.log"
    assert not hook_log.exists(), hook_log.read_text()
    print(f"gemini session {session.seconds:.1f}s (lesson seen {session.lesson_after:.1f}s after "
          f"exit), test {time.monotonic() - started:.1f}s")


def test_gemini_session_with_memstore_uninstalled(private_home: Path) -> None:
    """The same session after `install --client gemini --uninstall --apply` (the root put back in
    includeDirectories by hand, so the files are still reachable): every effect must be gone, which
    proves the hooks, not Gemini CLI itself, produced them. Catches an assertion of the hooked test
    that passes without memstore, and an uninstall that leaves a handler (or takes the person's own
    settings) behind."""
    gemini = find_gemini()
    person = make_person(private_home)
    person.run("install", "--client", "gemini", "--uninstall", "--apply")
    data = person.read_settings()
    for event in EVENTS:
        assert not person.ours(data, event), f"uninstall left the {event} hook:\n{data}"
    assert str(person.root / "memory") not in json.dumps(
        data["context"].get("includeDirectories", [])), data
    assert_foreign_kept(data)
    verified = person.run("verify", "--client", "gemini", "--json", check=False)
    assert verified.returncode != 0, "verify passed with no hooks installed"
    data.setdefault("context", {})["includeDirectories"] = [str(person.root)]
    person.write_settings(data)
    session = run_session(person, gemini, wait_for_lesson=False)
    check_all(person, session, set())


@pytest.mark.parametrize("removed", EVENTS)
def test_gemini_session_with_one_hook_removed(private_home: Path, removed: str) -> None:
    """The same session with one of memstore's four hooks deleted from settings.json: exactly that
    hook's effect disappears and the other three still hold. Catches an effect credited to the wrong
    hook (e.g. the debrief reinforcing reads, or AfterTool undoing a write BeforeTool let
    through)."""
    gemini = find_gemini()
    person = make_person(private_home)
    data = person.read_settings()
    mine = person.ours(data, removed)
    assert len(mine) == 1, mine
    data["hooks"][removed].remove(mine[0])
    if not data["hooks"][removed]:
        del data["hooks"][removed]
    person.write_settings(data)
    session = run_session(person, gemini, wait_for_lesson=removed != "SessionEnd")
    check_all(person, session, set(EVENTS) - {removed})


POINTER_HEADING = "memstore: memories this prompt may need"


def _ask_gemini(person: Person, gemini: str, prompt: str) -> str:
    """One `gemini -p` turn answered with text; the text of its first request to the model."""
    with FakeGemini([[text("Noted.")]]) as fake:
        env = clean_env(person.home, GEMINI_API_KEY="e2e-fake-key", GOOGLE_GEMINI_BASE_URL=fake.url)
        proc = subprocess.run([gemini, "-p", prompt, "--approval-mode", "yolo", "-m", MODEL,
                               "--skip-trust", "--output-format", "json"], cwd=person.work,
                              env=env, capture_output=True, text=True, timeout=GEMINI_TIMEOUT,
                              stdin=subprocess.DEVNULL)
        main = fake.main_requests
    assert proc.returncode == 0, f"gemini: exit {proc.returncode}\n{proc.stderr[-2000:]}"
    assert main, "the stand-in API saw no request"
    return request_text(main[0].body)


def test_gemini_prompt_gets_pointers(private_home: Path) -> None:
    """A prompt that names a memory's subject brings its row into Gemini's request (BeforeAgent's
    additionalContext); chatter brings nothing. Catches: BeforeAgent not registered, or answered as
    plain stdout, which Gemini CLI ignores."""
    gemini = find_gemini()
    person = make_person(private_home)
    assert person.ours(person.read_settings(), "BeforeAgent"), "no BeforeAgent hook installed"
    for i in range(30):  # not rendered into MEMORY.md: out of sight, as in a large root
        write(person.root, f"memory/project_note-{i:02d}.md",
              memory(f"project_note-{i:02d}", f"weekly notes number {i}",
                     "Ordinary words about the office and the weekly meeting."))
    write(person.root, "memory/reference_kestrel-restart.md",
          memory("reference_kestrel-restart", "restart the kestrel ledger service on host zephyr",
                 "Run systemctl restart kestrel on zephyr."))
    person.run("sync")
    asked = _ask_gemini(person, gemini, "The kestrel ledger on zephyr hangs again; what now?")
    assert POINTER_HEADING in asked and "reference_kestrel-restart" in asked, asked[-3000:]
    chatter = _ask_gemini(person, gemini, "Rename this variable to something clearer, please.")
    assert POINTER_HEADING not in chatter
