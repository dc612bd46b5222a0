//! The words of credentials: a [`Secret`] (a token or a header's value, never shown) and a
//! [`Challenge`] (what a server's `WWW-Authenticate` asked for). [`import_auth`](crate::import_auth) and
//! [`oauth`](crate::oauth) both speak them.

use std::fmt;

use tools_schema::excerpt::cut;

/// The longest challenge kept of a `WWW-Authenticate` header (the rest is dropped).
const MAX_CHALLENGE: usize = 4096;

/// A credential: a token or a header's value. Its `Debug` says only that it is redacted, and it
/// has no `Display`: read it with [`Secret::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// A secret holding `value`.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The credential itself.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([REDACTED])")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Secret {
        Secret(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Secret {
        Secret(value.to_owned())
    }
}

/// What a server's `WWW-Authenticate` challenge asked for, read from its first challenge.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Challenge {
    /// The HTTP status (401 or 403).
    pub status: u16,
    /// The scheme (`Bearer`), when the server sent a challenge.
    pub scheme: Option<String>,
    /// The scopes asked for (`scope`).
    pub scope: Option<String>,
    /// The protected resource metadata URL (`resource_metadata`, RFC 9728).
    pub resource_metadata: Option<String>,
    /// The error (`error`, such as `invalid_token` or `insufficient_scope`).
    pub error: Option<String>,
    /// The server's words for the error (`error_description`).
    pub error_description: Option<String>,
}

impl Challenge {
    /// The challenge of an answer of `status` with the `WWW-Authenticate` value `header` (empty
    /// when there was none), for the endpoint `url`.
    pub fn parse(status: u16, header: &str, url: &str) -> Challenge {
        let header = header.trim();
        let header = match header.char_indices().nth(MAX_CHALLENGE) {
            Some((end, _)) => &header[..end],
            None => header,
        };
        let mut challenge = Challenge {
            status,
            ..Challenge::default()
        };
        if header.is_empty() {
            return challenge;
        }
        let scheme: String = header
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || "-._~+/".contains(*c))
            .collect();
        if !scheme.is_empty() {
            challenge.scheme = Some(scheme);
        }
        let base = url::Url::parse(url)
            .or_else(|_| url::Url::parse("http://invalid/"))
            .ok();
        if let Some(base) = base {
            let params = rmcp::transport::auth::WWWAuthenticateParams::parse(header, &base);
            challenge.scope = params.scope;
            challenge.resource_metadata = params.resource_metadata_url.map(String::from);
            challenge.error = params.error;
            challenge.error_description = params.error_description;
        }
        challenge
    }

    /// Whether the server says the token lacks a scope (`error="insufficient_scope"`).
    pub fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

impl fmt::Display for Challenge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words = match self.status {
            401 => "HTTP 401 Unauthorized",
            403 => "HTTP 403 Forbidden",
            _ => "HTTP error",
        };
        f.write_str(words)?;
        let Some(scheme) = &self.scheme else {
            return f.write_str(", no WWW-Authenticate challenge");
        };
        write!(f, ", challenge {}", cut(scheme))?;
        let mut fields = Vec::new();
        if let Some(error) = &self.error {
            fields.push(format!("error {}", cut(error)));
        }
        if let Some(scope) = &self.scope {
            fields.push(format!("scope \"{}\"", cut(scope)));
        }
        if let Some(url) = &self.resource_metadata {
            fields.push(format!("resource metadata {}", cut(url)));
        }
        if let Some(description) = &self.error_description {
            fields.push(format!("\"{}\"", cut(description)));
        }
        if !fields.is_empty() {
            write!(f, " ({})", fields.join(", "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_challenge_reads_as_one_line() {
        let challenge = Challenge::parse(
            401,
            r#"Bearer realm="mcp", scope="files:read files:write", resource_metadata="/.well-known/oauth-protected-resource/mcp""#,
            "http://127.0.0.1:9/mcp",
        );
        assert_eq!(challenge.scheme.as_deref(), Some("Bearer"));
        assert_eq!(
            challenge.to_string(),
            "HTTP 401 Unauthorized, challenge Bearer (scope \"files:read files:write\", resource \
             metadata http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp)"
        );
        let none = Challenge::parse(403, "", "http://127.0.0.1:9/mcp");
        assert_eq!(
            none.to_string(),
            "HTTP 403 Forbidden, no WWW-Authenticate challenge"
        );
        let junk = Challenge::parse(401, "\"\"\"===,,,", "not a url");
        assert_eq!(junk.scheme, None);
        let long = Challenge::parse(
            401,
            &format!("Bearer scope=\"{}\"", "x".repeat(100_000)),
            "",
        );
        assert!(long.to_string().len() < 1000);
    }
}
