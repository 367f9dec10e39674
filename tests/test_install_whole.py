"""The nightly jobs alone (`install --cron-only`), a plugin root found from any folder and never
wired twice, an uninstall that leaves no husk behind, and a status that says when the nightly cycle
is not running.

The Claude Code plugin is represented as Claude Code records it: `enabledPlugins` and
`pluginConfigs` in ~/.claude/settings.json (tests/e2e/test_plugin_whole_claude.py does the same with
the real binary).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import memory, write

# the wake job bakes in claude's absolute path
pytestmark = pytest.mark.usefixtures("claude_on_path")


def plugin_wires(home: Path, root: Path) -> Path:
    settings = home / ".claude" / "settings.json"
    write(home, ".claude/settings.json", json.dumps({
        "enabledPlugins": {"memstore@memstore": True},
        "pluginConfigs": {"memstore@memstore": {"options": {"root": str(root)}}}}))
    return settings


@pytest.fixture
def laid_out(tmp_path: Path) -> dict[str, Path]:
    root = tmp_path / "agents" / "me"
    write(root, "memory/feedback_alpha.md", memory("feedback_alpha", "alpha"))
    write(root, "identity.md", "# who I am\n")
    project = tmp_path / "code" / "proj"
    project.mkdir(parents=True)
    return {"root": root, "project": project, "tab": tmp_path / "crontab.txt"}


def files_under(*folders: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for folder in folders if folder.exists()
            for p in sorted(folder.rglob("*")) if p.is_file() and "runtime" not in p.parts}


def test_cron_only_writes_the_two_jobs_and_nothing_else(
        run, laid_out, private_home, monkeypatch) -> None:
    """Catches: `install --crontab-file F --apply` used as a cron-only install writing
    .claude/settings.json and CLAUDE.md into whatever folder the person stood in; an uninstall of it
    touching anything but the jobs."""
    monkeypatch.chdir(laid_out["project"])
    tab = laid_out["tab"]
    tab.write_text("MAILTO=me\n0 1 * * * backup.sh\n")
    before = files_under(laid_out["project"], private_home)
    done = run(laid_out["root"], "install", "--cron-only", "--crontab-file", str(tab), "--apply")
    assert done.exit_code == 0, done.output + done.stderr
    assert files_under(laid_out["project"], private_home) == before, \
        "install --cron-only wrote a wiring file"
    jobs = tab.read_text()
    assert jobs.startswith("MAILTO=me\n0 1 * * * backup.sh\n"), jobs
    assert jobs.count(f"--root {laid_out['root']} tick") == 1 and \
        jobs.count(f"--root {laid_out['root']} wake") == 1
    again = run(laid_out["root"], "install", "--cron-only", "--crontab-file", str(tab), "--apply")
    assert tab.read_text() == jobs, \
        f"a second cron-only install changed the crontab:\n{again.output}"
    gone = run(laid_out["root"], "install", "--cron-only", "--crontab-file", str(tab),
               "--uninstall", "--apply")
    assert gone.exit_code == 0, gone.output + gone.stderr
    assert tab.read_text() == "MAILTO=me\n0 1 * * * backup.sh\n", tab.read_text()
    assert files_under(laid_out["project"], private_home) == before


def test_cron_only_refuses_the_options_that_write_wiring(run, laid_out) -> None:
    """Catches: --cron-only with --settings/--mcp silently writing the files it promises to leave
    alone."""
    for extra in (["--settings", str(laid_out["project"] / "s.json")], ["--mcp"]):
        done = run(laid_out["root"], "install", "--cron-only", "--crontab-file",
                   str(laid_out["tab"]), *extra)
        assert done.exit_code == 2 and "--cron-only" in done.stderr, \
            (extra, done.output, done.stderr)
    assert not laid_out["tab"].exists() and not (laid_out["project"] / "s.json").exists()


def test_a_plugin_root_is_never_wired_twice(run, laid_out, private_home, monkeypatch) -> None:
    """Catches: the README's cron recipe (install ... --cron --apply) putting the settings-file
    hooks beside the plugin's, the double wiring verify then refuses; a refusal with no way
    forward."""
    plugin_wires(private_home, laid_out["root"])
    monkeypatch.chdir(laid_out["project"])
    before = files_under(laid_out["project"], private_home)
    for scope in ("project", "user"):
        done = run(laid_out["root"], "install", "--scope", scope, "--cron", "--apply")
        assert done.exit_code == 2, done.output
        assert "already wires" in done.stderr and "install --cron-only" in done.stderr, done.stderr
    assert files_under(laid_out["project"], private_home) == before


def test_the_shell_finds_the_plugins_root_from_any_folder(
        run, laid_out, private_home, monkeypatch) -> None:
    """Catches: a plugin user's `memstore review` in a project folder saying "no agent root" (the
    plugin's root is an option Claude Code keeps, handed to no shell); a disabled plugin's root
    still used."""
    monkeypatch.chdir(laid_out["project"])
    assert "no agent root" in run(None, "status").stderr, "the test's HOME already names a root"
    settings = plugin_wires(private_home, laid_out["root"])
    shown = run(None, "status", "--json")
    assert shown.exit_code == 0, shown.stderr
    assert Path(json.loads(shown.stdout)["root"]) == laid_out["root"].resolve()
    data = json.loads(settings.read_text())
    data["enabledPlugins"]["memstore@memstore"] = False
    settings.write_text(json.dumps(data))
    assert "no agent root" in run(None, "status").stderr, "a disabled plugin's root was used"


def test_status_says_the_nightly_cycle_is_not_running(run, laid_out, private_home) -> None:
    """Catches: a root whose tick never runs (a plugin install wires no cron job) with nothing
    saying so; a hint that would wire settings-file hooks beside the plugin, or (issue 32's
    newcomer) `install --cron`, which run in a project folder writes a second, project-scope install
    beside the person's user-scope one."""
    root = laid_out["root"]
    shown = json.loads(run(root, "status", "--json").stdout)["nightly"]
    assert shown["tick"] is None and shown["late"] and \
        "install --cron-only --apply" in shown["hint"], shown
    plugin_wires(private_home, root)
    shown = json.loads(run(root, "status", "--json").stdout)["nightly"]
    assert "install --cron-only --apply" in shown["hint"], shown
    assert run(root, "tick").exit_code == 0
    shown = json.loads(run(root, "status", "--json").stdout)["nightly"]
    assert shown["tick"] is not None and not shown["late"] and shown["hint"] is None, shown
    assert "last tick" in run(root, "status").stdout


def test_uninstall_takes_out_the_files_install_made(run, laid_out, monkeypatch) -> None:
    """Catches: `install --uninstall` leaving a 1-byte CLAUDE.md and a `{"autoMemoryEnabled":
    false}` settings file that install itself created; and, the other way, removing a file the
    person had before install."""
    project, root = laid_out["project"], laid_out["project"] / "agent"
    write(root, "memory/feedback_alpha.md", memory("feedback_alpha", "alpha"))
    monkeypatch.chdir(project)
    assert run(root, "install", "--apply").exit_code == 0
    assert (project / "CLAUDE.md").exists() and (project / ".claude" / "settings.json").exists()
    done = run(root, "install", "--uninstall", "--apply")
    assert done.exit_code == 0, done.output
    assert not (project / "CLAUDE.md").exists() and not (project / ".claude").exists(), (
        sorted(str(p) for p in project.rglob("*") if "agent" not in p.parts))
    # The person's own files, there before install, stay whatever is left in them.
    (project / "CLAUDE.md").write_text("")
    write(project, ".claude/settings.json", json.dumps({"autoMemoryEnabled": False}))
    assert run(root, "install", "--apply").exit_code == 0
    assert run(root, "install", "--uninstall", "--apply").exit_code == 0
    assert (project / "CLAUDE.md").exists(), \
        "uninstall removed a CLAUDE.md the person had before install"
    assert json.loads((project / ".claude" / "settings.json").read_text()) == \
        {"autoMemoryEnabled": False}


def test_a_failing_wake_is_said_by_status_until_one_works(run, laid_out) -> None:
    """Failure caught (issue 31's newcomer walkthrough): `wake --model-cmd /bin/false` under cron
    failed four nights running while status said `last wake` of a week before with no warning and
    verify passed: the error was only in wake.log, which no one reads."""
    root = laid_out["root"]
    assert run(root, "note", "the staging host moved to db2").exit_code == 0
    assert run(root, "tick").exit_code == 0
    assert run(root, "wake", "--model-cmd", "/bin/false").exit_code == 1
    shown = json.loads(run(root, "status", "--json").stdout)["nightly"]
    assert shown["wake_failed"] and "/bin/false" in shown["wake_failed"]["error"], shown
    assert "the last wake FAILED" in run(root, "status").stdout
    # and in the morning's bundle, as the guide says (issue 34's newcomer: only status said it)
    assert "the nightly wake failed" in run(root, "context").stdout
    stub = laid_out["project"] / "model.sh"
    stub.write_text("#!/bin/sh\nprintf '# Dream\\n\\nquiet.\\n'\n")
    stub.chmod(0o755)
    assert run(root, "wake", "--model-cmd", str(stub)).exit_code == 0
    assert json.loads(run(root, "status", "--json").stdout)["nightly"]["wake_failed"] is None
    assert "the nightly wake failed" not in run(root, "context").stdout


def test_verify_names_a_lens_registration_from_an_older_release(run, laid_out, monkeypatch) -> None:
    """Failure caught (the upgrade from the release before issue 31): a settings file whose lens
    handler an older memstore registered with the lenses' tool names baked in passed verify, while a
    lens on another tool never fired; verify must fail it and name the reinstall."""
    root, project = laid_out["project"] / "agent", laid_out["project"]
    write(root, "memory/feedback_alpha.md", memory("feedback_alpha", "alpha"))
    write(root, "identity.md", "# who I am\n")
    write(root, "lenses/git.md", "---\ntype: lens\ntrigger:\n  tool_match: ^Bash$\n---\ngit care\n")
    monkeypatch.chdir(project)
    assert run(root, "install", "--apply").exit_code == 0
    first = run(root, "verify")
    assert first.exit_code == 0, first.stdout
    settings = project / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    for group in data["hooks"]["PreToolUse"]:
        for handler in group["hooks"]:
            # as the older release wrote it: matcher = the lenses' tools
            if "hookgate.sh" in handler["command"]:
                group["matcher"] = "^Bash$"
                handler["command"] = handler["command"].split(" --lenses-only ", 1)[1]
    settings.write_text(json.dumps(data))
    done = run(root, "verify", "--json")
    checks = {c["name"]: c for c in json.loads(done.stdout)}
    assert done.exit_code == 1 and not checks["hook PreToolUse lenses"]["ok"], \
        checks["hook PreToolUse lenses"]
    assert "older memstore" in checks["hook PreToolUse lenses"]["detail"]
    assert "install --apply" in checks["hook PreToolUse lenses"]["fix"]
