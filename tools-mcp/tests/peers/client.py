"""The official Python MCP client against `tools-mcp serve`, for tools-mcp's tests.

Usage: client.py (legacy|auto) (--stdio CMD... | --http URL)

Prints one JSON object with what it saw: the listed tools, a call, a structured call, a denied
call, invalid arguments, an unknown tool, a cancelled call (and the server's count of cancelled
calls afterwards) and whether `list_changed` arrived after a registration.
"""

import json
import sys
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError


def text_of(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def is_list_changed(message: Any) -> bool:
    for candidate in (message, getattr(message, "root", None)):
        if candidate is not None and getattr(candidate, "method", None) == "notifications/tools/list_changed":
            return True
    return False


async def main() -> None:
    mode = sys.argv[1]
    if sys.argv[2] == "--stdio":
        server: Any = StdioServerParameters(command=sys.argv[3], args=sys.argv[4:])
    else:
        server = sys.argv[3]
    out: dict[str, Any] = {}
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if is_list_changed(message):
            changed.set()

    async with Client(server, mode=mode, message_handler=on_message) as client:
        out["protocol"] = client.protocol_version
        tools = await client.list_tools()
        out["tools"] = sorted(t.name for t in tools.tools)
        add = next(t for t in tools.tools if t.name == "add")
        out["add_output_schema"] = add.output_schema
        out["add_title"] = add.title
        out["add_annotations"] = (
            add.annotations.model_dump(by_alias=True, exclude_none=True) if add.annotations else None
        )
        echo = next(t for t in tools.tools if t.name == "echo")
        out["echo_annotations"] = echo.annotations

        r = await client.call_tool("echo", {"message": "hi"})
        out["echo"] = {"text": text_of(r), "is_error": bool(r.is_error)}
        r = await client.call_tool("add", {"a": 2, "b": 3})
        out["add"] = {"structured": r.structured_content, "is_error": bool(r.is_error)}
        r = await client.call_tool("echo", {"message": "forbidden"})
        out["denied"] = {"text": text_of(r), "is_error": bool(r.is_error)}
        r = await client.call_tool("add", {"a": "two", "b": 3})
        out["invalid"] = {"text": text_of(r), "is_error": bool(r.is_error)}
        try:
            await client.call_tool("no_such_tool", {})
            out["unknown"] = {"error": None}
        except MCPError as e:
            out["unknown"] = {"code": e.error.code, "message": e.error.message}

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

        if mode == "legacy":
            await client.call_tool("enable_extra", {})
            with anyio.move_on_after(10):
                await changed.wait()
            out["list_changed"] = changed.is_set()
        else:
            got = anyio.Event()
            async with anyio.create_task_group() as tg:

                async def listen() -> None:
                    async with client.listen(tools_list_changed=True) as sub:
                        await client.call_tool("enable_extra", {})
                        async for _event in sub:
                            got.set()
                            break

                tg.start_soon(listen)
                with anyio.move_on_after(10):
                    await got.wait()
                tg.cancel_scope.cancel()
            out["list_changed"] = got.is_set()
        tools = await client.list_tools()
        out["tools_after"] = sorted(t.name for t in tools.tools)
    print(json.dumps(out))


anyio.run(main)
