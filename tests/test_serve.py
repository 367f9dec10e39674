"""`memstore serve`: the read-only web inspector, against a real server on a real socket."""

from __future__ import annotations

import hashlib
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.helpers import NOW, memory, write
from tests.serving import fetch, serving

# pip install -e '.[test]'
pytest.importorskip("starlette", reason="the serve extra is part of the test extra")


def _root(root: Path) -> Path:
    write(root, "memory/feedback_pinned-rule.md",
          memory("feedback_pinned-rule", "Always run the linter first",
                 pin="true", created="2026-07-01"))
    write(root, "memory/project_export-format.md", memory(
        "project_export-format", "The export writes parquet, not CSV",
        body="We chose parquet for the nightly export. See feedback_pinned-rule for the linter.",
        created="2026-06-01"))
    write(root, "memory/reference_staging-hosts.md",
          memory("reference_staging-hosts", "Where staging lives", created="2026-05-01"))
    write(root, "identity.md", "# Identity\n\nI am the test agent.\n")
    # malformed frontmatter
    write(root, "memory/feedback_broken.md", "---\nname: [unclosed\n---\nbody\n")
    return root


def _touch(root: Path, rel: str, *stamps: str) -> None:
    for when in stamps:
        done = subprocess.run(
            [sys.executable, "-m", "memstore", "--root", str(root), "--now", when, "touch", rel],
            capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


def _tree(root: Path) -> dict[str, str]:
    """Every file under the root (runtime/ and the mirror included) and a digest of its bytes.

    SQLite's own reader files are left out: any reader of a WAL database maps the -shm index and
    may open an empty -wal; an empty -wal is counted as no -wal. A write would fill the -wal.
    """
    out = {}
    for p in sorted(root.rglob("*")):
        if (not p.is_file() or p.name.endswith("-shm")
            or (p.name.endswith("-wal") and p.stat().st_size == 0)):
            continue
        out[p.relative_to(root).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


# ---------------------------------------------------------------- the pages


def test_overview_shows_the_bands_as_the_index_has_them(root: Path) -> None:
    """Failure caught: an overview that does not show what MEMORY.md holds, band by band."""
    _root(root)
    with serving(root, now=NOW) as url:
        page = fetch(url)
    assert page.status == 200
    hot = page.body.split('id="band-hot"', 1)[1].split('id="band-new"', 1)[0]
    assert 'href="/memory/memory/feedback_pinned-rule.md"' in hot  # pinned: Hot
    for band in ("hot", "new", "cold", "archive", "superseded"):
        assert f'href="/band/{band}"' in page.body
    assert ("Waiting for review" in page.body and "Machines" in page.body
            and "Hook errors" in page.body)
    problems = page.body.split('id="problems"', 1)[1].split("</section>", 1)[0]
    assert "memory/feedback_broken.md" in problems  # what `lint` says, from the mirror


def test_search_finds_a_memory_and_links_to_its_page(root: Path) -> None:
    """Failure caught: a search page that finds nothing, or hits that lead nowhere."""
    _root(root)
    with serving(root, now=NOW) as url:
        found = fetch(url + "search?q=" + quote("parquet export"))
        assert found.status == 200
        links = re.findall(r'<a class="memory" href="(/memory/[^"]+)">', found.body)
        assert links and links[0] == "/memory/memory/project_export-format.md", found.body
        assert "Found by words" in found.body and "bm25" in found.body  # the reason for the hit
        target = fetch(url + links[0][1:])
    assert target.status == 200
    assert "The export writes parquet, not CSV" in target.body
    # a memory named in the text links to its page
    assert (
        '<a href="/memory/memory/feedback_pinned-rule.md">feedback_pinned-rule</a>' in target.body)


def test_memory_page_shows_access_count_and_a_chart_of_its_reads(root: Path) -> None:
    """Failure caught: a memory page without its policy state or its history over time; a read
    inside the spacing gate drawn as if it had reinforced."""
    _root(root)
    rel = "memory/reference_staging-hosts.md"
    # two reinforcing reads days apart, and one an hour after the second (inside the 24 h gate)
    _touch(root, rel, "2026-07-10T09:00:00Z", "2026-07-20T09:00:00Z", "2026-07-20T10:00:00Z")
    with serving(root, now=NOW) as url:
        page = fetch(url + "memory/" + rel)
    assert page.status == 200
    assert re.search(r'<dd class="access-count">2</dd>', page.body), page.body
    score = re.search(r'<svg class="chart score".*?</svg>', page.body, re.S)
    assert score, "no score chart"
    assert len(re.findall(r'class="read reinforced"', score.group(0))) == 2
    assert len(re.findall(r'class="read gated"', score.group(0))) == 1
    assert re.search(r'<svg class="chart stability"', page.body)


def test_timeline_lists_the_reads_of_the_week_by_machine(root: Path) -> None:
    """Failure caught: reads of the last days missing from the timeline, or older ones in it."""
    _root(root)
    _touch(root, "memory/reference_staging-hosts.md", "2026-07-29T09:00:00Z")
    _touch(root, "memory/project_export-format.md", "2026-06-01T09:00:00Z")  # two months old
    with serving(root, now=NOW) as url:
        page = fetch(url + "timeline?days=7")
    assert page.status == 200
    assert "<h2>2026-07-29</h2>" in page.body
    assert "reference_staging-hosts" in page.body
    assert "project_export-format" not in page.body


# ---------------------------------------------------------------- what it must never do


def test_memory_text_is_shown_as_text_never_as_markup(root: Path) -> None:
    """Failure caught: a memory whose text carries HTML or script runs in the person's browser."""
    _root(root)
    write(root, "memory/feedback_evil.md", memory(
        "feedback_evil", "<img src=x onerror=alert(1)>",
        body="<script>alert('memory')</script> \x1b[31mred \u202egnp.exe"))
    with serving(root, now=NOW) as url:
        page = fetch(url + "memory/memory/feedback_evil.md")
        found = fetch(url + "search?q=alert")
    assert page.status == 200
    for body in (page.body, found.body):
        assert "<script>alert" not in body and "<img src=x" not in body
    assert "&lt;script&gt;alert(" in page.body
    # an escape sequence shown, not sent
    assert "\x1b" not in page.body and "\\x1b[31mred" in page.body
    # nor a right-to-left override
    assert "\u202e" not in page.body and "\\u202egnp.exe" in page.body
    assert "script-src" not in page.headers["content-security-policy"]  # no script may run at all
    assert "default-src 'none'" in page.headers["content-security-policy"]


def test_path_tricks_leak_nothing_and_never_give_a_server_error(root: Path, tmp_path: Path) -> None:
    """Failure caught: a path that climbs out of the root (plain, encoded, NUL) shows a file, or a
    strange request gives a 5xx."""
    _root(root)
    (tmp_path / "secret.txt").write_text("TOPSECRET outside the root\n")
    tricks = [
        "memory/../../secret.txt", "memory/..%2F..%2Fsecret.txt", "memory/%2e%2e/%2e%2e/secret.txt",
        "memory/" + quote(str(tmp_path / "secret.txt")), "memory/%00", "memory/feedback%00.md",
        "memory/%ff%fe", "static/..%2F..%2F..%2Fsecret.txt", "static/%2e%2e/app.py",
        "search?q=" + "x" * 5000, "search?q=%00", "search?q=%22unbalanced", "search?q=NEAR(",
        "search?q=a&mode=bogus", "band/nope", "band/hot?page=-3", "band/archive?page=999999",
        "timeline?days=-1", "timeline?days=abc",
        "memory/" + "a" * 4000, "memory/" + "a" * 60000, "memory/%25", "memory/_",
    ]
    with serving(root, now=NOW) as url:
        for trick in tricks:
            answer = fetch(url + trick)
            assert answer.status < 500, (trick, answer.status, answer.body[:300])
            assert "TOPSECRET" not in answer.body, trick
            assert "Traceback" not in answer.body, trick
        # a wildcard is a name, not a pattern: it matches no file
        assert fetch(url + "memory/%25").status == 404 and fetch(url + "memory/_").status == 404


def test_requests_change_nothing_and_other_methods_are_refused(root: Path) -> None:
    """Failure caught: a request (a POST, or any page) that writes a file or the mirror."""
    _root(root)
    _touch(root, "memory/reference_staging-hosts.md", "2026-07-20T09:00:00Z")
    with serving(root, now=NOW) as url:
        before = _tree(root)
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            for path in ("", "search?q=export", "memory/memory/project_export-format.md",
                         "static/style.css"):
                answer = fetch(url + path, method=method, data=b"q=x")
                assert answer.status == 405, (method, path, answer.status)
        for path in ("", "search?q=export", "memory/memory/project_export-format.md", "timeline",
                     "band/archive"):
            assert fetch(url + path).status == 200
        after = _tree(root)
    assert after == before


def test_a_foreign_host_header_is_refused(root: Path) -> None:
    """Failure caught: a web page on another site, rebinding its name to 127.0.0.1, reads the
    memory."""
    _root(root)
    with serving(root, now=NOW) as url:
        port = url.rsplit(":", 1)[1].strip("/")
        evil = fetch(url, headers={"Host": f"attacker.example:{port}"})
        good = fetch(url, headers={"Host": f"localhost:{port}"})
    assert evil.status == 400 and "feedback_pinned-rule" not in evil.body
    assert good.status == 200


def test_a_non_loopback_address_needs_the_flag_and_says_what_it_exposes(root: Path) -> None:
    """Failure caught: `serve --host 0.0.0.0` quietly shows every memory to the network."""
    _root(root)
    done = subprocess.run(
        [sys.executable, "-m", "memstore", "--root", str(root), "serve", "--host", "0.0.0.0",
         "--port", "0"], capture_output=True, text=True, timeout=20)
    assert done.returncode == 2
    assert done.stderr.startswith(
        "memstore: error: --host 0.0.0.0 would let other machines read every memory")
    assert "--expose" in done.stderr and "Traceback" not in done.stderr
    with serving(root, "--host", "0.0.0.0", "--expose", now=NOW) as url:
        page = fetch(url.replace("0.0.0.0", "127.0.0.1"))
    assert page.status == 200 and "anyone who can reach it can read every memory" in page.body


def test_a_port_in_use_is_one_line(root: Path) -> None:
    """Failure caught: a traceback from the server when the port is taken."""
    _root(root)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "memstore", "--root", str(root), "serve", "--port", str(port)],
            capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == f"memstore: error: port {port} on 127.0.0.1 is in use"
    assert "Traceback" not in done.stderr


def test_sigterm_stops_it_cleanly(root: Path) -> None:
    """Failure caught: `kill PID` (what a service manager sends) ending serve with a signal death,
    no word said."""
    _root(root)
    proc = subprocess.Popen(
        [sys.executable, "-m", "memstore", "--root", str(root), "serve", "--port", "0"],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert proc.stderr is not None
    for _ in range(50):
        if "serving" in proc.stderr.readline():
            break
    proc.terminate()
    rest = proc.stderr.read()
    assert proc.wait(timeout=30) == 0, rest
    assert "memstore: stopped" in rest and "Traceback" not in rest


def test_the_clock_runs_while_it_serves(root: Path) -> None:
    """Failure caught: a server that fixes "now" when it starts: its times and windows go stale for
    hours."""
    _root(root)
    env_now = os.environ.pop("MEMSTORE_NOW", None)
    try:
        with serving(root) as url:
            first = re.search(r"At (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", fetch(url).body)
            time.sleep(1.2)
            second = re.search(r"At (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", fetch(url).body)
    finally:
        if env_now is not None:
            os.environ["MEMSTORE_NOW"] = env_now
    assert first and second and second.group(1) > first.group(1), (first, second)
