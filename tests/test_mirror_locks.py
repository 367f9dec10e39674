"""Opening the mirror must not strip the locks of the other connections this process holds.

POSIX advisory locks belong to the process: closing any descriptor of a file drops all
of them. A Python open() of memstore.db (as a header check once did) therefore left a
long-lived connection unlocked; the next process to close its last connection thought
itself alone, checkpointed and deleted -wal and -shm under it, and the following query
failed with `disk I/O error` (found by the search benchmark, which holds a connection
open while it calls the library and the CLI in turn).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from memstore import Store
from memstore.core.config import Config
from memstore.mirror.search import search
from memstore.mirror.sync import open_mirror, sync
from tests.helpers import memory, write

CHILD = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
         "c.execute('SELECT count(*) FROM files').fetchone(); c.close()")


def test_a_second_open_keeps_the_first_connections_locks(root: Path) -> None:
    for i in range(5):
        write(root, f"memory/project_apples-{i}.md",
              memory(f"project_apples-{i}", f"apples number {i}"))
    sync(root)
    db = root / "runtime" / "memstore.db"
    # a long-lived connection, as a server or the benchmark holds
    held = open_mirror(root, Config())
    try:
        assert len(search(held, "apples", 10, None, Config())) == 5
        # opens and closes a second connection
        assert len(Store(root).search("apples", catch_up="quick")) == 5
        subprocess.run([sys.executable, "-c", CHILD, str(db)], check=True, timeout=60)
        # Had the child found no other reader, it would have deleted both under `held`.
        assert db.with_name("memstore.db-wal").exists() and db.with_name("memstore.db-shm").exists()
        assert len(Store(root).search("apples", catch_up="quick")) == 5
        assert len(search(held, "apples", 10, None, Config())) == 5
    finally:
        held.close()
