"""The official Python MCP client calling `tools-mcp serve`'s `count` with a progress callback,
for tools-mcp's tests.

Usage: progress_client.py (legacy|auto) (--stdio CMD... | --http URL)

Prints one JSON object: the protocol, the progress the callback received for `count` to 5
(`[progress, total, message]` each, in the order the callback ran) and that call's result, and
the result of a call of `count` made without a callback.
"""

import json
import sys
from typing import Any

import anyio
from mcp import Client, StdioServerParameters


async def main() -> None:
    mode = sys.argv[1]
    if sys.argv[2] == "--stdio":
        server: Any = StdioServerParameters(command=sys.argv[3], args=sys.argv[4:])
    else:
        server = sys.argv[3]
    out: dict[str, Any] = {}
    received: list[list[Any]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        received.append([progress, total, message])

    async with Client(server, mode=mode) as client:
        out["protocol"] = client.protocol_version
        r = await client.call_tool("count", {"to": 5, "ms": 5}, progress_callback=on_progress)
        out["result"] = r.structured_content
        out["is_error"] = bool(r.is_error)
        # The SDK runs each callback in a task of its own: give the last ones their turn.
        with anyio.move_on_after(5):
            while len(received) < 5:
                await anyio.sleep(0.01)
        out["progress"] = received
        r = await client.call_tool("count", {"to": 3, "ms": 0})
        out["without_callback"] = r.structured_content
    print(json.dumps(out))


anyio.run(main)
