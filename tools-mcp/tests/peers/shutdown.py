"""A small stdio MCP server (2025-11-25; `ping` answers `pong`, `refuse` is answered with a
JSON-RPC error, code -32001) that shows how it was stopped, for the import's shutdown tests.
Plain Python, no packages.

    shutdown.py MODE FILE

MODE says what it does when its stdin closes and when it gets SIGTERM; FILE receives a line for
each:

- `eof`: exits when its stdin closes, writing `eof`.
- `term`: goes on when its stdin closes (writing `stdin closed`); on SIGTERM writes `term` and
  exits.
- `stubborn`: goes on when its stdin closes (writing `stdin closed`) and on SIGTERM (writing
  `sigterm ignored`): only SIGKILL ends it.
"""

import json
import os
import signal
import sys
import time

mode, path = sys.argv[1], sys.argv[2]


def note(line):
    with open(path, "a") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


def on_term(_signum, _frame):
    if mode == "term":
        note("term")
        os._exit(0)
    note("sigterm ignored")


signal.signal(signal.SIGTERM, on_term)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(message):
    method = message.get("method")
    if "id" not in message or method is None:
        return
    rid = message["id"]
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "shutdown", "version": "0"},
        }})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [{
            "name": "ping",
            "description": "Answers pong.",
            "inputSchema": {"type": "object"},
        }, {
            "name": "refuse",
            "description": "Is refused with a JSON-RPC error.",
            "inputSchema": {"type": "object"},
        }]}})
    elif method == "tools/call" and message.get("params", {}).get("name") == "refuse":
        send({"jsonrpc": "2.0", "id": rid,
              "error": {"code": -32001, "message": "refused on purpose"}})
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "id": rid,
              "result": {"content": [{"type": "text", "text": "pong"}]}})
    else:
        send({"jsonrpc": "2.0", "id": rid,
              "error": {"code": -32601, "message": "method not found"}})


note("started")
for line in sys.stdin:
    line = line.strip()
    if line:
        answer(json.loads(line))

if mode == "eof":
    note("eof")
    sys.exit(0)
note("stdin closed")
while True:
    time.sleep(0.05)
