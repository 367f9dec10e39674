"""verify --client codex|gemini: what that client will do with its wiring
(memstore.wiring.install_clients), then a real read through it (memstore.wiring.verify's probe).
The tamper verdict that ends every verify is memstore.wiring.evidence."""

from __future__ import annotations

import datetime as dt
from functools import partial
from pathlib import Path
from typing import Any

from memstore.core.errors import BadUsage
from memstore.core.results import Check
from memstore.wiring.install_clients import verify_codex, verify_gemini
from memstore.wiring.verify import check_hook_errors, check_mirror, check_reinforcement


def client_checks(root: Path, now: dt.datetime, client: str, scope: str, cwd: Path) -> list[Check]:
    """Store.verify_client, but for the tamper verdict: the mirror, the client's hooks probed,
    hook errors."""
    probe = partial(check_reinforcement, root, now=now)

    def run(command: str, payload: Any, **kwargs: Any) -> Check:
        return probe(command, payload_for=payload, **kwargs)

    checks = [check_mirror(root)]
    if client == "codex":
        checks += verify_codex(root, run)
    elif client == "gemini":
        checks += verify_gemini(root, scope, cwd, run)
    else:
        raise BadUsage(f"unknown client {client!r}", hint="use claude, codex or gemini")
    return [*checks, check_hook_errors(root)]
