//! A served HTTP endpoint as an OAuth 2.1 resource server: bearer tokens, the protected
//! resource metadata, and the principal every call is made for.
//!
//! [`McpServer::bearer_auth`](crate::McpServer::bearer_auth) puts a [`BearerAuth`] in front of
//! [`McpServer::serve_http`](crate::McpServer::serve_http). Each request is then, before rmcp
//! or the registry sees it:
//!
//! 1. `GET /.well-known/oauth-protected-resource` and the same with the resource's path
//!    appended (RFC 9728, `/.well-known/oauth-protected-resource/mcp` for a resource
//!    `https://host/mcp`) are answered without a token, with `resource`,
//!    `authorization_servers`, `scopes_supported` and `bearer_methods_supported: ["header"]`.
//! 2. A request without `Authorization: Bearer <token>` is answered `401` with
//!    `WWW-Authenticate: Bearer resource_metadata="<metadata URL>", scope="<scopes>"` (the
//!    challenge the MCP authorization spec names; `scope` is
//!    [`BearerAuth::required_scopes`], else the scopes supported, and left out when there are
//!    none). A token longer than [`BearerAuth::max_token_size`] (8 KiB by default) is refused
//!    by its length, before anything parses it; hyper itself refuses a head over about 400 KB
//!    with `431`.
//! 3. The token goes to the [`TokenVerifier`]: a refusal ([`TokenRefusal`]) is answered `401`
//!    with `error="invalid_token"` added to the challenge, or `503` when the verifier could not
//!    reach the authorization server ([`TokenRefusal::Unavailable`]). The reason is logged
//!    (`debug`, the code and the words; `warn` for `Unavailable`); the token never is.
//! 4. A principal without every one of [`BearerAuth::required_scopes`] is answered `403` with
//!    `error="insufficient_scope", scope="..."`. With
//!    [`McpServer::tenants`](crate::McpServer::tenants), a principal the rule gives no scope
//!    is answered `403` as well (without `scope`: no scope would help).
//! 5. A `tools/call` of a tool that [`BearerAuth::require_scope`] names, by a principal without
//!    that scope, is answered `403` with `error="insufficient_scope"` and `scope` naming the
//!    scopes the principal holds and the one it lacks (the step-up challenge: a client asks
//!    its authorization server for them and retries). Such a tool **is listed**: the listing is
//!    how a client learns that it exists and that the step-up is worth it; hide it with a mask
//!    of the tenant's scope when it should not be seen.
//!
//! A tool's scope holds on every call made for the principal, not only on its `tools/call`:
//! [`McpServer::new`](crate::McpServer::new) registers a guard (one for the whole runtime) that
//! refuses a call of a tool [`BearerAuth::require_scope`] names when the call is made for a
//! principal without that scope, from the scope the server serves (or the one the tenant rule
//! gives the principal). So the calls a Code Mode program makes through `run_code` (each made
//! for the `run_code` call's principal), a tool body's nested calls and a call resumed after an
//! approval (it keeps its principal) are held as a direct call is. Such a call fails with the
//! code `GUARD_DENIED` and a reason that begins `insufficient_scope:` and names the tool and
//! the scopes it lacks (``insufficient_scope: `write_doc` needs the OAuth scope `docs:write`,
//! which the caller's token does not grant``); a program reads it as the error of that call and
//! may go on. The step-up `403` cannot happen there: the program's `run_code` request has been
//! answered `200` already, its program running, so a client that wants the scope steps up when
//! it sees the refusal and runs the program again. The refusal is logged (`debug`: subject,
//! tool, scopes, where the call came from). Calls made for no principal, or from a scope the
//! server does not serve, are not its business (another host of the same runtime decides for
//! its own).
//!
//! With [`McpServer::tenants`](crate::McpServer::tenants), whether MCP tasks are offered
//! follows the caller's slice: `initialize` and `server/discover` declare the tasks extension
//! to a caller whose slice lists a long-running tool (or when the task options name a tool),
//! and a `tools/call` is a task when the tool's definition in that slice is long-running (see
//! [`crate::tasks`]). A task is bound to the principal that created it, subject and client:
//! `tasks/get` and `tasks/cancel` of another principal find no such task.
//!
//! The principal ([`Principal`]: subject, client, scopes, claims) is put on the request and on
//! every call it makes ([`ToolCall::with_principal`](tools_runtime::ToolCall::with_principal)),
//! so policy listeners, guards, approvals and bodies read it
//! ([`ToolExecution::principal`](tools_runtime::ToolExecution::principal)); the served call's
//! span records its subject as `user.id` (never the token). A refused request reaches nothing
//! of the registry: no listing, no call, no body.
//!
//! Verifiers: `JwtVerifier` (feature `jwt`) checks JWT access tokens
//! against the issuer's JWKS; [`IntrospectionVerifier`] asks the authorization server about an
//! opaque token (RFC 7662); any type implementing [`TokenVerifier`] plugs in the same way.
//! Both fetch with a plain-HTTP reqwest client (the workspace builds no TLS stack): an
//! authorization server reached over `https` needs reqwest's TLS feature (`rustls`) enabled in
//! the program that builds this crate, or a TLS-terminating proxy on loopback.
//!
//! Bearer auth applies to [`serve_http`](crate::McpServer::serve_http) only: stdio has no
//! bearer, and a stdio server's calls are made for no principal.
//!
//! What this does not do (yet):
//!
//! - The principal is read from each request's own token: in a 2025-11-25 session
//!   ([`HttpOptions::sessions`](crate::HttpOptions::sessions)) every request is authenticated
//!   and served for its own token's principal, whoever opened the session; `list_changed`
//!   reaches every session (a hint; each lists its own slice).
//! - A JWKS is fetched on demand only (no background refresh). Introspection answers are
//!   cached for a short while ([`IntrospectionVerifier`], the cache): a revocation is seen when
//!   the entry expires.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;
use tools_runtime::Principal;

pub use crate::error::TokenRefusal;

/// Checks a bearer token and says who it is for. Implement it to plug in your own check (a
/// session table, a gateway's header, another token format); the server calls it once per
/// request, with the token already held to [`BearerAuth::max_token_size`].
pub trait TokenVerifier: Send + Sync + 'static {
    /// The principal `token` stands for, or why it is refused. Never log or keep the token.
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, TokenRefusal>>;
}

/// The bearer front of a served HTTP endpoint (see the [module docs](self)).
#[derive(Clone)]
pub struct BearerAuth {
    pub(crate) verifier: Arc<dyn TokenVerifier>,
    pub(crate) resource: String,
    pub(crate) authorization_servers: Vec<String>,
    pub(crate) scopes_supported: Vec<String>,
    pub(crate) required: Vec<String>,
    pub(crate) tool_scopes: BTreeMap<String, Vec<String>>,
    pub(crate) max_token_size: usize,
}

impl std::fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerAuth")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("scopes_supported", &self.scopes_supported)
            .field("required", &self.required)
            .field("tool_scopes", &self.tool_scopes)
            .field("max_token_size", &self.max_token_size)
            .finish_non_exhaustive()
    }
}

/// The default [`BearerAuth::max_token_size`]: 8 KiB.
pub const DEFAULT_MAX_TOKEN_SIZE: usize = 8 * 1024;

impl BearerAuth {
    /// Tokens checked by `verifier`, for the resource `resource`: the canonical URI of the MCP
    /// endpoint (`https://mcp.example.com/mcp`), which a token's audience must name and which
    /// the metadata gives as `resource`.
    pub fn new(verifier: impl TokenVerifier, resource: impl Into<String>) -> BearerAuth {
        BearerAuth::with_shared(Arc::new(verifier), resource)
    }

    /// The same with a verifier already shared.
    pub fn with_shared(verifier: Arc<dyn TokenVerifier>, resource: impl Into<String>) -> Self {
        BearerAuth {
            verifier,
            resource: resource.into(),
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            required: Vec::new(),
            tool_scopes: BTreeMap::new(),
            max_token_size: DEFAULT_MAX_TOKEN_SIZE,
        }
    }

    /// An authorization server the metadata names (its issuer URL); clients discover it there.
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> BearerAuth {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// The scopes the metadata lists as `scopes_supported`.
    pub fn scopes_supported<I, S>(mut self, scopes: I) -> BearerAuth
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Scopes every request needs (the `401` challenge names them; a token without them is
    /// answered `403 insufficient_scope`).
    pub fn required_scopes<I, S>(mut self, scopes: I) -> BearerAuth
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.required = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// `tools/call` of `tool` needs `scope` besides the required ones; without it the call is
    /// answered `403 insufficient_scope` naming it (the step-up challenge). Repeat for more
    /// scopes of one tool (all are needed). The tool is still listed (see the module docs).
    /// The scope holds on the calls a served call makes too, a Code Mode program's among them:
    /// without it such a call fails `GUARD_DENIED`, ``insufficient_scope: `tool` needs ...``.
    pub fn require_scope(mut self, tool: impl Into<String>, scope: impl Into<String>) -> Self {
        let scope = scope.into();
        let scopes = self.tool_scopes.entry(tool.into()).or_default();
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
        self
    }

    /// The longest token read, in bytes ([`DEFAULT_MAX_TOKEN_SIZE`] by default); a longer one is
    /// refused ([`TokenRefusal::TooLarge`]) before it is parsed.
    pub fn max_token_size(mut self, bytes: usize) -> BearerAuth {
        self.max_token_size = bytes;
        self
    }

    /// The scopes `tool` needs besides the required ones.
    pub(crate) fn tool_scopes(&self, tool: &str) -> &[String] {
        self.tool_scopes.get(tool).map_or(&[], Vec::as_slice)
    }
}

/// The principal of a token's claims (a JWT's payload or an introspection answer): `sub` (or,
/// without one, `client_id`) the subject, `client_id` (or `azp`) the client, `scope` (a
/// space-separated string) or `scp` (a list) the scopes, every claim kept in
/// [`Principal::claims`].
pub fn principal_of_claims(
    claims: serde_json::Map<String, Value>,
) -> Result<Principal, TokenRefusal> {
    let client = claims
        .get("client_id")
        .or_else(|| claims.get("azp"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let subject = match claims.get("sub") {
        Some(Value::String(sub)) if !sub.is_empty() => sub.clone(),
        Some(_) => {
            return Err(TokenRefusal::Claims {
                reason: "`sub` is not a non-empty string".to_owned(),
            });
        }
        None => client.clone().ok_or_else(|| TokenRefusal::Claims {
            reason: "neither `sub` nor `client_id`".to_owned(),
        })?,
    };
    let scopes: Vec<String> = match (claims.get("scope"), claims.get("scp")) {
        (Some(Value::String(s)), _) => s.split_whitespace().map(str::to_owned).collect(),
        (None, Some(Value::Array(list))) => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        (None, None) => Vec::new(),
        _ => {
            return Err(TokenRefusal::Claims {
                reason: "`scope` is not a string (or `scp` not a list)".to_owned(),
            });
        }
    };
    let mut principal = Principal::new(subject).with_scopes(scopes);
    if let Some(client) = client {
        principal = principal.with_client_id(client);
    }
    principal.claims = claims;
    Ok(principal)
}

/// Whether `aud` (a string or a list of them) names `resource`.
pub(crate) fn audience_names(aud: Option<&Value>, resource: &str) -> bool {
    match aud {
        Some(Value::String(a)) => a == resource,
        Some(Value::Array(list)) => list.iter().any(|a| a.as_str() == Some(resource)),
        _ => false,
    }
}

/// The longest introspection answer read.
const MAX_INTROSPECTION_ANSWER: usize = 64 * 1024;

/// Token introspection (RFC 7662) for opaque tokens: each token is posted to the authorization
/// server's introspection endpoint (`token=...&token_type_hint=access_token`, with HTTP Basic
/// client credentials when given); an active answer whose `aud` names the resource, whose
/// `iss` is the expected one (when [`issuer`](Self::issuer) is set), and whose `exp`/`nbf` hold
/// (with [`leeway`](Self::leeway)) gives the principal ([`principal_of_claims`]). Each request
/// to the endpoint is bounded by [`timeout`](Self::timeout) (5 s) and an answer of 64 KiB.
///
/// # The cache
///
/// An accepted token's principal is kept, so the next request with the same token does not ask
/// the authorization server again: on by default, at most
/// [`DEFAULT_INTROSPECTION_CACHE_ENTRIES`] tokens, each for at most
/// [`DEFAULT_INTROSPECTION_CACHE_TTL`] (60 s) and never past its `exp` (the time to live is the
/// smaller of the two; a token with no time left is not kept). [`cache`](Self::cache) sets the
/// bounds, [`without_cache`](Self::without_cache) turns it off.
///
/// - A token revoked at the authorization server is still accepted here until its entry
///   expires: the time to live is how long a revocation may take to be seen. Keep it short
///   where that matters, or turn the cache off.
/// - A refusal is not kept (an inactive token, another audience, an answer that could not be
///   had): each is asked about again. A flood of made-up tokens so costs one introspection each
///   (as without a cache) but adds nothing to the cache.
/// - The key of an entry is the SHA-256 of the token; the token itself is never kept.
/// - When the cache is full, expired entries go first, then the entry closest to its expiry.
///   Two requests with one new token at the same moment may both ask.
///
/// Clones share one cache.
#[derive(Clone)]
pub struct IntrospectionVerifier {
    endpoint: String,
    audience: String,
    issuer: Option<String>,
    client: Option<(String, String)>,
    leeway: Duration,
    timeout: Duration,
    http: reqwest::Client,
    cache: Arc<IntrospectionCache>,
}

impl std::fmt::Debug for IntrospectionVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The client's secret is never shown.
        f.debug_struct("IntrospectionVerifier")
            .field("endpoint", &self.endpoint)
            .field("audience", &self.audience)
            .field("issuer", &self.issuer)
            .field("client_id", &self.client.as_ref().map(|(id, _)| id))
            .field("leeway", &self.leeway)
            .field("timeout", &self.timeout)
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

/// The default of [`IntrospectionVerifier::cache`]'s `max_entries`.
pub const DEFAULT_INTROSPECTION_CACHE_ENTRIES: usize = 10_000;
/// The default of [`IntrospectionVerifier::cache`]'s `ttl`: 60 s.
pub const DEFAULT_INTROSPECTION_CACHE_TTL: Duration = Duration::from_secs(60);

/// The principals of accepted tokens, by the SHA-256 of the token.
struct IntrospectionCache {
    max_entries: usize,
    ttl: Duration,
    entries: std::sync::Mutex<std::collections::HashMap<[u8; 32], Cached>>,
}

struct Cached {
    principal: Principal,
    expires: std::time::Instant,
}

impl std::fmt::Debug for IntrospectionCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionCache")
            .field("max_entries", &self.max_entries)
            .field("ttl", &self.ttl)
            .field("entries", &crate::lock(&self.entries).len())
            .finish()
    }
}

impl IntrospectionCache {
    fn new(max_entries: usize, ttl: Duration) -> IntrospectionCache {
        IntrospectionCache {
            max_entries,
            ttl,
            entries: std::sync::Mutex::new(std::collections::HashMap::new()),
        }
    }

    fn on(&self) -> bool {
        self.max_entries > 0 && !self.ttl.is_zero()
    }

    fn get(&self, key: &[u8; 32]) -> Option<Principal> {
        if !self.on() {
            return None;
        }
        let mut entries = crate::lock(&self.entries);
        match entries.get(key) {
            Some(entry) if entry.expires > std::time::Instant::now() => {
                Some(entry.principal.clone())
            }
            Some(_) => {
                entries.remove(key);
                None
            }
            None => None,
        }
    }

    fn put(&self, key: [u8; 32], principal: &Principal, claims_exp: Option<u64>) {
        if !self.on() {
            return;
        }
        let Some(ttl) = cache_ttl(self.ttl, claims_exp, unix_now()) else {
            return;
        };
        let now = std::time::Instant::now();
        let Some(expires) = now.checked_add(ttl) else {
            return;
        };
        let mut entries = crate::lock(&self.entries);
        if entries.len() >= self.max_entries && !entries.contains_key(&key) {
            entries.retain(|_, e| e.expires > now);
            while entries.len() >= self.max_entries {
                let soonest = entries
                    .iter()
                    .min_by_key(|(_, e)| e.expires)
                    .map(|(k, _)| *k);
                match soonest {
                    Some(k) => {
                        entries.remove(&k);
                    }
                    None => break,
                }
            }
        }
        entries.insert(
            key,
            Cached {
                principal: principal.clone(),
                expires,
            },
        );
    }

    fn len(&self) -> usize {
        crate::lock(&self.entries).len()
    }
}

/// How long an accepted token is kept: the configured time, but never past its `exp`; `None`
/// when no time is left.
fn cache_ttl(configured: Duration, exp: Option<u64>, now: u64) -> Option<Duration> {
    let ttl = match exp {
        Some(exp) => configured.min(Duration::from_secs(exp.saturating_sub(now))),
        None => configured,
    };
    (!ttl.is_zero()).then_some(ttl)
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

/// The SHA-256 of a token: the cache's key.
fn token_key(token: &str) -> [u8; 32] {
    use sha2::Digest as _;
    sha2::Sha256::digest(token.as_bytes()).into()
}

impl IntrospectionVerifier {
    /// Introspection at `endpoint` of tokens for `audience` (this server's resource URI), with
    /// the default cache.
    pub fn new(endpoint: impl Into<String>, audience: impl Into<String>) -> Self {
        IntrospectionVerifier {
            endpoint: endpoint.into(),
            audience: audience.into(),
            issuer: None,
            client: None,
            leeway: Duration::from_secs(60),
            timeout: Duration::from_secs(5),
            http: reqwest::Client::new(),
            cache: Arc::new(IntrospectionCache::new(
                DEFAULT_INTROSPECTION_CACHE_ENTRIES,
                DEFAULT_INTROSPECTION_CACHE_TTL,
            )),
        }
    }

    /// Keeps at most `max_entries` accepted tokens, each for at most `ttl` (and never past its
    /// `exp`); see [the cache](Self#the-cache). A zero for either turns the cache off. Starts an
    /// empty cache (this verifier's clones made after the call share it).
    pub fn cache(mut self, max_entries: usize, ttl: Duration) -> Self {
        self.cache = Arc::new(IntrospectionCache::new(max_entries, ttl));
        self
    }

    /// No cache: every request asks the authorization server.
    pub fn without_cache(self) -> Self {
        self.cache(0, Duration::ZERO)
    }

    /// How many accepted tokens the cache holds now (expired ones included until they are
    /// looked up again or make room).
    pub fn cached_tokens(&self) -> usize {
        self.cache.len()
    }

    /// The client credentials this server introspects with (HTTP Basic).
    pub fn client_credentials(
        mut self,
        client_id: impl Into<String>,
        secret: impl Into<String>,
    ) -> Self {
        self.client = Some((client_id.into(), secret.into()));
        self
    }

    /// The `iss` an answer must carry.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// The clock skew allowed on `exp` and `nbf` (60 s by default; at most 5 minutes).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway.min(MAX_LEEWAY);
        self
    }

    /// The bound of one introspection request (5 s by default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    async fn verify_cached(&self, token: &str) -> Result<Principal, TokenRefusal> {
        if !self.cache.on() {
            return self.introspect(token).await.map(|(principal, _)| principal);
        }
        let key = token_key(token);
        if let Some(principal) = self.cache.get(&key) {
            return Ok(principal);
        }
        let (principal, exp) = self.introspect(token).await?;
        self.cache.put(key, &principal, exp);
        Ok(principal)
    }

    /// The principal of an active answer, with its `exp`.
    async fn introspect(&self, token: &str) -> Result<(Principal, Option<u64>), TokenRefusal> {
        let body = format!("token={}&token_type_hint=access_token", form_encode(token));
        let mut request = self
            .http
            .post(&self.endpoint)
            .timeout(self.timeout)
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .body(body);
        if let Some((id, secret)) = &self.client {
            request = request.basic_auth(form_encode(id), Some(form_encode(secret)));
        }
        let unavailable = |e: reqwest::Error| TokenRefusal::Unavailable(Box::new(e));
        let mut response = request.send().await.map_err(unavailable)?;
        if !response.status().is_success() {
            return Err(TokenRefusal::Unavailable(
                format!("introspection answered {}", response.status()).into(),
            ));
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(unavailable)? {
            if bytes.len() + chunk.len() > MAX_INTROSPECTION_ANSWER {
                return Err(TokenRefusal::Unavailable(
                    "the introspection answer is over 64 KiB".into(),
                ));
            }
            bytes.extend_from_slice(&chunk);
        }
        let claims: serde_json::Map<String, Value> =
            serde_json::from_slice(&bytes).map_err(|e| TokenRefusal::Unavailable(Box::new(e)))?;
        if claims.get("active") != Some(&Value::Bool(true)) {
            return Err(TokenRefusal::Inactive);
        }
        check_times(&claims, self.leeway)?;
        if let Some(issuer) = &self.issuer
            && claims.get("iss").and_then(Value::as_str) != Some(issuer)
        {
            return Err(TokenRefusal::Issuer);
        }
        if !audience_names(claims.get("aud"), &self.audience) {
            return Err(TokenRefusal::Audience);
        }
        let exp = claims.get("exp").and_then(Value::as_u64);
        Ok((principal_of_claims(claims)?, exp))
    }
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, TokenRefusal>> {
        Box::pin(self.verify_cached(token))
    }
}

/// The largest clock skew a verifier allows.
pub(crate) const MAX_LEEWAY: Duration = Duration::from_secs(300);

/// Checks `exp` (when present) and `nbf` (when present) against now, with `leeway`.
pub(crate) fn check_times(
    claims: &serde_json::Map<String, Value>,
    leeway: Duration,
) -> Result<(), TokenRefusal> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let leeway = leeway.as_secs();
    if let Some(exp) = claims.get("exp") {
        let exp = exp.as_u64().ok_or_else(|| TokenRefusal::Claims {
            reason: "`exp` is not a number of seconds".to_owned(),
        })?;
        if exp.saturating_add(leeway) <= now {
            return Err(TokenRefusal::Expired);
        }
    }
    if let Some(nbf) = claims.get("nbf") {
        let nbf = nbf.as_u64().ok_or_else(|| TokenRefusal::Claims {
            reason: "`nbf` is not a number of seconds".to_owned(),
        })?;
        if nbf > now.saturating_add(leeway) {
            return Err(TokenRefusal::NotYetValid);
        }
    }
    Ok(())
}

/// `application/x-www-form-urlencoded` of one value.
fn form_encode(value: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> serde_json::Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => serde_json::Map::new(),
        }
    }

    #[test]
    fn claims_give_the_principal() {
        let p = principal_of_claims(map(
            json!({"sub": "alice", "azp": "app", "scope": "a b", "tenant": "t1"}),
        ))
        .unwrap();
        assert_eq!(p.subject, "alice");
        assert_eq!(p.client_id.as_deref(), Some("app"));
        assert_eq!(p.scopes, vec!["a", "b"]);
        assert_eq!(p.claims.get("tenant"), Some(&json!("t1")));
        let p = principal_of_claims(map(json!({"client_id": "svc", "scp": ["x"]}))).unwrap();
        assert_eq!(p.subject, "svc");
        assert_eq!(p.scopes, vec!["x"]);
        assert!(principal_of_claims(map(json!({"scope": "a"}))).is_err());
        assert!(principal_of_claims(map(json!({"sub": 3}))).is_err());
    }

    #[test]
    fn the_cache_keeps_a_token_no_longer_than_its_exp() {
        let minute = Duration::from_secs(60);
        assert_eq!(cache_ttl(minute, None, 1000), Some(minute));
        assert_eq!(
            cache_ttl(minute, Some(1010), 1000),
            Some(Duration::from_secs(10))
        );
        assert_eq!(cache_ttl(minute, Some(5000), 1000), Some(minute));
        assert_eq!(cache_ttl(minute, Some(1000), 1000), None);
        assert_eq!(cache_ttl(minute, Some(900), 1000), None);
        assert_ne!(token_key("a"), token_key("b"));
    }

    #[test]
    fn the_debug_form_shows_no_secret() {
        let verifier = IntrospectionVerifier::new("http://as/introspect", "http://rs/mcp")
            .client_credentials("server", "very-secret");
        let text = format!("{verifier:?}");
        assert!(
            text.contains("server") && !text.contains("very-secret"),
            "{text}"
        );
    }

    #[test]
    fn the_cache_holds_its_bound() {
        let cache = IntrospectionCache::new(3, Duration::from_secs(60));
        for i in 0..50u8 {
            cache.put([i; 32], &Principal::new(format!("p{i}")), None);
            assert!(cache.len() <= 3);
        }
        assert!(cache.get(&[49; 32]).is_some());
        assert!(cache.get(&[0; 32]).is_none());
        let off = IntrospectionCache::new(0, Duration::from_secs(60));
        off.put([1; 32], &Principal::new("p"), None);
        assert_eq!(off.len(), 0);
    }

    #[test]
    fn times_hold_with_bounded_leeway() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let skew = Duration::from_secs(30);
        assert!(check_times(&map(json!({"exp": now + 100})), skew).is_ok());
        assert!(check_times(&map(json!({"exp": now - 10})), skew).is_ok());
        assert!(matches!(
            check_times(&map(json!({"exp": now - 100})), skew),
            Err(TokenRefusal::Expired)
        ));
        assert!(matches!(
            check_times(&map(json!({"nbf": now + 100})), skew),
            Err(TokenRefusal::NotYetValid)
        ));
        assert!(check_times(&map(json!({"exp": "soon"})), skew).is_err());
        assert_eq!(form_encode("a b+c/="), "a%20b%2Bc%2F%3D");
    }
}
