"""The official Python MCP client with its OAuth support (`mcp.client.auth`, the
client_credentials provider) against a bearer-protected `McpServer`, for tools-mcp's tests: it
is refused (401), discovers the protected resource metadata and the authorization server, gets a
token for the resource, lists the tools and calls one (a 403 insufficient_scope makes it ask for
the scope named and retry: the step-up).

Usage: oauth_client.py URL ISSUER CLIENT_ID SECRET SCOPE TOOL

Prints one JSON object: the sorted tool names and the call's structured result (or its error).
"""

import json
import sys
import warnings
from typing import Any

import anyio
from mcp import Client
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


class Memory:
    def __init__(self) -> None:
        self.tokens: Any = None
        self.info: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.info

    async def set_client_info(self, info: Any) -> None:
        self.info = info


async def main() -> None:
    url, issuer, client_id, secret, scope, tool = sys.argv[1:7]
    warnings.simplefilter("ignore")
    provider = ClientCredentialsOAuthProvider(
        server_url=url,
        storage=Memory(),
        client_id=client_id,
        client_secret=secret,
        scope=scope,
        issuer=issuer,
    )
    out: dict[str, Any] = {}
    async with create_mcp_http_client(auth=provider) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            listed = await client.list_tools()
            out["tools"] = sorted(t.name for t in listed.tools)
            try:
                result = await client.call_tool(tool, {})
                out["call"] = result.structured_content
                out["is_error"] = bool(result.is_error)
            except Exception as e:  # noqa: BLE001
                out["error"] = str(e)
    print(json.dumps(out))


anyio.run(main)
