//! Credentials of an imported HTTP server, and what a server's `401`/`403` asked for.
//!
//! A source made with [`McpSource::http`](crate::McpSource::http) sends, with every request of
//! its connection, a bearer token ([`McpSource::bearer`](crate::McpSource::bearer)) and any
//! headers ([`McpSource::header`](crate::McpSource::header)) it was given, or authorizes with
//! OAuth 2.1 ([`McpSource::oauth`](crate::McpSource::oauth), see [`oauth`](crate::oauth)).
//! A credential is a [`Secret`]: its `Debug` shows no byte of it, and no message, span or
//! error of this crate carries it.
//!
//! A server that answers `401 Unauthorized` makes the connection or the call fail with
//! [`MCP_AUTH_REQUIRED`](crate::codes::MCP_AUTH_REQUIRED), a `403 Forbidden` (a token without
//! the scope an operation needs, say) with [`MCP_AUTH_FAILED`](crate::codes::MCP_AUTH_FAILED),
//! as does an OAuth authorization that could not be completed. Their message says, in one line,
//! what the server's `WWW-Authenticate` challenge asked for ([`Challenge`]: the scheme, the
//! scopes, the protected resource metadata URL, the error).
//!
//! ```
//! use tools_mcp::McpSource;
//!
//! let token = std::env::var("SEARCH_TOKEN").unwrap_or_default();
//! let source = McpSource::http("http://127.0.0.1:8080/mcp")
//!     .bearer(token)
//!     .header("x-tenant", "acme");
//! // The token is not in its Debug output.
//! assert!(!format!("{source:?}").contains("SEARCH_TOKEN"));
//! ```

use std::fmt;

use tools_schema::excerpt::cut;

pub use crate::credential::{Challenge, Secret};

/// How an HTTP source authenticates: static credentials, OAuth, or nothing.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct HttpAuth {
    /// A bearer token, sent as `Authorization: Bearer <token>`.
    pub(crate) bearer: Option<Secret>,
    /// Headers sent with every request, in order.
    pub(crate) headers: Vec<(String, Secret)>,
    /// OAuth 2.1, when the source authorizes.
    pub(crate) oauth: Option<crate::oauth::OAuth>,
}

impl fmt::Debug for HttpAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpAuth")
            .field("bearer", &self.bearer)
            .field(
                "headers",
                &self
                    .headers
                    .iter()
                    .map(|(name, _)| name.as_str())
                    .collect::<Vec<_>>(),
            )
            .field("oauth", &self.oauth)
            .finish()
    }
}

impl HttpAuth {
    /// Whether nothing is configured.
    pub fn is_empty(&self) -> bool {
        self.bearer.is_none() && self.headers.is_empty() && self.oauth.is_none()
    }

    /// The headers as reqwest's, checked: a name or value HTTP does not allow is an error that
    /// names the header (never its value).
    pub(crate) fn header_map(
        &self,
    ) -> Result<
        std::collections::HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>,
        AuthError,
    > {
        let mut map = std::collections::HashMap::new();
        for (name, value) in &self.headers {
            let invalid = || AuthError::InvalidHeader {
                name: cut(name).into_owned(),
            };
            let header =
                reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())?;
            let mut value =
                reqwest::header::HeaderValue::from_str(value.expose()).map_err(|_| invalid())?;
            value.set_sensitive(true);
            map.insert(header, value);
        }
        if let Some(bearer) = &self.bearer
            && reqwest::header::HeaderValue::from_str(&format!("Bearer {}", bearer.expose()))
                .is_err()
        {
            return Err(AuthError::InvalidHeader {
                name: "authorization".to_owned(),
            });
        }
        Ok(map)
    }
}

/// Why authenticating to an HTTP server failed (the source of
/// [`McpError::AuthRequired`](crate::McpError::AuthRequired) and
/// [`McpError::AuthFailed`](crate::McpError::AuthFailed)). No variant carries a token.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// The server refused the request (401 or 403) with this challenge.
    #[error("{0}")]
    Refused(Box<Challenge>),
    /// The server refused the request, and authorizing again with OAuth failed (the source).
    #[error("{challenge}; authorizing failed")]
    Authorize {
        /// What the server asked for.
        challenge: Box<Challenge>,
        /// Why authorizing failed.
        #[source]
        source: crate::oauth::OAuthError,
    },
    /// A header of the source (or its bearer token) is not a valid HTTP header.
    #[error("the header `{name}` is not a valid HTTP header (its name or value)")]
    InvalidHeader {
        /// The header's name.
        name: String,
    },
}

impl AuthError {
    /// The stable code of this error: [`MCP_AUTH_REQUIRED`](crate::codes::MCP_AUTH_REQUIRED)
    /// for a 401 that could not be answered, otherwise
    /// [`MCP_AUTH_FAILED`](crate::codes::MCP_AUTH_FAILED).
    pub fn code(&self) -> &'static str {
        match self {
            AuthError::Refused(challenge) if challenge.status == 401 => {
                crate::codes::MCP_AUTH_REQUIRED
            }
            _ => crate::codes::MCP_AUTH_FAILED,
        }
    }
}

/// The challenge of a `401`/`403` found in `error`'s chain (rmcp's transport error), with the
/// OAuth failure that followed it, if one was noted in `failure`.
pub(crate) fn refusal(
    error: &(dyn std::error::Error + 'static),
    url: &str,
    failure: Option<&crate::oauth::FailureSlot>,
) -> Option<AuthError> {
    use rmcp::transport::streamable_http_client::{AuthRequiredError, InsufficientScopeError};
    use rmcp::transport::worker::WorkerQuitReason;
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = next {
        let challenge = if let Some(e) = current.downcast_ref::<AuthRequiredError>() {
            Some(Challenge::parse(401, &e.www_authenticate_header, url))
        } else if let Some(e) = current.downcast_ref::<InsufficientScopeError>() {
            Some(Challenge::parse(403, &e.www_authenticate_header, url))
        } else if let Some(e) = current.downcast_ref::<HttpError>() {
            of_http(e, url)
        } else if let Some(WorkerQuitReason::Fatal { error, .. }) =
            current.downcast_ref::<WorkerQuitReason<HttpError>>()
        {
            // rmcp's worker shows its transport's error without making it the source.
            of_http(error, url)
        } else {
            None
        };
        if let Some(challenge) = challenge {
            let challenge = Box::new(challenge);
            let oauth = failure.and_then(crate::oauth::FailureSlot::take);
            return Some(match oauth {
                Some(source) => AuthError::Authorize { challenge, source },
                None => AuthError::Refused(challenge),
            });
        }
        let handshake = current
            .downcast_ref::<rmcp::service::ClientInitializeError>()
            .or_else(|| {
                current
                    .downcast_ref::<Box<rmcp::service::ClientInitializeError>>()
                    .map(AsRef::as_ref)
            });
        next = match handshake {
            // rmcp shows the transport's error of a failed handshake without making it the
            // source.
            Some(rmcp::service::ClientInitializeError::TransportError { error, .. }) => {
                Some(error.error.as_ref() as &(dyn std::error::Error + 'static))
            }
            Some(rmcp::service::ClientInitializeError::LegacyFallbackFailed {
                fallback, ..
            }) => Some(fallback.as_ref() as &(dyn std::error::Error + 'static)),
            _ => current.source(),
        };
    }
    None
}

/// The transport error of rmcp's HTTP client (and the import's).
type HttpError = rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>;

/// The challenge of a `401`/`403` as rmcp's HTTP client reports it: with a challenge, or, without
/// one, an unexpected response whose words begin with the status.
fn of_http(error: &HttpError, url: &str) -> Option<Challenge> {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let text = match error {
        StreamableHttpError::AuthRequired(e) => {
            return Some(Challenge::parse(401, &e.www_authenticate_header, url));
        }
        StreamableHttpError::InsufficientScope(e) => {
            return Some(Challenge::parse(403, &e.www_authenticate_header, url));
        }
        StreamableHttpError::UnexpectedServerResponse(text) => text,
        _ => return None,
    };
    let status = if text.starts_with("HTTP 401 ") {
        401
    } else if text.starts_with("HTTP 403 ") {
        403
    } else {
        return None;
    };
    Some(Challenge {
        status,
        ..Challenge::default()
    })
}

impl crate::McpSource {
    /// The same HTTP source, sending `token` as `Authorization: Bearer <token>` with every
    /// request (ignored for stdio). Take the token from where it is kept (an environment
    /// variable, a secret store), not from a command line.
    pub fn bearer(mut self, token: impl Into<Secret>) -> crate::McpSource {
        if let crate::McpSource::Http { auth, .. } = &mut self {
            auth.bearer = Some(token.into());
        }
        self
    }

    /// The same HTTP source, sending the header `name: value` with every request (ignored for
    /// stdio). The value is kept as a [`Secret`]; a name or value HTTP does not allow fails the
    /// connection with [`MCP_AUTH_FAILED`](crate::codes::MCP_AUTH_FAILED), naming the header.
    /// `Accept`, `Mcp-Session-Id` and `Last-Event-Id` are the transport's own and refused.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<Secret>) -> crate::McpSource {
        if let crate::McpSource::Http { auth, .. } = &mut self {
            auth.headers.push((name.into(), value.into()));
        }
        self
    }

    /// The same HTTP source, authorizing with OAuth 2.1 ([`oauth`](crate::oauth)) when the
    /// server asks (ignored for stdio). A bearer token given too is sent until the server
    /// refuses it.
    pub fn oauth(mut self, oauth: crate::oauth::OAuth) -> crate::McpSource {
        if let crate::McpSource::Http { auth, .. } = &mut self {
            auth.oauth = Some(oauth);
        }
        self
    }

    /// `error` as [`McpError::AuthRequired`](crate::McpError::AuthRequired) or
    /// [`McpError::AuthFailed`](crate::McpError::AuthFailed) when a `401`/`403` is in its
    /// chain, else `error` itself.
    pub(crate) fn auth_or(&self, error: crate::McpError) -> crate::McpError {
        let crate::McpSource::Http { url, auth } = self else {
            return error;
        };
        let failure = auth.oauth.as_ref().map(crate::oauth::OAuth::failure);
        match refusal(&error, url, failure) {
            Some(source) => {
                let server = self.describe();
                if source.code() == crate::codes::MCP_AUTH_REQUIRED {
                    crate::McpError::AuthRequired { server, source }
                } else {
                    crate::McpError::AuthFailed { server, source }
                }
            }
            None => error,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn secrets_do_not_show() {
        let auth = HttpAuth {
            bearer: Some(Secret::new("tok-123")),
            headers: vec![("x-key".to_owned(), Secret::new("key-456"))],
            oauth: None,
        };
        let text = format!("{auth:?}");
        assert!(
            !text.contains("tok-123") && !text.contains("key-456"),
            "{text}"
        );
        assert!(text.contains("x-key"), "{text}");
    }
}
