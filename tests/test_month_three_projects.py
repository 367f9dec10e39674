"""A month in three projects: thirty simulated days and nights of notes, ticks, wakes, bundles and a
review.

Three projects, each a real git repository with its own remote (memstore scopes by the remote),
and the person's own home folder (person-wide). Every day the person notes a fact in one
project, each fact carrying a mark unique to its project (ALPHA-..., BETA-..., GAMMA-...). Every
night: tick, then wake with a stand-in model that does the worst a model could: it repeats every
fact it was shown into its dream and proposes to fold each fact's file, by name. Every morning
each project's bundle is read: it must hold no other project's mark and no other project's fact
file name (the file name is a slug of the fact). Person-wide notes reach every project.

On day 12 the person accepts one of alpha's proposals: from the next morning on, alpha's bundle
carries it as the person's instruction, no other project's does, until the person marks it done.
"""

from __future__ import annotations

import datetime as dt
import re
import shlex
import subprocess
import sys
from pathlib import Path

from memstore import Store
from tests.helpers import memory, write

PROJECTS = {"alpha": "git@example.com:team/alpha.git", "beta": "https://example.com/team/beta.git",
            "gamma": "ssh://git@example.com/team/gamma.git"}

STUB = """\
import re, sys
prompt = sys.stdin.read()
if not prompt.startswith("You are dreaming"):
    print("What shifted: little.")
    sys.exit(0)
facts = re.findall(r"^### (memory/short-term/\\S+)$", prompt, re.M)
marks = sorted(set(re.findall(r"\\b(?:ALPHA|BETA|GAMMA|HOME)-\\w+", prompt)))
print("# Dream\\n\\nTonight I saw " + ", ".join(marks) + ".\\n\\n## Proposals\\n")
for rel in facts:
    print(f"- fold {rel} into a topic memory")
"""


def make_project(base: Path, name: str, remote: str) -> Path:
    folder = base / "code" / name
    folder.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True, capture_output=True)
    subprocess.run(["git", "-C", str(folder), "remote", "add", "origin", remote], check=True,
                   capture_output=True)
    return folder


def others_marks(bundle: str, own: str) -> list[str]:
    return [m for m in re.findall(r"\b(?:ALPHA|BETA|GAMMA)-\w+", bundle)
            if not m.startswith(own.upper())]


def test_a_month_in_three_projects_keeps_each_projects_facts_to_itself(
        tmp_path: Path, run, monkeypatch) -> None:
    """Catches: one project's facts (text or file name) reaching another project's bundle through
    the dream, its proposals, the index or the facts part (26 of 30 mornings leaked before the dream
    was per project); person-wide facts kept from a project; an accepted proposal that vanishes like
    a rejected one."""
    root = tmp_path / "me"
    assert run(None, "init", str(root), "--apply").exit_code == 0
    write(root, "memory/feedback_suite-a.md",
          memory("feedback_suite-a", "Run the end-to-end suite before merging"))
    folders = {name: make_project(tmp_path, name, remote) for name, remote in PROJECTS.items()}
    stub = tmp_path / "model.py"
    stub.write_text(STUB, encoding="utf-8")
    model = shlex.join([sys.executable, str(stub)])
    start = dt.datetime(2026, 8, 1, tzinfo=dt.UTC)
    names = [*PROJECTS]
    fact_files: dict[str, set[str]] = {name: set() for name in names}
    accepted: str | None = None
    leaks: list[str] = []
    for day in range(1, 31):
        noon = start + dt.timedelta(days=day - 1, hours=12)
        monkeypatch.setenv("MEMSTORE_NOW", noon.isoformat())
        name = names[day % 3]
        monkeypatch.chdir(folders[name])
        mark = f"{name.upper()}-D{day:02d}"
        before = set((root / "memory" / "short-term").glob("*.md"))
        assert run(root, "note", f"{mark} the {name} deploy host moved to node{day}").exit_code == 0
        fact_files[name] |= {p.stem
                             for p in set((root / "memory" / "short-term").glob("*.md")) - before}
        if day % 7 == 0:
            monkeypatch.chdir(tmp_path)  # not in a project: a person-wide fact
            assert run(root, "note",
                       f"HOME-D{day:02d} the person prefers short answers").exit_code == 0
        night = start + dt.timedelta(days=day, hours=3, minutes=30)
        monkeypatch.setenv("MEMSTORE_NOW", night.isoformat())
        assert run(root, "tick").exit_code == 0
        monkeypatch.setenv("MEMSTORE_NOW", (night + dt.timedelta(minutes=5)).isoformat())
        woke = run(root, "wake", "--model-cmd", model)
        assert woke.exit_code == 0, woke.output + woke.stderr
        morning = night + dt.timedelta(hours=5)
        monkeypatch.setenv("MEMSTORE_NOW", morning.isoformat())
        for own in names:
            monkeypatch.chdir(folders[own])
            bundle = run(root, "context").stdout
            foreign = others_marks(bundle, own)
            foreign += [stem for other in names if other != own for stem in fact_files[other]
                        if stem in bundle]
            if foreign:
                leaks.append(f"day {day}, {own}'s bundle: {sorted(set(foreign))}")
            if day >= 8:
                assert "HOME-D07" in bundle or "HOME-D14" in bundle or "HOME-D" in bundle, (
                    f"day {day}: a person-wide fact did not reach {own}'s bundle")
            if accepted is not None:
                assert (accepted in bundle) == (own == "alpha"), (day, own, accepted)
        if day == 12:
            items = [i for i in Store(root, morning).review() if i.kind == "proposal"]
            alphas = [i for i in items if any(stem in i.text for stem in fact_files["alpha"])]
            assert alphas, f"no proposal of alpha's waits for review: {[i.text for i in items]}"
            assert Store(root, morning).review_answer(alphas[0].id, accept=True) is not None
            accepted = alphas[0].text
            monkeypatch.chdir(folders["alpha"])
            assert accepted in run(root, "context").stdout, (
                "an accepted proposal did not reach the next bundle")
    assert leaks == [], "\n".join(leaks)
    assert all(fact_files.values()), fact_files
