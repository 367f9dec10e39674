"""SessionStart's parts finish in one fixed order, whatever order they start in.

Claude Code runs a root's SessionStart handlers at once and joins their outputs in the order the
processes finish (seen with Claude Code 2.1.332), so without an order of their own identity, the
index and the bundle would arrive in a different order each session and the model's prompt cache
would miss every time. Here the real hook processes are started the wrong way round (the bundle
first, imports:1 last, 150 ms apart): each must still exit after the one before it in the chain
imports:1 -> imports:2 -> imports:3 -> bundle (session_start.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from memstore.wiring.install_base import hook_command
from tests.helpers import memory, write


def test_parts_finish_in_chain_order_when_started_backwards(tmp_path: Path) -> None:
    """Catches: parts that print as soon as they are ready (the order of a race), a bundle that does
    not wait for the last import part, and a wait that blocks for good when its predecessor is
    done."""
    import shlex

    root = tmp_path / "agent"
    write(root, "identity.md", "# who I am\n\n" + "- a line of identity\n" * 40)
    for n in range(30):
        write(root, f"memory/feedback_rule-{n:02d}.md",
              memory(f"feedback_rule-{n:02d}", f"rule number {n} " * 8))
    assert subprocess.run([sys.executable, "-m", "memstore", "--root", str(root), "render"],
                          capture_output=True, timeout=120).returncode == 0
    base = shlex.split(hook_command(root))
    payload = json.dumps(
        {"hook_event_name": "SessionStart", "session_id": "s-order", "source": "startup",
         "cwd": str(tmp_path)})
    handlers = {"bundle": [*base, "--after", "imports:3"],
                **{f"imports:{n}": [*base, "--part", f"imports:{n}"]
                   for n in (3, 2, 1)}}
    import threading

    ended: dict[str, float] = {}
    outputs: dict[str, bytes] = {}

    def watch(name: str, proc: subprocess.Popen[bytes]) -> None:
        outputs[name] = proc.communicate(payload.encode(), timeout=30)[0]
        # when the process was done, as Claude Code would take its output
        ended[name] = time.monotonic()

    threads = []
    for name, argv in handlers.items():  # backwards: the bundle starts first, imports:1 last
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        threads.append(threading.Thread(target=watch, args=(name, proc)))
        threads[-1].start()
        time.sleep(0.15)
    for thread in threads:
        thread.join(35)
    assert len(ended) == 4, f"a part did not finish within 30 s: {sorted(ended)}"
    order = sorted(ended, key=ended.__getitem__)
    assert order == ["imports:1", "imports:2", "imports:3", "bundle"], order
    assert ended["bundle"] - ended["imports:1"] < 3.0, (
        "the chain waited for a part that had finished")
    first = json.loads(outputs["imports:1"])["hookSpecificOutput"]["additionalContext"]
    assert "a line of identity" in first, first[:200]


def test_a_part_whose_predecessor_never_runs_goes_ahead(tmp_path: Path) -> None:
    """Catches: a wait with no end (a registration with --after but no import parts would hang every
    start until the client's timeout and lose the bundle)."""
    import shlex

    root = tmp_path / "agent"
    write(root, "memory/feedback_alpha.md", memory("feedback_alpha", "alpha"))
    argv = [*shlex.split(hook_command(root)), "--after", "imports:3"]
    payload = json.dumps(
        {"hook_event_name": "SessionStart", "session_id": "s-alone", "source": "startup",
         "cwd": str(tmp_path)})
    t0 = time.monotonic()
    done = subprocess.run(argv, input=payload.encode(), capture_output=True, timeout=30)
    took = time.monotonic() - t0
    assert done.returncode == 0 and took < 8, (took, done.stderr)
