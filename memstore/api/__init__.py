"""The API: `Store`, the one object a front end holds. Its methods are short calls into
the layers below, each handed what it needs (paths, config, a connection, the clock).

May import: every layer below (life, wiring, mirror, meaning, hook, core). Not the front ends.
"""
