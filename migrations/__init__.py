"""The mirror's schema, as sqlite-utils migrations (installed as memstore.migrations).

The mirror is derived: a database whose applied migrations are not a prefix of this
list (a newer or foreign schema) is rebuilt from the files rather than migrated.
A new migration is appended here, never edited in place once released.
"""

from __future__ import annotations

from sqlite_utils import Database, Migrations

migrations = Migrations("memstore")


@migrations()
def m001_files_and_search(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE files (
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,        -- relative to the root, posix separators
            kind TEXT NOT NULL,               -- t2, short-term, dream, bug, lens, meditation, identity, derived, other
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
            fm_access_count INTEGER,          -- policy values as written in the file (NULL: absent or invalid)
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


def names() -> list[str]:
    """Names of every migration this version knows, in order."""
    return [m.name for m in migrations.pending(Database(memory=True))]
