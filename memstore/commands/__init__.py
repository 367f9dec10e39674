"""The CLI's commands, one module per concern. Each attaches its commands to `memstore.cli.cli`;
memstore.cli imports them all."""
