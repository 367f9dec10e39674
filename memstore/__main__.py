"""`python -m memstore` is the same as the `memstore` command."""

from memstore.entry import main

main()
