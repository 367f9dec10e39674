"""`python -m memstore` is the same as the `memstore` command."""

from memstore.frontends.entry import main

main()
