"""A team's memory: shared lessons in a git repository, mounted under <root>/teams/<name>/.

This layer joins, pulls and leaves team clones (clones), proposes a person's memory to a team on a
branch of its own (sharing), reads who added a team memory and when from the team's git log
(history), and finds secrets in memory text before it travels (secrets). It sits above the mirror
(it may hand files to sync, never write the mirror's tables itself) and below life and wiring,
which may use it; it never imports the Store. Team files are the team's authored text only:
nothing here, or anywhere in memstore, rewrites them (memstore.core.teams says where they are,
memstore.core.locks refuses a write into a clone).
"""
