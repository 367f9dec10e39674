"""The wake's stand-in model and the root it wakes in: shared by the wake's tests (fixtures
`wake_root` and `model` in tests/conftest.py).

The model is a tiny Python script passed with --model-cmd. It logs each prompt it receives
(calls.jsonl beside it), so a test sees what a call carried and whether a call happened at all.
"""

from __future__ import annotations

import datetime as dt
import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from memstore.api.store import Store
from memstore.hook.proposal_notes import remember
from memstore.life.scaffold import apply_plan
from tests.helpers import NOW, memory, write

PINNED = dt.datetime.fromisoformat(NOW)  # the clock the `run` fixture pins
DAY = f"{PINNED:%y%m%d}"

DREAM = """# What the week suggests

The export keeps coming up: it wants to be one memory, not two.

## Proposals

- merge memory/project_export-a.md into memory/project_export-b.md: they say the same thing
- mark memory/reference_old-api.md superseded: the API moved

## Carried over

Nothing else.
"""

SIT = ("What shifted: I noticed I reach for the next task before this one is done.\n"
       "What stayed open: why.\n")

STUB = """\
import json, os, sys, time
prompt = sys.stdin.read()
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "calls.jsonl"), "a") as log:
    log.write(json.dumps({"prompt": prompt, "pid": os.getpid()}) + "\\n")
mode = sys.argv[1]
dreaming = prompt.startswith("You are dreaming")
if mode == "ok":
    sys.stdout.write(DREAM if dreaming else SIT)
elif mode == "fail":
    sys.stderr.write("boom: the model is overloaded\\nsecond line\\n")
    sys.exit(3)
elif mode == "sit-fails":
    if dreaming:
        sys.stdout.write(DREAM)
    else:
        sys.stderr.write("sit refused\\n")
        sys.exit(4)
elif mode == "empty":
    sys.stdout.write("  \\n")
elif mode == "sleep":
    time.sleep(60)
    sys.stdout.write(DREAM)
elif mode == "tick-meanwhile":
    with open(sys.argv[2], "w") as cue:
        cue.write('{"anything": true, "items": [], "ran_at": "fresh"}')
    sys.stdout.write(DREAM if dreaming else SIT)
"""


def initialised_root(folder: Path) -> Path:
    """An initialised root with topic memories, a lens, T1 facts and a cue with items."""
    plan = Store.plan_init(folder)
    apply_plan(plan)
    root = plan.root
    write(root, "memory/project_export-a.md",
          memory("project_export-a", "Export streams rows", body="A."))
    write(root, "memory/project_export-b.md",
          memory("project_export-b", "Export is streamed", body="B."))
    write(root, "memory/reference_old-api.md",
          memory("reference_old-api", "The v1 API", body="Old."))
    write(root, "memory/short-term/260729-export-bug.md",
          "---\ndate: 2026-07-29\n---\nThe export dropped the last row.\n")
    write(root, "memory/short-term/260701-ancient.md",
          "---\ndate: 2026-07-01\n---\nAn ancient fact.\n")
    write(root, "memory/dream-journal/260728-dream.md",
          "---\ndate: 2026-07-28\nkind: dream\n---\nEarlier dream.\n")
    write_cue(root, anything=True)
    Store(root).rebuild()  # a mirror exists before wake, as after a nightly tick
    return root


def write_cue(root: Path, *, anything: bool) -> bytes:
    cue = {
        "ran_at": "2026-07-30T03:30:00Z",
        "live_session": False,
        "did": {"sync": "ok"},
        "anything": anything,
        "items": [
            {"kind": "near-duplicate",
             "paths": ["memory/project_export-a.md", "memory/project_export-b.md"],
             "detail": "similarity 0.91"},
            {"kind": "new-fact", "paths": ["memory/short-term/260729-export-bug.md"],
             "detail": "born yesterday"},
        ] if anything else [],
    }
    data = json.dumps(cue).encode()
    write(root, "runtime/state/cue.json", data)
    return data


def stub_model(folder: Path) -> Callable[..., str]:
    """`--model-cmd` for the stub (folder/model.py, logging to folder/calls.jsonl) in a given
    mode."""
    script = folder / "model.py"
    folder.mkdir()
    script.write_text(f"DREAM = {DREAM!r}\nSIT = {SIT!r}\n" + STUB, encoding="utf-8")

    def command(mode: str, *extra: str) -> str:
        return shlex.join([sys.executable, str(script), mode, *extra])

    return command


def as_the_wake_wrote(root: Path, *rels: str) -> None:
    """For tests that lay out a proposals note by hand: record its bytes as memstore wake does."""
    remember(root, [(Path(rel).name, (root / rel).read_bytes()) for rel in rels])
