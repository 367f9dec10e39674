"""The CLI's commands, one module per concern. Each attaches its commands to
`memstore.frontends.cligroup.cli`; memstore.frontends.cli imports them all."""
