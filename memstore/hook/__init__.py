"""The hook: what runs inside the agent's session, in the standard library alone.

The handler the client's hooks call (handler), the gate that spares a tool call a Python
start (gate), the path and shell-command judgements (paths, shellcmd, shellpaths,
shellreads), the client adapters (clients/), the SessionStart order (session_start) and the
cold-start bundle with what it shows: pending review, accepted proposals, memories deleted
outside memstore (bundle, review, rulecue, proposal_notes, deleted_copies).

May import: core and the standard library. Nothing third-party (the `forbidden` contract),
and nothing of the mirror, meaning, the memory's life, wiring, the API or the front ends.
"""
