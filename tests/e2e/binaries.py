"""Finding the programs an e2e test drives, and the environment variables every run sets."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

# What every e2e environment holds: the fake model on 127.0.0.1 is reached without a proxy, and
# semantic pass off: the hooks are what is tested here, and embedding would only add time
E2E_ENV = {"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
           "MEMSTORE_SEMANTIC": "off"}


def find_binary(
    name: str,
    env_var: str,
    local_candidates: Iterable[Path],
    install_hint: str,
    *,
    label: str,
    fail_in_ci: bool = True,
) -> str:
    """The client binary to drive: $env_var, else the first executable local candidate, else `name`
    on PATH.

    $env_var naming anything but an executable file fails the test. Nothing found skips it,
    saying where to get the binary (`install_hint`); with fail_in_ci and $CI set it fails instead.
    """
    explicit = os.environ.get(env_var)
    if explicit:
        if not (os.path.isfile(explicit) and os.access(explicit, os.X_OK)):
            pytest.fail(f"${env_var}={explicit!r} is not an executable file")
        return explicit
    for candidate in local_candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    on_path = shutil.which(name)
    if on_path:
        return on_path
    message = (f"{label} binary not found: set ${env_var}, or {install_hint}, or put "
               f"`{name}` on PATH")
    if fail_in_ci and os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def find_memstore() -> str:
    """The memstore console script of this venv (beside the running python), else the one on
    PATH."""
    beside = Path(sys.executable).parent / "memstore"
    if beside.is_file():
        return str(beside)
    found = shutil.which("memstore")
    if not found:
        pytest.fail("the memstore console script is not installed (pip install -e . in the venv)")
    return found
