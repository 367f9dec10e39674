"""The console script of earlier releases (`memstore = memstore.entry:main`), kept so a `memstore`
script that pip wrote before the layers moved (an editable clone after a `git pull`) still runs."""

from memstore.frontends.entry import main

__all__ = ["main"]
