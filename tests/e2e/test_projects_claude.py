"""One agent root for two projects, with the real Claude Code binary: a lesson captured at
SessionEnd in projA reaches the next projA session and not a projB session; a person-wide note
reaches both.

User scope, a fresh HOME, projects that are git repositories with remotes (their names, as
memstore.core.projects makes them, are what keeps the lesson in projA on any machine).
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest

from memstore.wiring.audit import loaded_text

from .binaries import find_memstore
from .claude import CLAUDE_TIMEOUT, CLI_TIMEOUT, clean_env, find_claude, request_text
from .debriefs import wait_for_debriefs
from .fake_anthropic import FakeAnthropic, text

pytestmark = pytest.mark.e2e


def test_a_projects_lesson_stays_in_that_project(tmp_path: Path) -> None:
    claude, memstore = find_claude(), find_memstore()
    home = (tmp_path / "home").resolve()
    root = home / "agents" / "me"
    projects = {}
    for name in ("projA", "projB"):
        folder = home / "code" / name
        folder.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(folder)], check=True, timeout=CLI_TIMEOUT)
        subprocess.run(
            ["git", "-C", str(folder), "remote", "add", "origin", f"git@example.com:me/{name}.git"],
            check=True, timeout=CLI_TIMEOUT)
        projects[name] = folder
    env = clean_env(HOME=str(home))

    def ms(cwd: Path, *args: str) -> str:
        done = subprocess.run([memstore, *args], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=CLI_TIMEOUT)
        assert done.returncode == 0, f"memstore {' '.join(args)}: {done.stdout}{done.stderr}"
        return done.stdout

    ms(home, "init", str(root), "--apply")
    ms(home, "--root", str(root), "install", "--scope", "user", "--apply")
    # letters: no hash look
    tag = "".join(chr(ord("g") + int(c, 16) % 20) for c in uuid.uuid4().hex[:8])
    rule = f"Never run the deploy script {tag} without the dry-run flag."
    everywhere = f"EVERYWHERE-{tag} the person prefers short commit messages"
    # the CLI finds the installed root: no --root
    ms(projects["projA"], "note", "--global", everywhere)

    def session(project: str, final: str) -> str:
        with FakeAnthropic([[text(final)]]) as fake:
            run_env = clean_env(HOME=str(home), ANTHROPIC_API_KEY="sk-ant-e2e-fake",
                                ANTHROPIC_BASE_URL=fake.url,
                                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
            done = subprocess.run([claude, "-p", "Wrap up.", "--output-format", "json"],
                                  cwd=projects[project], env=run_env, capture_output=True,
                                  text=True, timeout=CLAUDE_TIMEOUT, stdin=subprocess.DEVNULL)
        wait_for_debriefs(tmp_path)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        assert json.loads(done.stdout)["result"] == final
        main = [r for r in fake.requests if r.is_main]
        return request_text(main[0].body)

    # SessionEnd: the rule becomes projA's lesson
    session("projA", f"Done with the deploy work. {rule}")
    lessons = [p.read_text() for p in (root / "memory" / "short-term").glob("*.md")
               if tag in p.read_text()
               and "kind: lesson" in p.read_text()]
    assert len(lessons) == 1 and 'project: "example.com/me/proja"' in lessons[0], lessons
    in_a = session("projA", "Nothing to add.")
    in_b = session("projB", "Nothing to add.")
    assert rule in in_a, "projA's lesson did not reach the next projA session"
    assert rule not in in_b, "projA's lesson leaked into projB"
    assert everywhere in in_a and everywhere in in_b, "a person-wide note must reach both projects"
    # audit counts what the client loaded: each file listed as imported arrived whole in the request
    audited = json.loads(ms(projects["projA"], "audit", "--json"))
    files = audited["files"] if isinstance(audited, dict) else audited
    imported = [f for f in files if f.get("role") in ("import", "identity")]
    assert {Path(f["path"]).name for f in imported} >= {"identity.md", "MEMORY.md"}, files
    for entry in imported:
        body = loaded_text(Path(entry["path"])).strip()
        assert len(loaded_text(Path(entry["path"]))) == entry["chars"]
        assert body in in_a, f"audit counts {entry['path']}, which the client did not load whole"
