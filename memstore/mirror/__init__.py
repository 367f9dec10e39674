"""The mirror: the markdown files read into SQLite, and everything derived from it.

Parsing and frontmatter edits, the database and its migrations (db), sync from the files,
FTS5 search and the hybrid fusion with vectors, the bands and MEMORY.md (render), the flush
of policy state back into frontmatter, views over the mirror (list, show, status, lint),
adoption of new files, deleted memories' copies, stepping aside and stale references. Small
shared pieces sit below those so that nothing imports in a circle: the walk of the root
(walking) and the one listing a command hands down (changes), a file found by name (lookup), a
memory's MEMORY.md row (index_rows), a bug's id (bug_ids).

May import: meaning, hook, core. Never the memory's life, wiring, the API or front ends.
"""
