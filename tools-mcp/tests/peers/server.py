"""A Python `mcp` MCPServer for tools-mcp's import tests.

Usage: server.py stdio | server.py http   (http prints `port N` on stdout, then serves /mcp)

Tools: `greet` (text), `forecast` (structured output from a pydantic model with a nested
model, so its schemas use `$defs`/`$ref`), `fail` (raises: an isError result), `grow`
(adds the tool `grown` and publishes tools list_changed), and `jumpy` (reports progress out of
order, and for a token no call has).
"""

import socket
import sys

from pydantic import BaseModel, Field

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("python-peer")


class Wind(BaseModel):
    speed: float = Field(ge=0)
    direction: str


class Forecast(BaseModel):
    city: str
    temperature: float
    wind: Wind


@server.tool()
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"


@server.tool()
def forecast(city: str, days: int = Field(default=1, ge=1, le=7)) -> Forecast:
    """A made-up forecast for a city."""
    return Forecast(city=city, temperature=21.5, wind=Wind(speed=3.0, direction="NW"))


@server.tool()
def fail(reason: str) -> str:
    """Always fails, saying why."""
    raise ToolError(f"failed on purpose: {reason}")


def grown() -> str:
    """A tool added at run time."""
    return "grown"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool `grown` and announce it."""
    server.add_tool(grown)
    await ctx.notify_tools_changed()
    try:
        await ctx.request_context.session.send_tool_list_changed()
    except Exception:
        pass
    return "ok"


@server.tool()
async def jumpy(ctx: Context) -> str:
    """Report progress badly: for a token nobody sent, then 1, 1 again, 0.5, 2 (of 4)."""
    session = ctx.request_context.session
    await session.send_progress_notification(
        "nobody-has-this-token", 3, 4, "not yours", related_request_id=ctx.request_id
    )
    await ctx.report_progress(1, 4, "one")
    await ctx.report_progress(1, 4, "one again")
    await ctx.report_progress(0.5, 4, "back")
    await ctx.report_progress(2, 4, "two")
    return "jumped"


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        print(f"port {port}", flush=True)
        server.run("streamable-http", host="127.0.0.1", port=port, stateless_http=False)
