"""Driving `memstore mcp` as a client does: the MCP SDK's own client over a real subprocess."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.helpers import NOW

# what the server offers
TOOLS = {"search", "read", "note", "new_memory", "bug_add", "bug_list", "bug_close"}


def server_params(root: Path, env: dict[str, str] | None = None) -> StdioServerParameters:
    full = {"MEMSTORE_NOW": NOW, **(env or {})}
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "memstore", "--root", str(root), "mcp"], env=full)


def with_session(
        root: Path, body: Callable[[ClientSession], Awaitable[Any]],
        env: dict[str, str] | None = None) -> Any:
    async def main() -> Any:
        async with (stdio_client(server_params(root, env)) as (read, write_),
                    ClientSession(read, write_) as session):
            await session.initialize()
            return await body(session)

    return asyncio.run(main())


def is_error(result: Any) -> bool:
    return bool(getattr(result, "is_error", None) or getattr(result, "isError", None))


def text(result: Any) -> str:
    return "".join(getattr(item, "text", "") for item in result.content)


def payload(result: Any) -> Any:
    assert not is_error(result), text(result)
    structured = (getattr(result, "structured_content", None)
                  or getattr(result, "structuredContent", None))
    if structured is not None:
        return structured.get("result", structured) if set(structured) == {"result"} else structured
    return json.loads(text(result))
