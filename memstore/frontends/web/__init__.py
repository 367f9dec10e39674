"""`memstore serve`: a local, read-only web page over the memory (the `serve` extra).

inspector.py reads the mirror (read-only), history.py replays and draws a memory's score
over time, app.py is the Starlette application, and templates/ and static/ its pages.
"""
