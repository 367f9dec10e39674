"""The front ends: the command line (cli gathers commands/, which attach to cligroup's group), the
MCP server, the web inspector (web/), the file watcher and the terminal's prompts. Each turns a
person's or a client's request into Store calls and the project's errors into one clean line.

May import: the API and anything below it. Nothing imports a front end but another front
end (and the console-script entry point).
"""
