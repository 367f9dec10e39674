"""Standalone: the vector side of a hybrid search,
memstore's way against sqlite-vec's, on one mirror.

Run by bench/semantic.py as `PYTHON vec_compare.py MIRROR MODEL`, with an interpreter that
has numpy and sqlite-vec and whose sqlite3 can load extensions (pyenv's builds cannot;
Debian's /usr/bin/python3 can: `python3 -m venv V && V/bin/pip install numpy sqlite-vec`,
then `MEMSTORE_BENCH_VEC_PYTHON=V/bin/python`). Standard library, numpy and sqlite-vec only,
so it runs outside memstore's environment. Prints one JSON object of medians in seconds.

- memstore: `SELECT path, vec, dim FROM vectors JOIN files ...`, float16 blobs joined and
  widened to float32, one matrix product, top 100 by sort (vectors.similarities + hybrid.py);
- sqlite-vec: the same vectors (float32) in a vec0 table, `MATCH ? AND k = 100`.
"""

import json
import sqlite3
import statistics
import sys
import time

import numpy as np
import sqlite_vec

db, model = sys.argv[1], sys.argv[2]
conn = sqlite3.connect(db)
rows = conn.execute("SELECT rowid, vec, dim FROM vectors WHERE model = ?", (model,)).fetchall()
dim = rows[0][2]
query = np.random.default_rng(3).standard_normal(dim).astype(np.float32)
query /= np.linalg.norm(query)


def ours() -> list[str]:
    got = conn.execute(
        "SELECT v.path, v.vec, v.dim FROM vectors v JOIN files f ON f.path = v.path "
        "AND v.text_digest = f.text_digest WHERE v.model = ? AND f.kind != 'derived'", (model,)
    ).fetchall()
    matrix = np.frombuffer(b"".join(r[1] for r in got), dtype="<f2").reshape(
        len(got), dim).astype(np.float32)
    scores = matrix @ query
    cos = {r[0]: float(s) for r, s in zip(got, scores, strict=True)}
    return sorted(cos, key=lambda p: -cos[p])[:100]


conn.enable_load_extension(True)
sqlite_vec.load(conn)
conn.execute(f"CREATE VIRTUAL TABLE temp.vv USING vec0(embedding float[{dim}])")
conn.executemany("INSERT INTO temp.vv(rowid, embedding) VALUES (?, ?)",
                 [(r[0], np.frombuffer(r[1], dtype="<f2").astype(np.float32).tobytes())
                  for r in rows])
qbytes = query.tobytes()


def theirs() -> list[tuple[int]]:
    return conn.execute("SELECT rowid FROM temp.vv WHERE embedding MATCH ? AND k = 100",
                        (qbytes,)).fetchall()


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


ours()
theirs()
a, b = [], []
for _ in range(20):
    a.append(timed(ours))
    b.append(timed(theirs))
print(json.dumps({"vectors": len(rows), "memstore": statistics.median(a),
                  "sqlite_vec": statistics.median(b),
                  "sqlite_vec_version": conn.execute("SELECT vec_version()").fetchone()[0]}))
