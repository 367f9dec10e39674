"""The hook's adapters for clients other than Claude Code. Standard library only (the hook's path).

memstore.hook speaks Claude Code's payloads. A client adapter turns its client's payload
into one or more of those (`canonical`) and the hook's answers back into what its client
understands (`answer`): the payload shapes are the client's, the logic is the one hook's.
"""

CLIENTS = ("claude", "codex", "gemini")
