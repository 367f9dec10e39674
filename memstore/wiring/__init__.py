"""Wiring: how memstore is connected to the agents' clients and to the machine. Install
for Claude Code, Codex CLI and Gemini CLI, MCP registration, the protection rules, cron,
the record of what install created, verify and audit. What every installer shares (how
memstore is run, settings files, the plan of changes) is in install_base, and where things go
for a scope (Layout) in layout: both below the installers, so no installer imports another's.

May import: mirror, meaning, hook, core. Not the memory's life (a sibling), the API or the
front ends.
"""
