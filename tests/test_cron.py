"""The nightly jobs in cron: tick, then wake five minutes later, per root;
install, uninstall, verify.

Every test works on real crontab files in tmp_path, or on a stand-in `crontab` program
that keeps the "user's crontab" in a tmp file: never the real user crontab.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
from pathlib import Path

import pytest

from memstore.core.model_command import DEFAULT_MODEL_CMD
from memstore.wiring import cron
from memstore.wiring.install_base import memstore_command
from tests.helpers import memory, write

FOREIGN = ("MAILTO=me@example.com\n# nightly backup, keep\n"
           "0 1 * * * /usr/local/bin/backup.sh --full\n")

DEFAULT_ARGS = shlex.split(DEFAULT_MODEL_CMD)[1:]  # the wake's model flags after `claude`


# install bakes the absolute path of `claude` into the wake job: give every test a stand-in
pytestmark = pytest.mark.usefixtures("claude_on_path")


def make_root(base: Path) -> Path:
    write(base, "memory/feedback_alpha.md", memory("feedback_alpha", "alpha"))
    return base


@pytest.fixture
def quoted_root(tmp_path: Path) -> Path:
    # a space and a quote in the path: every path in the job must be shell-quoted
    return make_root(tmp_path / "my agent's root")


@pytest.fixture
def tab(tmp_path: Path) -> Path:
    path = tmp_path / "crontab.txt"
    path.write_text(FOREIGN)
    return path


def install(run, root: Path, tab: Path | None, *extra: str):
    """`memstore install` with every Claude Code file in tmp (never the project's .claude)."""
    where = root.parent / "claude"
    cron = ["--crontab-file", str(tab)] if tab is not None else []
    return run(root, "install", "--settings", str(where / ".claude/settings.json"),
               "--claude-md", str(where / "CLAUDE.md"), *cron, *extra)


def verify_cron(run, root: Path, tab: Path) -> dict[str, dict[str, object]]:
    where = root.parent / "claude"
    result = run(root, "verify", "--settings", str(where / ".claude/settings.json"), "--claude-md",
                 str(where / "CLAUDE.md"), "--crontab-file", str(tab), "--json")
    return {c["name"]: c for c in json.loads(result.stdout) if c["name"].startswith("cron")}


def jobs(text: str, root: Path) -> list[str]:
    """The job lines (not comments) that run memstore for root."""
    return [line for line in text.splitlines()
            if not line.startswith("#") and f"--root {shlex.quote(str(root))} " in line]


def subcommand(line: str) -> str:
    """`tick` or `wake`: the word after --root ROOT in a job line."""
    words = shlex.split(line.split(" ", 5)[5])
    return words[words.index("--root") + 2]


# ---------------------------------------------------------------- the lines


def test_the_lines_run_tick_then_wake_with_quoted_paths_and_logs(
        run, quoted_root, tab, claude_on_path) -> None:
    """Fails if a path is not shell-quoted, a job or its log is missing, or wake is not 5 minutes
    after tick."""
    assert install(run, quoted_root, tab, "--apply").exit_code == 0
    text = tab.read_text()
    program = shlex.join(memstore_command())
    q = shlex.quote
    state = quoted_root / "runtime/state"
    assert text == FOREIGN + (
        f"# memstore tick for {quoted_root}\n"
        f"30 3 * * * {program} --root {q(str(quoted_root))} tick "
        f">> {q(str(state / 'tick.log'))} 2>&1\n"
        f"# memstore wake for {quoted_root}\n"
        f"35 3 * * * {program} --root {q(str(quoted_root))} wake --model-cmd "
        f"{q(shlex.join([str(claude_on_path), *DEFAULT_ARGS]))} "
        f">> {q(str(state / 'wake.log'))} 2>&1\n")
    tick = jobs(text, quoted_root)[0]
    assert shlex.split(tick.split(" ", 5)[5])[1:4] == ["--root", str(quoted_root), "tick"]


def test_install_twice_gives_the_same_text_and_uninstall_restores_the_original(
        run, quoted_root, tab) -> None:
    """Fails if a second install duplicates or rewrites our lines, or uninstall loses MAILTO, a
    comment or a job."""
    install(run, quoted_root, tab, "--apply")
    first = tab.read_bytes()
    again = install(run, quoted_root, tab, "--apply")
    assert again.exit_code == 0 and tab.read_bytes() == first
    assert len(jobs(first.decode(), quoted_root)) == 2

    dry = install(run, quoted_root, tab, "--uninstall", "--crontab-file", str(tab))
    assert dry.exit_code == 0 and "-30 3 * * *" in dry.stdout and "nothing written" in dry.stdout
    assert tab.read_bytes() == first  # the dry run wrote nothing
    done = install(run, quoted_root, tab, "--uninstall", "--apply")
    assert done.exit_code == 0, done.stderr
    assert tab.read_text() == FOREIGN  # byte for byte
    assert install(run, quoted_root, tab, "--uninstall", "--apply").exit_code == 0
    assert tab.read_text() == FOREIGN


def test_the_older_one_line_tick_is_replaced_not_duplicated(run, quoted_root, tab) -> None:
    """Fails if the previous version's `# memstore nightly tick for ROOT` line survives beside the
    new jobs."""
    old = (f"# memstore nightly tick for {quoted_root}\n"
           f"30 3 * * * /old/venv/bin/memstore --root {shlex.quote(str(quoted_root))} tick >> "
           f"{shlex.quote(str(quoted_root / 'runtime/state/tick.log'))} 2>&1\n")
    tab.write_text(FOREIGN + old + "# a comment after it\n")
    assert verify_cron(run, quoted_root, tab)["cron wake"]["ok"] is False
    assert "older one-line tick" in verify_cron(run, quoted_root, tab)["cron tick"]["detail"]
    install(run, quoted_root, tab, "--apply")
    text = tab.read_text()
    assert "nightly tick" not in text and "/old/venv" not in text
    assert [subcommand(line) for line in jobs(text, quoted_root)] == ["tick", "wake"]
    # in place of the old line, and everything around it kept
    assert text.startswith(FOREIGN + f"# memstore tick for {quoted_root}\n") and \
        text.endswith("# a comment after it\n")


def test_a_second_roots_jobs_survive_the_first_roots_uninstall(run, tmp_path, tab) -> None:
    """Fails if jobs are matched loosely (by `memstore tick`, or by a root that is a prefix of
    another)."""
    first = make_root(tmp_path / "agent")
    second = make_root(tmp_path / "agent-two")  # first's path is a prefix of second's
    install(run, first, tab, "--apply")
    install(run, second, tab, "--apply", "--cron-time", "04:00")
    both = tab.read_text()
    assert len(jobs(both, first)) == 2 and len(jobs(both, second)) == 2
    install(run, first, tab, "--uninstall", "--apply")
    text = tab.read_text()
    assert jobs(text, first) == [] and jobs(text, second) == jobs(both, second)
    assert text == FOREIGN + "\n".join(both.splitlines()[-4:]) + "\n"
    assert all(c["ok"] for c in verify_cron(run, second, tab).values())


def test_wake_wraps_past_midnight(run, quoted_root, tab) -> None:
    """Fails if wake's time is not taken modulo the day (23:58 + 5 must be 00:03, not 23:63 or
    24:03)."""
    assert cron.schedule((23, 58)) == {"tick": (23, 58), "wake": (0, 3)}
    assert cron.schedule((3, 57))["wake"] == (4, 2)
    install(run, quoted_root, tab, "--apply", "--cron-time", "23:58")
    assert [line.split(" ")[:2] for line in jobs(tab.read_text(), quoted_root)] == \
        [["58", "23"], ["3", "0"]]
    install(run, quoted_root, tab, "--apply")  # back to the default: replaced, not added
    assert [line.split(" ")[:2] for line in jobs(tab.read_text(), quoted_root)] == \
        [["30", "3"], ["35", "3"]]
    bad = install(run, quoted_root, tab, "--cron-time", "24:00")
    assert bad.exit_code == 2 and "HH:MM" in bad.stderr


def test_verify_fails_before_install_passes_after_and_fails_after_uninstall(
        run, quoted_root, tab) -> None:
    """Fails if verify does not look for both jobs of this root, or gives no fix for a missing
    one."""
    before = verify_cron(run, quoted_root, tab)
    assert set(before) == {"cron tick", "cron wake"} and not any(c["ok"] for c in before.values())
    assert all("install --apply" in str(c["fix"]) and "--crontab-file" in str(c["fix"])
               for c in before.values())
    # the fix names the scope verify checked
    assert all("--settings" in str(c["fix"]) for c in before.values())
    install(run, quoted_root, tab, "--apply")
    after = verify_cron(run, quoted_root, tab)
    assert all(c["ok"] for c in after.values()), after
    # someone comments wake out
    tab.write_text(tab.read_text().replace("\n35 3 * * *", "\n# 35 3 * * *"))
    assert verify_cron(run, quoted_root, tab)["cron wake"]["detail"].endswith("is commented out")
    install(run, quoted_root, tab, "--uninstall", "--apply")
    assert not any(c["ok"] for c in verify_cron(run, quoted_root, tab).values())


# ---------------------------------------------------------------- what python-crontab would lose


def test_an_environment_line_right_above_our_jobs_survives_uninstall(
        tmp_path: Path, quoted_root) -> None:
    """Fails if removal goes through python-crontab's own remove(), which drops the env lines a job
    carries, or if a setting after the last job is left to python-crontab's parse, which drops
    it."""
    path = tmp_path / "t"
    path.write_text("0 1 * * * a\nMAILTO=only-ours@example.com\n")  # our jobs get appended below it
    source = cron.Source(path)
    installed = cron.plan(source, quoted_root, program=["/bin/true"])
    assert installed.after.startswith("0 1 * * * a\nMAILTO=only-ours@example.com\n# memstore tick")
    path.write_text(installed.after)
    assert cron.plan(source, quoted_root, remove=True).after == \
        "0 1 * * * a\nMAILTO=only-ours@example.com\n"
    # a setting after our jobs, the last line: python-crontab's parse holds it in no job, drops it
    path.write_text(installed.after + "MAILTO=later@example.com\n")
    assert cron.plan(source, quoted_root, remove=True).after == (
        "0 1 * * * a\nMAILTO=only-ours@example.com\nMAILTO=later@example.com\n")
    path.write_text("MAILTO=me\n")  # a crontab that held nothing but a setting
    path.write_text(cron.plan(source, quoted_root, program=["/bin/true"]).after)
    assert cron.plan(source, quoted_root, remove=True).after == "MAILTO=me\n"


def test_a_setting_the_library_would_drop_is_refused_and_a_rewrite_is_named(
        tmp_path: Path, quoted_root) -> None:
    """Fails if a crontab is rewritten without `PATH = ...` (python-crontab drops it), or a rewrite
    goes unsaid."""
    path = tmp_path / "t"
    path.write_text("PATH = /usr/local/bin:/usr/bin\n0 1 * * * a\n")
    with pytest.raises(cron.CronError, match="PATH=/usr/local/bin:/usr/bin"):
        cron.plan(cron.Source(path), quoted_root)
    path.write_text('MAILTO="me@example.com"\n#0 4 * * * disabled.sh\n0 1 * * * a\n')
    edit = cron.plan(cron.Source(path), quoted_root, program=["/bin/true"])
    assert len(edit.warnings) == 1 and "rewrites 2 line(s)" in edit.warnings[0]
    assert "MAILTO=me@example.com\n# 0 4 * * * disabled.sh\n0 1 * * * a\n" in edit.after


def test_a_crontab_changed_after_the_plan_is_not_overwritten(tmp_path: Path, quoted_root) -> None:
    """Fails if apply writes a plan over a crontab someone edited since it was read."""
    path = tmp_path / "t"
    path.write_text(FOREIGN)
    edit = cron.plan(cron.Source(path), quoted_root, program=["/bin/true"])
    path.write_text(FOREIGN + "0 2 * * * theirs.sh\n")
    with pytest.raises(cron.CronError, match="changed since the plan"):
        edit.write()
    assert path.read_text() == FOREIGN + "0 2 * * * theirs.sh\n"


def test_a_percent_sign_in_the_root_is_escaped_for_cron_and_still_recognised(
        tmp_path: Path) -> None:
    """Fails if `%` reaches cron unescaped (cron turns it into a newline), or the escape breaks
    idempotence."""
    root = make_root(tmp_path / "50%")
    path = tmp_path / "t"
    path.write_text(cron.plan(cron.Source(path), root, program=["/bin/true"]).after)
    assert "/50\\% tick >> " in path.read_text() and \
        "/50\\%/runtime/state/tick.log" in path.read_text()
    assert cron.plan(cron.Source(path), root, program=["/bin/true"]).after == path.read_text()
    assert cron.plan(cron.Source(path), root, remove=True).after == ""


# ---------------------------------------------------------------- the user's crontab (`crontab`)


FAKE_CRONTAB = """#!/bin/sh
# A stand-in for crontab(1): the "user's crontab" is the file $FAKE_CRONTAB.
if [ "$1" = "-l" ]; then
  if [ -f "$FAKE_CRONTAB" ]; then cat "$FAKE_CRONTAB"; exit 0; fi
  echo "no crontab for $(id -un)" >&2; exit 1
fi
cp "$1" "$FAKE_CRONTAB"
"""


def test_the_users_crontab_goes_through_the_crontab_program(
        run, quoted_root, tmp_path, monkeypatch) -> None:
    """Fails if --cron does not read with `crontab -l` and write with `crontab FILE`, or verify
    --cron looks elsewhere."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "crontab"
    fake.write_text(FAKE_CRONTAB)
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    store = tmp_path / "user-crontab"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CRONTAB", str(store))

    assert install(run, quoted_root, None, "--cron", "--apply").exit_code == 0  # no crontab yet
    assert len(jobs(store.read_text(), quoted_root)) == 2
    where = quoted_root.parent / "claude"
    checked = run(quoted_root, "verify", "--settings", str(where / ".claude/settings.json"),
                  "--claude-md", str(where / "CLAUDE.md"), "--cron", "--json")
    assert {c["name"]: c["ok"] for c in json.loads(checked.stdout)
            if c["name"].startswith("cron")} == {"cron tick": True, "cron wake": True}
    store.write_text(FOREIGN + store.read_text())
    assert install(run, quoted_root, None, "--uninstall", "--cron", "--apply").exit_code == 0
    assert store.read_text() == FOREIGN


def test_no_crontab_program_is_one_clear_error(run, quoted_root, tmp_path, monkeypatch) -> None:
    """Fails if a missing `crontab` command ends in a traceback, or says nothing of
    --crontab-file."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    result = install(run, quoted_root, None, "--cron")
    assert result.exit_code == 1 and "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines()
             if line.startswith(("memstore: error", "memstore: hint"))]
    assert len(lines) == 2 and lines[0].startswith("memstore: error: no `crontab` command")
    assert lines[1].startswith("memstore: hint: install cron") and "--crontab-file" in lines[1]


# ----------------------------------------------------------- install --uninstall: hooks and imports


def test_uninstall_takes_out_this_roots_hooks_and_imports_and_nothing_else(run, tmp_path) -> None:
    """Fails if uninstall removes a foreign hook, another root's handlers, or text around the import
    block."""
    quoted_root = make_root(tmp_path / "proj" / "agent")
    settings = tmp_path / "proj/.claude/settings.json"
    claude_md = tmp_path / "proj/CLAUDE.md"
    foreign = {"model": "m",
               "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}
    write(tmp_path, "proj/.claude/settings.json", json.dumps(foreign))
    write(tmp_path, "proj/CLAUDE.md", "# Rules\n\nBe careful.\n")
    args = ["--settings", str(settings), "--claude-md", str(claude_md)]
    assert run(quoted_root, "install", *args, "--apply").exit_code == 0
    assert "hookrun.py" in settings.read_text() and "memstore:begin" in claude_md.read_text()
    # another root's handler, added by hand afterwards (install keeps one root per settings file)
    data = json.loads(settings.read_text())
    data["hooks"]["PostToolUse"].append({"matcher": "Read", "hooks": [
        {"type": "command", "command": "/x/memstore --root /other/root hook"}]})
    settings.write_text(json.dumps(data))

    result = run(quoted_root, "install", *args, "--uninstall", "--apply")
    assert result.exit_code == 0, result.stderr
    after = json.loads(settings.read_text())
    assert after["hooks"]["Stop"] == foreign["hooks"]["Stop"]
    # left as it is, as --help says
    assert after["model"] == "m" and after["autoMemoryEnabled"] is False
    # another root's (older-style) handler is not this root's to remove
    assert [h["command"] for g in after["hooks"]["PostToolUse"] for h in g["hooks"]] == [
        "/x/memstore --root /other/root hook"]
    assert set(after["hooks"]) == {"Stop", "PostToolUse"}
    assert claude_md.read_text() == "# Rules\n\nBe careful.\n"


def test_the_wake_job_carries_a_model_command_cron_can_run(
        run, quoted_root, tab, claude_on_path) -> None:
    """Fails if the wake job relies on cron's bare PATH finding `claude` (it would fail every night)
    or verify passes a model command cron cannot run."""
    line = jobs((install(run, quoted_root, tab, "--apply"), tab.read_text())[1], quoted_root)[1]
    model = shlex.split(shlex.split(line.split(" ", 5)[5].split(" >> ")[0])[5])
    assert model == [str(claude_on_path), *DEFAULT_ARGS]  # absolute, resolved on the person's PATH
    missing = install(run, quoted_root, tab, "--apply", "--model-cmd", "/nowhere/claude -p")
    assert "not on your PATH" in missing.stderr
    wake = verify_cron(run, quoted_root, tab)["cron wake"]
    assert not wake["ok"] and "cron can find" in str(wake["detail"])
