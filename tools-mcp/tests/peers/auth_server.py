"""A small OAuth 2.1 authorization server for tools-mcp's bearer and OAuth import tests:
client_credentials for confidential clients; for public clients (`"public": true`) the
authorization code with PKCE S256 (the authorization endpoint redirects at once, as if the person
had consented) and the refresh_token grant (refresh tokens rotate). RS256 JWT access tokens
(RFC 9068) for the `resource` a client asks for (RFC 8707), its RFC 8414 metadata and its JWKS. Built on what PyPI's `mcp` already installs (starlette, uvicorn, PyJWT,
cryptography): a kept package's parts, no authorization server product to install.

Usage: auth_server.py CLIENTS_JSON LOG [ACCESS_TOKEN_SECONDS]
  CLIENTS_JSON: {"<client_id>": {"secret": "...", "scopes": ["mcp", ...]}, ...}, a public client
    {"<client_id>": {"public": true, "scopes": [...], "redirect_uris": [...]}}, a client that
    authenticates with private_key_jwt {"<client_id>": {"public_key": "<PEM>", "scopes": [...]}}
    (its assertion: signed by the key, iss = sub = the client id, aud = the issuer, exp, jti)
  LOG: a file each grant is appended to as one JSON line (grant, client, scope, resource), and
    each authorization request (grant "authorize").
  ACCESS_TOKEN_SECONDS: the access tokens' lifetime (300 by default).

Prints one JSON line once listening: {"issuer": ..., "jwks_uri": ...}.
"""

import asyncio
import base64
import hashlib
import json
import secrets
import socket
import sys
import time
import uuid
from urllib.parse import parse_qs, unquote_plus, urlencode

import jwt
import uvicorn
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse
from starlette.routing import Route

CLIENTS = json.loads(sys.argv[1])
LOG = sys.argv[2]
TTL = int(sys.argv[3]) if len(sys.argv) > 3 else 300
PUBLIC = any(c.get("public") for c in CLIENTS.values())
KEYED = any(c.get("public_key") for c in CLIENTS.values())
JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
# Codes and refresh tokens given out, and what each was given for.
CODES: dict = {}
REFRESH: dict = {}
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
JWK = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(KEY.public_key()))
JWK.update(kid="as-key-1", alg="RS256", use="sig")

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.bind(("127.0.0.1", 0))
ISSUER = f"http://127.0.0.1:{sock.getsockname()[1]}"


async def metadata(_: Request) -> JSONResponse:
    document = {
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
    if KEYED:
        document["token_endpoint_auth_methods_supported"] += ["private_key_jwt"]
        document["token_endpoint_auth_signing_alg_values_supported"] = ["RS256", "ES256"]
    if PUBLIC:
        document["grant_types_supported"] += ["authorization_code", "refresh_token"]
        document["token_endpoint_auth_methods_supported"] += ["none"]
        document["code_challenge_methods_supported"] = ["S256"]
    return JSONResponse(document)


def log(entry: dict) -> None:
    with open(LOG, "a") as f:
        f.write(json.dumps(entry) + "\n")


async def authorize(request: Request):
    q = request.query_params
    client_id = q.get("client_id", "")
    client = CLIENTS.get(client_id)
    redirect_uri = q.get("redirect_uri", "")
    if client is None or not client.get("public"):
        return error("unauthorized_client")
    if redirect_uri not in client.get("redirect_uris", [redirect_uri]):
        return error("invalid_request")
    if q.get("response_type") != "code" or q.get("code_challenge_method") != "S256":
        return error("invalid_request")
    if not q.get("code_challenge") or not q.get("resource"):
        return error("invalid_request")
    code = secrets.token_urlsafe(24)
    CODES[code] = {
        "client": client_id,
        "redirect_uri": redirect_uri,
        "challenge": q["code_challenge"],
        "resource": q["resource"],
        "scope": q.get("scope", ""),
    }
    log({"grant": "authorize", "client": client_id, "scope": q.get("scope", ""), "resource": q["resource"]})
    target = redirect_uri + "?" + urlencode({"code": code, "state": q.get("state", ""), "iss": ISSUER})
    return RedirectResponse(target, status_code=302)


def scopes_of(client: dict, asked: str):
    """The scopes asked for (offline_access is implied by a refresh token), or None."""
    asked = [s for s in asked.split() if s != "offline_access"] or ["mcp"]
    return asked if all(s in client["scopes"] for s in asked) else None


def issue(grant: str, client_id: str, scope: list, resource: str, refresh: bool) -> JSONResponse:
    now = int(time.time())
    claims = {
        "iss": ISSUER,
        "sub": client_id,
        "client_id": client_id,
        "aud": resource,
        "scope": " ".join(scope),
        "iat": now,
        "exp": now + TTL,
        "jti": str(uuid.uuid4()),
    }
    access = jwt.encode(claims, KEY, algorithm="RS256", headers={"kid": "as-key-1", "typ": "at+jwt"})
    log({"grant": grant, "client": client_id, "scope": claims["scope"], "resource": resource})
    answer = {"access_token": access, "token_type": "Bearer", "expires_in": TTL, "scope": claims["scope"]}
    if refresh:
        token = secrets.token_urlsafe(32)
        REFRESH[token] = {"client": client_id, "scope": scope, "resource": resource}
        answer["refresh_token"] = token
    return JSONResponse(answer)


async def public_token(form: dict, client_id: str, client: dict) -> JSONResponse:
    grant = form.get("grant_type")
    if grant == "authorization_code":
        given = CODES.pop(form.get("code", ""), None)
        if given is None or given["client"] != client_id:
            return error("invalid_grant")
        if form.get("redirect_uri") != given["redirect_uri"]:
            return error("invalid_grant")
        verifier = form.get("code_verifier", "")
        digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
        if digest.decode() != given["challenge"]:
            return error("invalid_grant")
        if form.get("resource", given["resource"]) != given["resource"]:
            return error("invalid_target")
        scope = scopes_of(client, given["scope"])
        if scope is None:
            return error("invalid_scope")
        return issue(grant, client_id, scope, given["resource"], True)
    if grant == "refresh_token":
        given = REFRESH.pop(form.get("refresh_token", ""), None)
        if given is None or given["client"] != client_id:
            return error("invalid_grant")
        return issue(grant, client_id, given["scope"], given["resource"], True)
    return error("unsupported_grant_type")


async def jwks(_: Request) -> JSONResponse:
    return JSONResponse({"keys": [JWK]})


def error(code: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": code}, status_code=status)


async def token(request: Request) -> JSONResponse:
    form = {k: v[0] for k, v in parse_qs((await request.body()).decode()).items()}
    public = CLIENTS.get(form.get("client_id", ""))
    if public is not None and public.get("public"):
        return await public_token(form, form["client_id"], public)
    if form.get("client_assertion_type") == JWT_BEARER:
        return assertion_token(form)
    auth = request.headers.get("authorization", "")
    if not auth.lower().startswith("basic "):
        return error("invalid_client", 401)
    client_id, _, secret = base64.b64decode(auth[6:]).decode().partition(":")
    client_id, secret = unquote_plus(client_id), unquote_plus(secret)
    client = CLIENTS.get(client_id)
    if client is None or client["secret"] != secret:
        return error("invalid_client", 401)
    return client_credentials(form, client_id, client)


def client_credentials(form: dict, client_id: str, client: dict) -> JSONResponse:
    """The client credentials grant for an authenticated client: its resource and scopes."""
    if form.get("grant_type") != "client_credentials":
        return error("unsupported_grant_type")
    resource = form.get("resource")
    if not resource:
        return error("invalid_target")
    asked = form.get("scope", "").split() or ["mcp"]
    if any(s not in client["scopes"] for s in asked):
        return error("invalid_scope")
    return issue("client_credentials", client_id, asked, resource, False)


def assertion_token(form: dict) -> JSONResponse:
    """The client credentials grant, the client authenticated by its signed assertion."""
    assertion = form.get("client_assertion", "")
    try:
        client_id = jwt.decode(assertion, options={"verify_signature": False})["sub"]
    except Exception:
        return error("invalid_client", 401)
    client = CLIENTS.get(client_id)
    if client is None or not client.get("public_key") or "client_secret" in form:
        return error("invalid_client", 401)
    try:
        claims = jwt.decode(
            assertion,
            client["public_key"],
            algorithms=["RS256", "ES256"],
            audience=ISSUER,
            issuer=client_id,
            options={"require": ["exp", "iat", "jti", "sub", "iss", "aud"]},
        )
    except jwt.PyJWTError:
        return error("invalid_client", 401)
    if claims["sub"] != client_id or claims["exp"] - claims["iat"] > 300:
        return error("invalid_client", 401)
    return client_credentials(form, client_id, client)


app = Starlette(
    routes=[
        Route("/.well-known/oauth-authorization-server", metadata),
        Route("/.well-known/openid-configuration", metadata),
        Route("/jwks", jwks),
        Route("/authorize", authorize),
        Route("/token", token, methods=["POST"]),
    ]
)


async def main() -> None:
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    print(json.dumps({"issuer": ISSUER, "jwks_uri": f"{ISSUER}/jwks"}), flush=True)
    await server.serve(sockets=[sock])


asyncio.run(main())
