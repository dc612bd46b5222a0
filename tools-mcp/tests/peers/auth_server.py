"""A small OAuth 2.1 authorization server for tools-mcp's bearer tests: client_credentials only,
RS256 JWT access tokens (RFC 9068) for the `resource` a client asks for (RFC 8707), its RFC 8414
metadata and its JWKS. Built on what PyPI's `mcp` already installs (starlette, uvicorn, PyJWT,
cryptography): a kept package's parts, no authorization server product to install.

Usage: auth_server.py CLIENTS_JSON LOG
  CLIENTS_JSON: {"<client_id>": {"secret": "...", "scopes": ["mcp", ...]}, ...}
  LOG: a file each grant is appended to as one JSON line (client, scope, resource).

Prints one JSON line once listening: {"issuer": ..., "jwks_uri": ...}.
"""

import asyncio
import base64
import json
import socket
import sys
import time
import uuid
from urllib.parse import parse_qs, unquote_plus

import jwt
import uvicorn
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

CLIENTS = json.loads(sys.argv[1])
LOG = sys.argv[2]
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
JWK = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(KEY.public_key()))
JWK.update(kid="as-key-1", alg="RS256", use="sig")

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.bind(("127.0.0.1", 0))
ISSUER = f"http://127.0.0.1:{sock.getsockname()[1]}"


async def metadata(_: Request) -> JSONResponse:
    return JSONResponse(
        {
            "issuer": ISSUER,
            # RFC 8414 requires it (and the SDK's model does); this server grants no codes.
            "authorization_endpoint": f"{ISSUER}/authorize",
            "token_endpoint": f"{ISSUER}/token",
            "jwks_uri": f"{ISSUER}/jwks",
            "grant_types_supported": ["client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
            "response_types_supported": ["code"],
            "scopes_supported": sorted({s for c in CLIENTS.values() for s in c["scopes"]}),
        }
    )


async def jwks(_: Request) -> JSONResponse:
    return JSONResponse({"keys": [JWK]})


def error(code: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": code}, status_code=status)


async def token(request: Request) -> JSONResponse:
    form = {k: v[0] for k, v in parse_qs((await request.body()).decode()).items()}
    auth = request.headers.get("authorization", "")
    if not auth.lower().startswith("basic "):
        return error("invalid_client", 401)
    client_id, _, secret = base64.b64decode(auth[6:]).decode().partition(":")
    client_id, secret = unquote_plus(client_id), unquote_plus(secret)
    client = CLIENTS.get(client_id)
    if client is None or client["secret"] != secret:
        return error("invalid_client", 401)
    if form.get("grant_type") != "client_credentials":
        return error("unsupported_grant_type")
    resource = form.get("resource")
    if not resource:
        return error("invalid_target")
    asked = form.get("scope", "").split() or ["mcp"]
    if any(s not in client["scopes"] for s in asked):
        return error("invalid_scope")
    now = int(time.time())
    claims = {
        "iss": ISSUER,
        "sub": client_id,
        "client_id": client_id,
        "aud": resource,
        "scope": " ".join(asked),
        "iat": now,
        "exp": now + 300,
        "jti": str(uuid.uuid4()),
    }
    access = jwt.encode(claims, KEY, algorithm="RS256", headers={"kid": "as-key-1", "typ": "at+jwt"})
    with open(LOG, "a") as log:
        log.write(json.dumps({"client": client_id, "scope": claims["scope"], "resource": resource}) + "\n")
    return JSONResponse(
        {"access_token": access, "token_type": "Bearer", "expires_in": 300, "scope": claims["scope"]}
    )


app = Starlette(
    routes=[
        Route("/.well-known/oauth-authorization-server", metadata),
        Route("/.well-known/openid-configuration", metadata),
        Route("/jwks", jwks),
        Route("/token", token, methods=["POST"]),
    ]
)


async def main() -> None:
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    print(json.dumps({"issuer": ISSUER, "jwks_uri": f"{ISSUER}/jwks"}), flush=True)
    await server.serve(sockets=[sock])


asyncio.run(main())
