"""The official Python MCP client against `tools-mcp serve`, for tools-mcp's tests of limits and
cancellation.

Usage: limits_client.py (legacy|auto) (--stdio CMD... | --http URL) -- ACTION [ARG]

Actions (each prints one JSON object):
- `oversized BYTES`: calls `echo` with a message of BYTES bytes, then `echo` with `after`;
  prints what each gave (`error` with code and message, or `text`; `hang` when the first got no
  answer within a minute).
- `padded BYTES`: calls `add` with an extra argument of BYTES bytes, which it ignores, so the
  answer is small whatever the request's size; prints what it gave (`error` or `text`).
- `cancel`: calls `wait` for 30 s and gives up after half a second (the client sends
  `notifications/cancelled` and keeps its connection), then asks `stats` until the server
  counts a cancelled wait or ten seconds pass; prints that count.
"""

import json
import sys
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError


def text_of(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def call(client: Client, name: str, args: dict) -> dict:
    try:
        r = await client.call_tool(name, args)
        return {"text": text_of(r), "is_error": bool(r.is_error)}
    except MCPError as e:
        return {"error": {"code": e.error.code, "message": e.error.message}}


async def main() -> None:
    mode = sys.argv[1]
    split = sys.argv.index("--")
    target, action = sys.argv[2:split], sys.argv[split + 1 :]
    if target[0] == "--stdio":
        server: Any = StdioServerParameters(command=target[1], args=target[2:])
    else:
        server = target[1]
    out: dict[str, Any] = {}
    async with Client(server, mode=mode) as client:
        if action[0] == "oversized":
            out["first"] = {"hang": True}
            with anyio.move_on_after(60):
                out["first"] = await call(client, "echo", {"message": "x" * int(action[1])})
            out["after"] = await call(client, "echo", {"message": "after"})
        elif action[0] == "padded":
            args = {"a": 2, "b": 3, "padding": "x" * int(action[1])}
            out["first"] = await call(client, "add", args)
        elif action[0] == "cancel":
            with anyio.move_on_after(0.5):
                await client.call_tool("wait", {"ms": 30000})
            cancelled = 0
            with anyio.move_on_after(10):
                while cancelled == 0:
                    r = await client.call_tool("stats", {})
                    cancelled = (r.structured_content or {}).get("cancelled", 0)
                    if cancelled == 0:
                        await anyio.sleep(0.05)
            out["cancelled"] = cancelled
    print(json.dumps(out))


anyio.run(main)
