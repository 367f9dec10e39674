"""A real `memstore serve` for the inspector's tests: the console command in a child process,
on a port the system picks, stopped with SIGINT as a person stops it with Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

URL = re.compile(r"at (http://\S+/) ")


@dataclass
class Answer:
    status: int
    body: str
    headers: dict[str, str]


@contextmanager
def serving(root: Path, *args: str, now: str | None = None) -> Iterator[str]:
    """The base URL of a running `memstore serve` over root; the server is stopped (and must stop
    cleanly) after."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "memstore", "--root", str(root)]
    if now:
        cmd += ["--now", now]
    proc = subprocess.Popen([*cmd, "serve", "--port", "0", *args], stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True, env=env)
    seen: list[str] = []
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 60
        url = None
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            seen.append(line)
            match = URL.search(line)
            if match:
                url = match.group(1)
                break
        assert url, f"memstore serve did not start: {''.join(seen)}"
        yield url
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        rest = proc.stderr.read() if proc.stderr else ""
        assert "Traceback" not in rest, rest
    assert proc.returncode == 0, f"serve exited {proc.returncode}: {''.join(seen)}{rest}"


def fetch(
        url: str, method: str = "GET", headers: dict[str, str] | None = None,
        data: bytes | None = None) -> Answer:
    request = urllib.request.Request(url, method=method, headers=headers or {}, data=data)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return Answer(response.status, response.read().decode("utf-8", "replace"),
                          dict(response.headers))
    except urllib.error.HTTPError as exc:
        return Answer(exc.code, exc.read().decode("utf-8", "replace"), dict(exc.headers))
