"""The memory's life: what happens to memories over days. Capture (notes, lessons, the
debrief), ledgers (notes, lessons, bugs), review at the person's terminal (reviewing, and
the provenance an answer records), the nightly tick (nightly; its window rolling, cue and
commits) and the wake with its dream (wake, dreaming), duplicates, meditation, the last-run
record and the scaffold of a new root.

Each step is handed plain values (the root, the config, the clock, a connection, the
command's listing of the root), never the Store; the order of a flow is memstore.api.flows'.

May import: mirror, meaning, hook, core. Not wiring (a sibling), the API or front ends.
"""
