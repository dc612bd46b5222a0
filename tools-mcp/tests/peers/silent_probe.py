"""A stdio MCP server of the 2025-11-25 generation that never answers `server/discover`: it
reads the probe and says nothing, as some servers of that generation do. Plain JSON-RPC, no SDK.

Its one tool, `seen`, returns the methods this process received, in order (so a test can tell
whether the probe and the handshake reached the same process).
"""

import json
import sys

seen = []


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request, result):
    send({"jsonrpc": "2.0", "id": request["id"], "result": result})


while True:
    line = sys.stdin.readline()
    if not line:
        break
    if not line.strip():
        continue
    message = json.loads(line)
    method = message.get("method")
    seen.append(method if method is not None else "(answer)")
    if method == "server/discover" or "id" not in message:
        continue
    if method == "initialize":
        answer(
            message,
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "silent-probe", "version": "1"},
            },
        )
    elif method == "tools/list":
        answer(
            message,
            {
                "tools": [
                    {
                        "name": "seen",
                        "description": "The methods this process received, in order.",
                        "inputSchema": {"type": "object", "properties": {}},
                    }
                ]
            },
        )
    elif method == "tools/call":
        answer(message, {"content": [{"type": "text", "text": json.dumps(seen)}]})
    elif method == "ping":
        answer(message, {})
    else:
        send(
            {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {"code": -32601, "message": f"no method {method}"},
            }
        )
