"""The mirror's schema, as sqlite-utils migrations (installed as memstore.migrations).

The mirror is derived: a database whose applied migrations are not a prefix of this
list (a newer or foreign schema) is rebuilt from the files rather than migrated.
A new migration is appended here, never edited in place once released.
"""

from __future__ import annotations

import re
import sqlite3

from sqlite_utils import Database, Migrations

migrations = Migrations("memstore")


@migrations()
def m001_files_and_search(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE files (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,        -- relative to the root, posix separators
            kind TEXT NOT NULL,               -- t2, short-term, dream, bug, lens, meditation,
                                              -- identity, derived, other
            type TEXT,
            name TEXT,
            summary TEXT,
            description TEXT,
            body TEXT,
            row_text TEXT,                    -- what the index row shows
            created TEXT,
            last_updated TEXT,
            status TEXT,
            in_flight INTEGER NOT NULL DEFAULT 0,
            state TEXT,
            pin INTEGER NOT NULL DEFAULT 0,
            importance REAL NOT NULL DEFAULT 0,
            fm_access_count INTEGER,          -- policy values as written in the file (NULL: absent
                                              -- or invalid)
            fm_stability REAL,
            fm_last_accessed TEXT,
            fm_last_reinforced TEXT,
            meta TEXT,                        -- the whole frontmatter as JSON
            problems TEXT,                    -- JSON list of {level, message}
            mtime_ns INTEGER NOT NULL,
            size INTEGER NOT NULL,
            digest TEXT NOT NULL
        );
        CREATE INDEX files_kind ON files(kind);

        CREATE VIRTUAL TABLE files_fts USING fts5(
            name, summary, description, body,
            content='files', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER files_ai AFTER INSERT ON files BEGIN
            INSERT INTO files_fts(rowid, name, summary, description, body)
            VALUES (new.id, new.name, new.summary, new.description, new.body);
        END;
        CREATE TRIGGER files_ad AFTER DELETE ON files BEGIN
            INSERT INTO files_fts(files_fts, rowid, name, summary, description, body)
            VALUES ('delete', old.id, old.name, old.summary, old.description, old.body);
        END;
        CREATE TRIGGER files_au AFTER UPDATE OF name, summary, description, body ON files BEGIN
            INSERT INTO files_fts(files_fts, rowid, name, summary, description, body)
            VALUES ('delete', old.id, old.name, old.summary, old.description, old.body);
            INSERT INTO files_fts(rowid, name, summary, description, body)
            VALUES (new.id, new.name, new.summary, new.description, new.body);
        END;

        -- Derived policy state of T2 files: the file's own fields, then journal events.
        CREATE TABLE policy (
            path TEXT PRIMARY KEY,
            access_count INTEGER NOT NULL,
            stability REAL NOT NULL,
            last_accessed TEXT,
            last_reinforced TEXT,
            touches INTEGER NOT NULL DEFAULT 0  -- journal events applied on top of the file
        );

        -- Every access event read from the journal (or recorded by the hook), once.
        CREATE TABLE events (
            id TEXT PRIMARY KEY,
            ts TEXT NOT NULL,
            path TEXT NOT NULL,
            tool TEXT NOT NULL,
            session TEXT,
            host TEXT
        );
        CREATE INDEX events_path_ts ON events(path, ts);

        -- How far each journal file has been read, so sync reads only what is new.
        CREATE TABLE journal_offsets (
            file TEXT PRIMARY KEY,
            offset INTEGER NOT NULL
        );

        -- Lenses already delivered in a session: each fires at most once per session.
        CREATE TABLE lens_fired (
            session TEXT NOT NULL,
            lens TEXT NOT NULL,
            fired_at TEXT NOT NULL,
            PRIMARY KEY (session, lens)
        );

        CREATE TABLE settings (
            key TEXT PRIMARY KEY,
            value TEXT
        );
        """
    )


@migrations()
def m002_quick_freshness(db: Database) -> None:
    """What a search needs to see new and changed files without statting every one of them."""
    db.executescript(
        """
        -- readdir gives the inode for free: a file replaced by rename shows without a stat
        ALTER TABLE files ADD COLUMN inode INTEGER;
        ALTER TABLE files ADD COLUMN dir TEXT;
        UPDATE files SET dir = CASE WHEN instr(path, '/') = 0 THEN ''
            ELSE rtrim(path, replace(path, '/', '')) END;
        UPDATE files SET dir = substr(dir, 1, length(dir) - 1) WHERE dir != '';
        CREATE INDEX files_dir ON files(dir);

        -- every folder the last full walk listed, with its mtime then: adding, removing or
        -- renaming a file changes its folder's mtime
        CREATE TABLE dirs (
            path TEXT PRIMARY KEY,
            mtime_ns INTEGER NOT NULL
        );

        -- files the hook saw written or edited since the last sync
        CREATE TABLE dirty (
            path TEXT PRIMARY KEY
        );
        """
    )


# m003's frozen copy of memstore.mirror.cjk.RANGES, the Unicode blocks of the scripts written
# without spaces between words, for the backfill below (a test holds the two equal:
# changing the ranges needs a migration that recomputes files.unspaced).
M003_RANGES: tuple[tuple[int, int], ...] = (
    (0x0E00, 0x0EFF), (0x0F00, 0x0FFF), (0x1000, 0x109F), (0x1100, 0x11FF), (0x1780, 0x17FF),
    (0x3005, 0x3007), (0x3040, 0x30FF), (0x3130, 0x318F), (0x31F0, 0x31FF), (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF), (0xA960, 0xA97F), (0xAC00, 0xD7FF), (0xF900, 0xFAFF), (0xFF66, 0xFF9F),
    (0x20000, 0x323AF),
)


def trigram_supported() -> bool:
    """SQLite's trigram tokenizer arrived in 3.34.0."""
    return sqlite3.sqlite_version_info >= (3, 34, 0)


@migrations()
def m003_unspaced_scripts(db: Database) -> None:
    """A trigram index of the files written (partly) in CJK, Thai and other unspaced scripts.

    unicode61 makes a whole clause of such text one token, so a word inside it is never
    found (see memstore/mirror/cjk.py). files_cjk holds the same four columns as files_fts, but
    only for the files whose text has a character of those scripts, so a mirror of
    English memories does not grow. Which files those are is files.unspaced, set by
    indexing.build_row (a compiled regex; the same test as a GLOB in the trigger cost
    as much as the rest of a sync). The triggers keep files_cjk in step with files on
    insert, update and delete, as files_ai/au/ad do for files_fts.

    files_cjk keeps its own copy of the text: a scan for one- and two-character runs
    (which have no trigram) then reads only these rows, and snippets can be cut from it.
    detail=none: the index holds which files have a trigram, not where (about 35% smaller
    than detail=full on Chinese text). A run is looked up as the AND of its trigrams and
    then counted exactly in the text, so positions would buy nothing.
    With an SQLite older than 3.34 (no trigram tokenizer) it is a plain table of the
    same columns, and search finds every run by scanning it with instr() instead of a
    trigram MATCH: slower, same results.
    """
    if trigram_supported():
        table = (
            "CREATE VIRTUAL TABLE files_cjk USING fts5(name, summary, description, body, "
            "tokenize='trigram', detail=none)"
        )
    else:
        table = "CREATE TABLE files_cjk (name TEXT, summary TEXT, description TEXT, body TEXT)"
    stretch = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in M003_RANGES) + "]")

    def unspaced(*texts: str | None) -> int:
        return int(any(text and stretch.search(text) for text in texts))

    db.conn.create_function("m003_unspaced", 4, unspaced, deterministic=True)
    db.executescript(
        f"""
        ALTER TABLE files ADD COLUMN unspaced INTEGER NOT NULL DEFAULT 0;
        -- an existing mirror: flag the rows it already holds (before the triggers exist) ...
        UPDATE files SET unspaced = m003_unspaced(name, summary, description, body);
        {table};
        CREATE TRIGGER files_cjk_ai AFTER INSERT ON files WHEN new.unspaced BEGIN
            INSERT INTO files_cjk(rowid, name, summary, description, body)
            VALUES (new.id, new.name, new.summary, new.description, new.body);
        END;
        CREATE TRIGGER files_cjk_ad AFTER DELETE ON files WHEN old.unspaced BEGIN
            DELETE FROM files_cjk WHERE rowid = old.id;
        END;
        CREATE TRIGGER files_cjk_au AFTER UPDATE OF name, summary, description, body, unspaced
        ON files BEGIN
            DELETE FROM files_cjk WHERE rowid = old.id;
            INSERT INTO files_cjk(rowid, name, summary, description, body)
            SELECT new.id, new.name, new.summary, new.description, new.body WHERE new.unspaced;
        END;
        -- ... and index them
        INSERT INTO files_cjk(rowid, name, summary, description, body)
        SELECT id, name, summary, description, body FROM files WHERE unspaced;
        """
    )


# m004's files table: as m001-m003 left it, less the body, plus the rendered row (see m004).
M004_FILES = """
    CREATE TABLE files (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,        -- relative to the root, posix separators
        kind TEXT NOT NULL,               -- t2, short-term, dream, bug, lens, meditation, identity,
                                      -- derived, other
        type TEXT,
        name TEXT,
        summary TEXT,
        description TEXT,
        row_text TEXT,                    -- what the index row shows
        index_row TEXT,                   -- T2 files: the row itself, as render.make_row builds it
        created TEXT,
        last_updated TEXT,
        status TEXT,
        in_flight INTEGER NOT NULL DEFAULT 0,
        state TEXT,
        pin INTEGER NOT NULL DEFAULT 0,
        importance REAL NOT NULL DEFAULT 0,
        fm_access_count INTEGER,          -- policy values as written in the file (NULL: absent or
                                      -- invalid)
        fm_stability REAL,
        fm_last_accessed TEXT,
        fm_last_reinforced TEXT,
        meta TEXT,                        -- the whole frontmatter as JSON
        problems TEXT,                    -- JSON list of {level, message}
        mtime_ns INTEGER NOT NULL,
        size INTEGER NOT NULL,
        digest TEXT NOT NULL,
        inode INTEGER,                    -- m002
        dir TEXT,                         -- m002
        unspaced INTEGER NOT NULL DEFAULT 0  -- m003
    )
"""


@migrations()
def m004_bodies_out_of_files(db: Database) -> None:
    """The body leaves `files` and lives only in the full-text tables; the row is built once;
    `settings` goes.

    Every render reads every T2 row of `files`, and with the body inline (long ones
    spilling to overflow pages) that scan walked twice the pages it needs. Now:

    - files_fts is a regular FTS5 table that stores its own copy of name, summary,
      description and body (rowid = files.id), where m001 made it an external-content
      index over `files`. Search, snippets and `show` read the body from it
      (indexing.body_of), lenses too (lenses.load_lenses).
    - files_cjk (m003) is unchanged: it already held its own copy.
    - No trigger can keep them in step with `files` any more, since `files` no longer
      holds the body: sync writes both in the same transaction as the row
      (indexing.write_rows, indexing.delete_rows). The triggers of m001 and m003 go.
    - `files` is copied into a table without the body column and renamed, rather than
      altered with DROP COLUMN: that needs SQLite 3.35 (m003 still supports older ones),
      and it would leave every row where it was, on pages now mostly empty, so the
      render scan would walk as many pages as before.
    - files.index_row holds a T2 file's row as MEMORY.md and the archive show it
      (index_rows.make_row of its name and row_text), built at sync rather than cleaned again
      by every render. It is index_rows.make_row's output: a change to what make_row returns
      needs a migration that recomputes it (test_render_clean holds make_row's output).
    - `settings` (m001) was never read or written.

    Ids are kept (the copy carries them), so the existing files_cjk rows stay valid.
    """
    for trigger in ("files_ai", "files_ad", "files_au", "files_cjk_ai", "files_cjk_ad",
                    "files_cjk_au"):
        db.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    db.execute("DROP TABLE files_fts")  # external content: this drops the index only
    db.execute(
        "CREATE VIRTUAL TABLE files_fts USING fts5(name, summary, description, body, "
        "tokenize='porter unicode61 remove_diacritics 2')"
    )
    db.execute(
        "INSERT INTO files_fts(rowid, name, summary, description, body) "
        "SELECT id, name, summary, description, body FROM files"
    )
    # one segment, as a rebuild leaves it
    db.execute("INSERT INTO files_fts(files_fts) VALUES('optimize')")
    from memstore.mirror.index_rows import make_row

    def index_row(path: str, row_text: str | None) -> str:
        filename = path.rsplit("/", 1)[-1]
        return make_row(filename[:-3], filename, row_text or "")

    db.conn.create_function("m004_index_row", 2, index_row, deterministic=True)
    db.execute(M004_FILES.replace("CREATE TABLE files (", "CREATE TABLE files_m004 (", 1))
    columns = ", ".join(
        row[1] for row in db.execute("PRAGMA table_info(files_m004)").fetchall()
        if row[1] != "index_row"
    )
    db.execute(
        f"INSERT INTO files_m004 ({columns}, index_row) SELECT {columns}, "
        "CASE WHEN kind = 't2' THEN m004_index_row(path, row_text) END FROM files"
    )
    db.execute("DROP TABLE files")
    db.execute("ALTER TABLE files_m004 RENAME TO files")
    db.execute("CREATE INDEX files_kind ON files(kind)")
    db.execute("CREATE INDEX files_dir ON files(dir)")
    db.execute("DROP TABLE settings")


@migrations()
def m005_vectors(db: Database) -> None:
    """Embeddings for semantic search (the `semantic` extra), and what each file's would be made of.

    - files.text_digest: the digest of the text a file's vector is made from
      (indexing.embed_text of its summary, description and body), set by sync. A flush
      rewrites frontmatter, not that text, so it never makes a vector stale.
    - vectors: one row per file and model. A file needs (re-)embedding when no row holds
      the current model key and its current text_digest, so a changed file, a new file and
      a model change are all found by one join. Keyed by path, not files.id: a rebuild
      carries rows over from the old mirror (vectors.carry_over) and ids are not stable
      across mirrors. `vec` is little-endian float16, `dim` values.

    Existing mirrors get text_digest computed here from the rows they hold; the vectors
    table starts empty (nothing was embedded before this migration).
    """
    from memstore.meaning.chunking import text_digest

    db.conn.create_function("m005_text_digest", 3, text_digest, deterministic=True)
    db.execute("ALTER TABLE files ADD COLUMN text_digest TEXT")
    db.execute(
        "UPDATE files SET text_digest = m005_text_digest(summary, description, "
        "(SELECT body FROM files_fts WHERE files_fts.rowid = files.id))"
    )
    db.execute(
        """
        CREATE TABLE vectors (
            path TEXT NOT NULL,
            model TEXT NOT NULL,
            text_digest TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vec BLOB NOT NULL,
            PRIMARY KEY (path, model)
        )
        """
    )


@migrations()
def m006_policy_base(db: Database) -> None:
    """files.fm_base: a T2 file's `policy_base` frontmatter, the starting state its policy is
    replayed from.

    memstore.core.policy explains it: with a base, the policy state is the base plus every
    journal event in (ts, id) order, so an event that arrives after a flush (another
    machine's, pulled late) still counts. No file had the key before this migration, so
    every row starts NULL; the next sync that reads a file with one fills it in.
    """
    db.execute("ALTER TABLE files ADD COLUMN fm_base TEXT")


@migrations()
def m007_journal_integrity(db: Database) -> None:
    """journal_offsets gains what ingest needs to notice lost and missed journal lines.

    - tail: a digest of the bytes just before `offset` (journal.TAIL_WINDOW of them). A file
      whose bytes there changed (lines inserted earlier by a git merge) is read again from 0.
    - bad_lines: how many lines before `offset` are not valid events (a write torn by a full
      disk, a hand edit, conflict markers). A line is read once, so this count is what lets
      `status` and `lint` report them on every later run.

    Existing rows get tail NULL, which ingest takes as "not verified": each file is read once
    more from 0 (events go in by id, so nothing doubles), which also counts its bad lines and
    picks up any lines an earlier merge put before the offset.
    """
    db.execute("ALTER TABLE journal_offsets ADD COLUMN tail TEXT")
    db.execute("ALTER TABLE journal_offsets ADD COLUMN bad_lines INTEGER NOT NULL DEFAULT 0")


@migrations()
def m008_inert_rows(db: Database) -> None:
    """files.index_row made again for every T2 file, with memory text made inert
    (memstore/core/inert.py).

    Rows stored before this escaped nothing: a summary such as `see @~/.ssh/config` would
    stay an import in MEMORY.md until its file changed. The row is built by the current
    index_rows.make_row, as m004 did: the row's format belongs to index_rows, not to the schema.
    """
    from memstore.mirror.index_rows import make_row

    def index_row(path: str, row_text: str | None) -> str:
        filename = path.rsplit("/", 1)[-1]
        return make_row(filename[:-3], filename, row_text or "")

    db.conn.create_function("m008_index_row", 2, index_row, deterministic=True)
    db.execute("UPDATE files SET index_row = m008_index_row(path, row_text) WHERE kind = 't2'")


@migrations()
def m009_journal_gap(db: Database) -> None:
    """policy.journal_gap: 1 when a file's own flushed values say more than its policy_base and
    the journal here explain (runtime/ deleted, a journal never committed), so the file's
    values were taken as the base rather than lowered. `status` counts these."""
    db.execute("ALTER TABLE policy ADD COLUMN journal_gap INTEGER NOT NULL DEFAULT 0")


@migrations()
def m010_vector_parts(db: Database) -> None:
    """The whole of a file embedded, in parts (memstore/meaning/chunking.py), and the yardstick of
    unrelatedness.

    - files.parts: how many vectors a file's text makes (0: no readable text, so none;
      1: the head alone; more: the head and its tail parts). files.tail_digest: the digest
      of the tail parts' texts, NULL without a tail.
    - vectors gains `chunk` (0 is the head) in its key. Every row already there is a head's
      vector, made from the same text under the same text_digest, so it stays current:
      upgrading embeds only the tails of long files, never a file again.
    - background: per model, the vectors of memstore.meaning.background's sentences, made once
      (hybrid.py measures how far a question is from "unrelated" with them); `digest`
      names the sentences they were made from.

    Existing rows get parts and tail_digest computed here from the text they hold.
    """
    from memstore.meaning.chunking import plan

    db.execute("ALTER TABLE files ADD COLUMN parts INTEGER NOT NULL DEFAULT 1")
    db.execute("ALTER TABLE files ADD COLUMN tail_digest TEXT")
    rows = db.execute(
        "SELECT f.id, f.summary, f.description, t.body FROM files f "
        "JOIN files_fts t ON t.rowid = f.id"
    ).fetchall()
    db.conn.executemany(
        "UPDATE files SET parts = ?, tail_digest = ? WHERE id = ?",
        [(*plan(summary, description, body), id_) for id_, summary, description, body in rows],
    )
    db.execute(
        """
        CREATE TABLE vectors_m010 (
            path TEXT NOT NULL,
            model TEXT NOT NULL,
            chunk INTEGER NOT NULL DEFAULT 0,
            text_digest TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vec BLOB NOT NULL,
            PRIMARY KEY (path, model, chunk)
        )
        """
    )
    db.execute(
        "INSERT INTO vectors_m010 (path, model, chunk, text_digest, dim, vec) "
        "SELECT path, model, 0, text_digest, dim, vec FROM vectors"
    )
    db.execute("DROP TABLE vectors")
    db.execute("ALTER TABLE vectors_m010 RENAME TO vectors")
    db.execute(
        """
        CREATE TABLE background (
            model TEXT PRIMARY KEY,
            digest TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vecs BLOB NOT NULL
        )
        """
    )


@migrations()
def m011_raw_texts(db: Database) -> None:
    """raw_texts: each memory file's bytes as sync last read them (zlib), so one that disappears
    without `memstore forget` can be written back into memory/archive/ exactly
    (memstore/mirror/deletions.py).

    Only files under memory/ that deletions.watched names (not the derived files, not archive/
    folders). Existing mirrors hold no bytes yet: their memory rows get inode -1 ("look again",
    as sync marks a racily clean stamp), so the next sync reads each of them once and fills the
    table.
    """
    db.execute("CREATE TABLE raw_texts (path TEXT PRIMARY KEY, raw BLOB NOT NULL)")
    db.execute("UPDATE files SET inode = -1 WHERE path LIKE 'memory/%' AND kind != 'derived'")


@migrations()
def m012_births(db: Database) -> None:
    """What a memory's birth was, kept by the mirror until flush writes it into the file
    (memstore/mirror/adoption.py).

    - events.born: 1 for the event of a Write that created the memory (the hook sees Claude Code's
      tool_response say so), events.project: the session's project then (memstore.core.projects).
      The journal line carries both, so a rebuild reads them again.
    - files.adopted: JSON of the values the mirror took from a birth because the file does not say
      them (created, project); NULL when it took none. Flush adds exactly these to the frontmatter.

    Existing rows: no event was known as a birth before, so every row starts 0 / NULL.
    """
    for table, column, kind in (("events", "born", "INTEGER NOT NULL DEFAULT 0"),
                                ("events", "project", "TEXT"), ("files", "adopted", "TEXT")):
        # a column already there is kept (a mirror a test took back to an older schema by hand)
        if column not in {row[1]
                          for row in db.execute(f"PRAGMA table_info({table})").fetchall()}:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")


@migrations()
def m013_latents(db: Database) -> None:
    """The sparse "latent terms" of embedded parts, kept once made (memstore/meaning/latents.py).

    A search makes them only for the few files it needs them for, so a part's rows appear
    the first time a question comes near it; keyed like `vectors` (path, model, chunk), with
    `piece` for each paragraph of the part, and current while text_digest is the part's
    digest. `terms`: a paragraph's strongest latent features, little-endian uint16 indexes
    then float16 weights. Derived like everything
    here: a rebuild starts the table empty and searches fill it again.
    """
    db.execute(
        """
        CREATE TABLE IF NOT EXISTS latents (
            path TEXT NOT NULL,
            model TEXT NOT NULL,
            chunk INTEGER NOT NULL,
            piece INTEGER NOT NULL,
            text_digest TEXT NOT NULL,
            terms BLOB NOT NULL,
            PRIMARY KEY (path, model, chunk, piece)
        )
        """
    )


@migrations()
def m014_context(db: Database) -> None:
    """What an excerpt replied to (a `context:` line), embedded as a part of its own
    (memstore/meaning/chunking.py).

    - files.context: the line as sync read it, one line; NULL without one. Never indexed for
      words, never shown: it only makes the context part's vector.
    - files.context_digest: the digest of the context part's text (the context, then the head),
      what its vector (chunk -1 in `vectors`) is kept under; NULL without a context or text.

    Existing rows get both computed here from the frontmatter the mirror holds (files.meta).
    """
    from memstore.meaning.chunking import context_digest, full_text, one_line, readable

    db.execute("ALTER TABLE files ADD COLUMN context TEXT")
    db.execute("ALTER TABLE files ADD COLUMN context_digest TEXT")
    rows = db.execute(
        "SELECT f.id, json_extract(f.meta, '$.context'), f.summary, f.description, t.body "
        "FROM files f JOIN files_fts t ON t.rowid = f.id "
        "WHERE json_type(f.meta, '$.context') IN ('text', 'integer', 'real')"
    ).fetchall()
    updates = []
    for id_, value, summary, description, body in rows:
        context = one_line(str(value)) or None
        # as chunking.plan decides files.parts
        has_parts = readable(full_text(summary, description, body))
        digest = context_digest(context, summary, description, body) if has_parts else None
        updates.append((context, digest, id_))
    db.conn.executemany("UPDATE files SET context = ?, context_digest = ? WHERE id = ?", updates)


@migrations()
def m015_stepping_aside(db: Database) -> None:
    """What makes a file step aside (memstore/mirror/stepping_aside.py), in columns with indexes,
    so a search finds the few such files by three index lookups rather than reading every row's
    frontmatter.

    - files.aside: 1 when the status starts with superseded or forgotten (in any case), or the
      frontmatter has a deleted_from (memstore.mirror.deletions); else 0.
    - files.valid_from, files.valid_until: the frontmatter's date as YYYY-MM-DD when its first ten
      characters are one, else NULL (a comparison with NULL is false, as for no date).

    Sync writes them with every row (indexing.write_rows, from the row's status and meta); existing
    rows get them here from the same two columns, by the same rule in SQL.
    """
    day = ("CASE WHEN substr(CAST(json_extract(meta, '$.{key}') AS TEXT), 1, 10) GLOB "
           "'[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]' "
           "THEN substr(CAST(json_extract(meta, '$.{key}') AS TEXT), 1, 10) END")
    have = {row[1] for row in db.execute("PRAGMA table_info(files)").fetchall()}
    for column, kind in (("aside", "INTEGER NOT NULL DEFAULT 0"), ("valid_from", "TEXT"),
                         ("valid_until", "TEXT")):
        if column not in have:  # kept when there (a mirror a test took back by hand, as m012)
            db.execute(f"ALTER TABLE files ADD COLUMN {column} {kind}")
    db.execute(
        "UPDATE files SET aside = (lower(trim(coalesce(status, ''), char(32, 9, 10, 13, 11, 12))) "
        "LIKE 'superseded%' "
        "OR lower(trim(coalesce(status, ''), char(32, 9, 10, 13, 11, 12))) LIKE 'forgotten%' "
        "OR json_extract(meta, '$.deleted_from') IS NOT NULL), "
        f"valid_from = {day.format(key='valid_from')}, "
        f"valid_until = {day.format(key='valid_until')}"
    )
    for column, where in (("aside", "aside = 1"), ("valid_from", "valid_from IS NOT NULL"),
                          ("valid_until", "valid_until IS NOT NULL")):
        db.execute(f"CREATE INDEX IF NOT EXISTS files_{column} ON files({column}) WHERE {where}")


@migrations()
def m016_list_items(db: Database) -> None:
    """A short file that lists separate facts gets a part for each item (memstore/meaning/
    chunking.py, line_parts). Existing rows get parts and tail_digest again from the text they
    hold; only those short list files change, and only their new parts are embedded."""
    from memstore.meaning.chunking import plan

    rows = db.execute(
        "SELECT f.id, f.summary, f.description, t.body, f.parts, f.tail_digest FROM files f "
        "JOIN files_fts t ON t.rowid = f.id"
    ).fetchall()
    changed = [(*planned, id_) for id_, summary, description, body, parts, tail in rows
               if (planned := plan(summary, description, body)) != (parts, tail)]
    db.conn.executemany("UPDATE files SET parts = ?, tail_digest = ? WHERE id = ?", changed)


def names() -> list[str]:
    """Names of every migration this version knows, in order."""
    return [m.name for m in migrations.pending(Database(memory=True))]
