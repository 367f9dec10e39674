"""memstore: a coding agent's memory kept as markdown files, mirrored into SQLite.

Nothing is imported here on purpose: `memstore hook` runs on every Read in every
session, and its path must load only the standard library.
"""

__version__ = "0.1.0"
