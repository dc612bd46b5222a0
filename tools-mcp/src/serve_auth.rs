//! The bearer front of [`McpServer::serve_http`](crate::McpServer::serve_http) (see
//! [`crate::auth`]): the protected resource metadata, the challenges, the principal and its
//! slice of the registry put on the request for the handler.

use std::sync::Arc;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper::http::{HeaderMap, HeaderValue, Method, Response, StatusCode, header};
use serde::Deserialize;
use tools_runtime::{Principal, ScopeKey};

use crate::auth::{BearerAuth, TokenRefusal};

type Body = BoxBody<Bytes, std::convert::Infallible>;

/// The rule that gives each principal its scope (its slice of the registry); `None` refuses it.
pub(crate) type TenantRule = dyn Fn(&Principal) -> Option<ScopeKey> + Send + Sync;

/// Who made a request over HTTP with a bearer token, and the scope it is served from: in the
/// request's extensions, for the handler.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    pub(crate) principal: Arc<Principal>,
    /// The scope the tenant rule gave; `None` is the server's own.
    pub(crate) scope: Option<ScopeKey>,
}

const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The resource's origin (`scheme://authority`) and path.
fn split(resource: &str) -> (&str, &str) {
    let after = resource.find("://").map_or(0, |i| i + 3);
    match resource[after..].find('/') {
        Some(i) => resource.split_at(after + i),
        None => (resource, ""),
    }
}

/// The URL of the resource's metadata (RFC 9728: the well-known path, then the resource's path).
pub(crate) fn metadata_url(auth: &BearerAuth) -> String {
    let (origin, path) = split(&auth.resource);
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let path = path.trim_end_matches('/');
    format!("{origin}{WELL_KNOWN}{path}")
}

/// The metadata document, when the request asks for it.
pub(crate) fn metadata(auth: &BearerAuth, method: &Method, path: &str) -> Option<Response<Body>> {
    if method != Method::GET {
        return None;
    }
    let (_, resource_path) = split(&auth.resource);
    let resource_path = resource_path
        .split(['?', '#'])
        .next()
        .unwrap_or_default()
        .trim_end_matches('/');
    let suffixed = path
        .strip_prefix(WELL_KNOWN)
        .is_some_and(|rest| rest.is_empty() || rest == "/" || rest == resource_path);
    if !suffixed {
        return None;
    }
    let mut document = serde_json::Map::new();
    document.insert("resource".into(), auth.resource.clone().into());
    document.insert(
        "authorization_servers".into(),
        auth.authorization_servers.clone().into(),
    );
    let supported = if auth.scopes_supported.is_empty() {
        all_scopes(auth)
    } else {
        auth.scopes_supported.clone()
    };
    if !supported.is_empty() {
        document.insert("scopes_supported".into(), supported.into());
    }
    document.insert("bearer_methods_supported".into(), vec!["header"].into());
    let text = serde_json::Value::Object(document).to_string();
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Some(response)
}

/// The required scopes and every tool's, in order, once each.
fn all_scopes(auth: &BearerAuth) -> Vec<String> {
    let mut all = auth.required.clone();
    for scope in auth.tool_scopes.values().flatten() {
        if !all.contains(scope) {
            all.push(scope.clone());
        }
    }
    all
}

/// A `WWW-Authenticate` parameter value: quotes and backslashes escaped, controls dropped.
fn quoted(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() || !c.is_ascii() => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn challenge(
    auth: &BearerAuth,
    status: StatusCode,
    error: Option<(&str, &str)>,
    scope: &[String],
) -> Response<Body> {
    let mut value = format!("Bearer resource_metadata={}", quoted(&metadata_url(auth)));
    if !scope.is_empty() {
        value.push_str(", scope=");
        value.push_str(&quoted(&scope.join(" ")));
    }
    if let Some((error, description)) = error {
        value.push_str(", error=");
        value.push_str(&quoted(error));
        value.push_str(", error_description=");
        value.push_str(&quoted(description));
    }
    let body = serde_json::json!({
        "error": error.map_or("unauthorized", |(e, _)| e),
        "error_description": error.map_or("a bearer token is required", |(_, d)| d),
    })
    .to_string();
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Ok(value) = HeaderValue::from_str(&value) {
        headers.insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The scopes a `401` challenge names: the required ones, else the ones supported.
fn challenge_scopes(auth: &BearerAuth) -> Vec<String> {
    if auth.required.is_empty() {
        auth.scopes_supported.clone()
    } else {
        auth.required.clone()
    }
}

/// The bearer token of `headers`, held to the size limit before anything parses it.
fn bearer(headers: &HeaderMap, limit: usize) -> Result<&str, TokenRefusal> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return Err(TokenRefusal::Missing);
    };
    let bytes = value.as_bytes();
    // "Bearer " and the token: the size is known before a byte of it is looked at.
    if bytes.len() > limit.saturating_add(7) {
        return Err(TokenRefusal::TooLarge {
            size: bytes.len().saturating_sub(7),
            limit,
        });
    }
    let text = value
        .to_str()
        .map_err(|e| TokenRefusal::Malformed(Box::new(e)))?;
    let (scheme, token) = text.split_once(' ').ok_or(TokenRefusal::Missing)?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(TokenRefusal::Missing);
    }
    let token = token.trim();
    if token.is_empty() {
        return Err(TokenRefusal::Missing);
    }
    Ok(token)
}

/// Authenticates a request: the caller to put on it, or the answer that refuses it.
pub(crate) async fn admit(
    auth: &BearerAuth,
    tenants: Option<&TenantRule>,
    headers: &HeaderMap,
) -> Result<Caller, Response<Body>> {
    let scopes = challenge_scopes(auth);
    let token = match bearer(headers, auth.max_token_size) {
        Ok(token) => token,
        Err(TokenRefusal::Missing) => {
            tracing::debug!("MCP request without a bearer token: 401");
            return Err(challenge(auth, StatusCode::UNAUTHORIZED, None, &scopes));
        }
        Err(refusal) => return Err(refused(auth, &refusal, &scopes)),
    };
    let principal = match auth.verifier.verify(token).await {
        Ok(principal) => principal,
        Err(refusal) => return Err(refused(auth, &refusal, &scopes)),
    };
    if let Some(missing) = auth.required.iter().find(|s| !principal.has_scope(s)) {
        tracing::debug!(
            subject = %principal.subject,
            scope = %missing,
            "MCP request without a required scope: 403"
        );
        return Err(challenge(
            auth,
            StatusCode::FORBIDDEN,
            Some(("insufficient_scope", "the token lacks a required scope")),
            &with_held(&principal, &auth.required),
        ));
    }
    let scope = match tenants {
        Some(rule) => match rule(&principal) {
            Some(scope) => Some(scope),
            None => {
                tracing::debug!(
                    subject = %principal.subject,
                    "MCP request of a principal the tenant rule gives no scope: 403"
                );
                return Err(challenge(
                    auth,
                    StatusCode::FORBIDDEN,
                    Some((
                        "insufficient_scope",
                        "no part of this server is for this caller",
                    )),
                    &[],
                ));
            }
        },
        None => None,
    };
    Ok(Caller {
        principal: Arc::new(principal),
        scope,
    })
}

/// The scopes `principal` holds and `needed`, once each: what a step-up asks for, so that the
/// new token keeps what the old one had.
fn with_held(principal: &Principal, needed: &[String]) -> Vec<String> {
    let mut all = principal.scopes.clone();
    for scope in needed {
        if !all.contains(scope) {
            all.push(scope.clone());
        }
    }
    all
}

fn refused(auth: &BearerAuth, refusal: &TokenRefusal, scopes: &[String]) -> Response<Body> {
    let words = crate::error::report(refusal);
    if let TokenRefusal::Unavailable(_) = refusal {
        tracing::warn!(code = refusal.code(), reason = %words, "MCP bearer token not checked: 503");
        let mut response = challenge(
            auth,
            StatusCode::SERVICE_UNAVAILABLE,
            Some(("temporarily_unavailable", "the token could not be checked")),
            scopes,
        );
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        return response;
    }
    tracing::debug!(code = refusal.code(), reason = %words, "MCP bearer token refused: 401");
    challenge(
        auth,
        StatusCode::UNAUTHORIZED,
        Some(("invalid_token", &refusal.to_string())),
        scopes,
    )
}

#[derive(Deserialize)]
struct Peek {
    method: Option<String>,
    params: Option<PeekParams>,
}

#[derive(Deserialize)]
struct PeekParams {
    name: Option<String>,
}

/// The tool a `tools/call` body names.
pub(crate) fn called_tool(bytes: &[u8]) -> Option<String> {
    let peek: Peek = serde_json::from_slice(bytes).ok()?;
    if peek.method.as_deref() != Some("tools/call") {
        return None;
    }
    peek.params?.name
}

/// The scopes of `tool` that `principal` lacks.
pub(crate) fn missing_scopes<'a>(
    auth: &'a BearerAuth,
    principal: &Principal,
    tool: &str,
) -> Vec<&'a String> {
    auth.tool_scopes(tool)
        .iter()
        .filter(|s| !principal.has_scope(s))
        .collect()
}

/// The words that begin the refusal of a call whose tool needs a scope the principal lacks
/// (the guard's reason, which a Code Mode program reads as its call's error).
pub(crate) const INSUFFICIENT_SCOPE: &str = "insufficient_scope";

/// Why the guard refuses a call of `tool` for `principal`, if it does: the scopes of the tool
/// the principal lacks, named with the tool. The refusal is logged (`debug`, with the subject,
/// the tool, the scopes and where the call came from); no token is at hand to log.
pub(crate) fn tool_scope_refusal(
    auth: &BearerAuth,
    principal: &Principal,
    tool: &str,
    origin: tools_runtime::CallOrigin,
) -> Option<String> {
    let missing = missing_scopes(auth, principal, tool);
    if missing.is_empty() {
        return None;
    }
    let needed: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
    let tool = tools_schema::excerpt::cut(tool);
    let from = match origin {
        tools_runtime::CallOrigin::Program(_) => "a Code Mode program's call",
        tools_runtime::CallOrigin::Nested { .. } => "a nested call",
        _ => "a call",
    };
    tracing::debug!(
        subject = %principal.subject,
        tool = %tool,
        scope = %needed.join(" "),
        origin = from,
        "MCP tool scope: a call without the tool's scope refused"
    );
    let (noun, list) = match needed.as_slice() {
        [one] => ("scope", format!("`{one}`")),
        many => (
            "scopes",
            many.iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", "),
        ),
    };
    Some(format!(
        "{INSUFFICIENT_SCOPE}: `{tool}` needs the OAuth {noun} {list}, which the caller's token \
         does not grant"
    ))
}

/// The step-up challenge of a `tools/call` whose tool needs a scope the caller lacks.
pub(crate) fn step_up(auth: &BearerAuth, caller: &Caller, bytes: &[u8]) -> Option<Response<Body>> {
    if auth.tool_scopes.is_empty() {
        return None;
    }
    let tool = called_tool(bytes)?;
    let missing = missing_scopes(auth, &caller.principal, &tool);
    if missing.is_empty() {
        return None;
    }
    let needed: Vec<String> = missing.into_iter().cloned().collect();
    tracing::debug!(
        subject = %caller.principal.subject,
        tool = %tools_schema::excerpt::cut(&tool),
        scope = %needed.join(" "),
        "MCP tools/call without the tool's scope: 403"
    );
    Some(challenge(
        auth,
        StatusCode::FORBIDDEN,
        Some((
            "insufficient_scope",
            "the tool needs a scope the token lacks",
        )),
        &with_held(&caller.principal, &needed),
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    struct Never;
    impl crate::auth::TokenVerifier for Never {
        fn verify<'a>(
            &'a self,
            _: &'a str,
        ) -> futures::future::BoxFuture<'a, Result<Principal, TokenRefusal>> {
            Box::pin(std::future::ready(Err(TokenRefusal::Inactive)))
        }
    }

    #[test]
    fn the_metadata_url_appends_the_resource_path() {
        let auth = BearerAuth::new(Never, "http://127.0.0.1:9/mcp");
        assert_eq!(
            metadata_url(&auth),
            "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp"
        );
        let auth = BearerAuth::new(Never, "https://h.example/");
        assert_eq!(
            metadata_url(&auth),
            "https://h.example/.well-known/oauth-protected-resource"
        );
        assert!(metadata(&auth, &Method::GET, WELL_KNOWN).is_some());
        assert!(metadata(&auth, &Method::POST, WELL_KNOWN).is_none());
        assert_eq!(quoted("a\"b\\c\n"), "\"a\\\"b\\\\c\"");
    }

    #[test]
    fn a_token_is_refused_by_its_size_first() {
        let mut headers = HeaderMap::new();
        let long = format!("Bearer {}", "x".repeat(100));
        headers.insert(header::AUTHORIZATION, HeaderValue::from_str(&long).unwrap());
        assert!(matches!(
            bearer(&headers, 50),
            Err(TokenRefusal::TooLarge {
                size: 100,
                limit: 50
            })
        ));
        assert_eq!(bearer(&headers, 100).unwrap().len(), 100);
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert!(matches!(bearer(&headers, 50), Err(TokenRefusal::Missing)));
    }
}
