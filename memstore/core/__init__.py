"""The ground floor: what every other layer stands on, in the standard library alone.

The root's layout and where machine state lives (agent_root), the kinds of file, the
configuration, the clock (timeutil), locks and atomic writes, SQLite transactions, the
journal of reinforcement events, the policy arithmetic, inert text (what memory text may
become in the agent's context), projects, lenses, the tamper hold and the error types.

May import: the standard library and other modules of core. Nothing above it. The hook
runs on every tool call and imports these modules, so a third-party import here would put
a heavy start-up on every Read (held by the `forbidden` contract in setup.cfg).
"""
