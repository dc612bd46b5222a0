"""A Python `mcp` MCPServer for tools-mcp's tests of limits, timeouts and the handshake.

Usage: limits_server.py stdio | limits_server.py http | limits_server.py http-json   (http prints
`port N` on stdout, then serves /mcp, answering each request with an SSE stream; http-json the
same with a plain JSON body)

Tools: `blob` (a text of `size` bytes, as content and as structured content, so the answer is
about twice that), `sleep` (sleeps `seconds`, counting the sleeps that were cancelled),
`cancelled` (that count), `steady` (reports progress every `every` seconds for `seconds`,
counting cancellations too), `quiet` (reports once, then sleeps `seconds`, counted the same way)
and `client_version` (the protocol version the client asked for in its
`initialize` request, or `none` without one).
"""

import socket
import sys

import anyio

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("limits-peer")
CANCELLED = 0


@server.tool()
def blob(size: int) -> str:
    """A text of `size` bytes."""
    return "x" * size


@server.tool()
async def sleep(seconds: float) -> str:
    """Sleep, then say so."""
    global CANCELLED
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        CANCELLED += 1
        raise
    return "slept"


@server.tool()
async def steady(seconds: float, every: float, ctx: Context) -> str:
    """Report progress every `every` seconds for `seconds`."""
    global CANCELLED
    steps = max(1, int(seconds / every))
    try:
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
            await anyio.sleep(every)
    except anyio.get_cancelled_exc_class():
        CANCELLED += 1
        raise
    return f"steady for {steps} steps"


@server.tool()
async def quiet(seconds: float, ctx: Context) -> str:
    """Report progress once, then sleep."""
    global CANCELLED
    try:
        await ctx.report_progress(1, 2, "started")
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        CANCELLED += 1
        raise
    return "woke"


@server.tool()
def cancelled() -> int:
    """How many sleeps were cancelled."""
    return CANCELLED


@server.tool()
def client_version(ctx: Context) -> str:
    """The protocol version the client asked for in `initialize`."""
    params = ctx.session.client_params
    return params.protocol_version if params is not None else "none"


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        print(f"port {port}", flush=True)
        server.run(
            "streamable-http",
            host="127.0.0.1",
            port=port,
            stateless_http=False,
            json_response=sys.argv[1] == "http-json",
        )
