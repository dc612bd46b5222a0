//! `private_key_jwt` (RFC 7523 client authentication) for the client credentials grant
//! ([`OAuth::client_credentials_jwt`](super::OAuth::client_credentials_jwt), feature `jwt`):
//! the client proves who it is with a JWT it signs with its private key, not with a secret.
//!
//! The assertion's claims: `iss` and `sub` are the client id, `aud` the authorization server's
//! issuer (as RFC 7523bis and the MCP client credentials extension, SEP-1046, say; the token
//! endpoint when the metadata names no issuer), `jti` 128 random bits, `iat` now and `exp` a
//! minute later; its header names the algorithm, `typ` `client-authentication+jwt` and the
//! key's `kid` when one was given. It is signed with jsonwebtoken's RustCrypto backend (pure
//! Rust). The token request goes to the token endpoint (HTTPS, or plain HTTP when both it and
//! the server are on loopback) with `grant_type=client_credentials`, `client_assertion_type`,
//! `client_assertion`, the `resource` parameter (RFC 8707) and the scopes, and no secret; it
//! follows no redirect, waits at most 30 seconds and reads at most 1 MiB of answer.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::transport::auth::{
    AuthError as RmcpAuthError, AuthorizationMetadata, OAuthTokenResponse,
};

use super::OAuthError;
use crate::token_store::TokenRecord;

/// How long an assertion is valid (`exp` - `iat`).
const ASSERTION_LIFETIME: Duration = Duration::from_secs(60);
/// The bound of the token request.
const TOKEN_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest token answer read.
const MAX_TOKEN_ANSWER: usize = 1 << 20;
/// RFC 7523's `client_assertion_type`.
const JWT_BEARER: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// An algorithm a client assertion is signed with (the key must be of its kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SigningAlgorithm {
    /// ECDSA with P-256 and SHA-256.
    ES256,
    /// ECDSA with P-384 and SHA-384.
    ES384,
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    RS256,
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    RS384,
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    RS512,
    /// RSASSA-PSS with SHA-256.
    PS256,
    /// RSASSA-PSS with SHA-384.
    PS384,
    /// RSASSA-PSS with SHA-512.
    PS512,
    /// EdDSA with Ed25519.
    EdDSA,
}

impl SigningAlgorithm {
    /// Its JOSE name (`ES256`, ...), as metadata's
    /// `token_endpoint_auth_signing_alg_values_supported` lists it.
    pub fn name(self) -> &'static str {
        match self {
            SigningAlgorithm::ES256 => "ES256",
            SigningAlgorithm::ES384 => "ES384",
            SigningAlgorithm::RS256 => "RS256",
            SigningAlgorithm::RS384 => "RS384",
            SigningAlgorithm::RS512 => "RS512",
            SigningAlgorithm::PS256 => "PS256",
            SigningAlgorithm::PS384 => "PS384",
            SigningAlgorithm::PS512 => "PS512",
            SigningAlgorithm::EdDSA => "EdDSA",
        }
    }

    fn jwt(self) -> jsonwebtoken::Algorithm {
        use jsonwebtoken::Algorithm;
        match self {
            SigningAlgorithm::ES256 => Algorithm::ES256,
            SigningAlgorithm::ES384 => Algorithm::ES384,
            SigningAlgorithm::RS256 => Algorithm::RS256,
            SigningAlgorithm::RS384 => Algorithm::RS384,
            SigningAlgorithm::RS512 => Algorithm::RS512,
            SigningAlgorithm::PS256 => Algorithm::PS256,
            SigningAlgorithm::PS384 => Algorithm::PS384,
            SigningAlgorithm::PS512 => Algorithm::PS512,
            SigningAlgorithm::EdDSA => Algorithm::EdDSA,
        }
    }

    /// The kind of key the algorithm needs, in words.
    fn kind(self) -> &'static str {
        match self {
            SigningAlgorithm::ES256 => "EC P-256",
            SigningAlgorithm::ES384 => "EC P-384",
            SigningAlgorithm::EdDSA => "Ed25519",
            _ => "RSA",
        }
    }
}

impl fmt::Display for SigningAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a PEM text is not a private key that can sign client assertions. It names what is
/// wrong, never a byte of the key. Its code is
/// [`MCP_AUTH_BAD_KEY`](crate::codes::MCP_AUTH_BAD_KEY).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PrivateKeyError {
    /// The text holds no PEM block (`-----BEGIN <label>-----`).
    #[error("the private key is not PEM text (no `-----BEGIN ...-----` line)")]
    NotPem,
    /// The PEM block is not a private key (a public key or a certificate, say), or is an
    /// encrypted one.
    #[error("the PEM block is `{label}`, not an unencrypted private key (`PRIVATE KEY`, PKCS#8)")]
    NotPrivateKey {
        /// The block's label.
        label: String,
    },
    /// The block could not be read as a key of the kind the algorithm needs (bad base64, a
    /// truncated block, or a key of another kind).
    #[error("the private key could not be read as the {kind} key {algorithm} needs")]
    Unreadable {
        /// The algorithm asked for.
        algorithm: SigningAlgorithm,
        /// The kind of key it needs.
        kind: &'static str,
        /// What the key parser said (no key material).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The key was read but cannot sign with the algorithm (an EC key of another curve, an RSA
    /// key too small).
    #[error("the private key cannot sign with {algorithm} (it needs an {kind} key)")]
    CannotSign {
        /// The algorithm asked for.
        algorithm: SigningAlgorithm,
        /// The kind of key it needs.
        kind: &'static str,
    },
}

impl PrivateKeyError {
    /// The stable code: [`MCP_AUTH_BAD_KEY`](crate::codes::MCP_AUTH_BAD_KEY).
    pub fn code(&self) -> &'static str {
        crate::codes::MCP_AUTH_BAD_KEY
    }
}

/// A client's private key for `private_key_jwt`, with the algorithm it signs with. Its `Debug`
/// shows the algorithm and key id only.
///
/// ```
/// use tools_mcp::oauth::{PrivateKey, PrivateKeyError, SigningAlgorithm};
///
/// let error = PrivateKey::from_pem("not a key", SigningAlgorithm::ES256).unwrap_err();
/// assert!(matches!(error, PrivateKeyError::NotPem));
/// assert_eq!(error.code(), "MCP_AUTH_BAD_KEY");
/// ```
#[derive(Clone)]
pub struct PrivateKey {
    key: Arc<jsonwebtoken::EncodingKey>,
    algorithm: SigningAlgorithm,
    key_id: Option<String>,
}

impl fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PrivateKey")
            .field("algorithm", &self.algorithm)
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

impl PrivateKey {
    /// The key of the PEM text `pem` (PKCS#8 `PRIVATE KEY`; for RSA also PKCS#1 `RSA PRIVATE
    /// KEY`) for `algorithm`. The key is tried once (a signature made and dropped), so a key
    /// of the wrong kind or curve fails here, not at the first authorization.
    pub fn from_pem(
        pem: impl AsRef<[u8]>,
        algorithm: SigningAlgorithm,
    ) -> Result<PrivateKey, PrivateKeyError> {
        if jsonwebtoken::crypto::CryptoProvider::try_get_default().is_none() {
            // Both jsonwebtoken backends are built (another crate asked for aws-lc-rs):
            // RustCrypto, as this crate asks (as `JwtVerifier` does). Failing means one is
            // installed already.
            let _ = jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER.install_default();
        }
        let pem = pem.as_ref();
        let label = pem_label(pem).ok_or(PrivateKeyError::NotPem)?;
        let rsa = !matches!(
            algorithm,
            SigningAlgorithm::ES256 | SigningAlgorithm::ES384 | SigningAlgorithm::EdDSA
        );
        let readable = label == "PRIVATE KEY" || (rsa && label == "RSA PRIVATE KEY");
        if !readable {
            return Err(PrivateKeyError::NotPrivateKey { label });
        }
        let kind = algorithm.kind();
        let key = match algorithm {
            SigningAlgorithm::ES256 | SigningAlgorithm::ES384 => {
                jsonwebtoken::EncodingKey::from_ec_pem(pem)
            }
            SigningAlgorithm::EdDSA => jsonwebtoken::EncodingKey::from_ed_pem(pem),
            _ => jsonwebtoken::EncodingKey::from_rsa_pem(pem),
        }
        .map_err(|e| PrivateKeyError::Unreadable {
            algorithm,
            kind,
            source: Box::new(e),
        })?;
        let key = PrivateKey {
            key: Arc::new(key),
            algorithm,
            key_id: None,
        };
        key.assertion("probe", "probe", 0)
            .map_err(|_| PrivateKeyError::CannotSign { algorithm, kind })?;
        Ok(key)
    }

    /// The same key, its assertions naming `key_id` in their header (`kid`), for an
    /// authorization server that holds several keys of the client.
    pub fn key_id(mut self, key_id: impl Into<String>) -> PrivateKey {
        self.key_id = Some(key_id.into());
        self
    }

    /// The algorithm it signs with.
    pub fn algorithm(&self) -> SigningAlgorithm {
        self.algorithm
    }

    /// A client assertion of `client_id` for `audience`, issued at `now` (seconds since the
    /// epoch).
    pub(crate) fn assertion(
        &self,
        client_id: &str,
        audience: &str,
        now: u64,
    ) -> Result<String, jsonwebtoken::errors::Error> {
        let mut jti = [0u8; 16];
        // A clock-and-counter id would do as well; a failed read leaves zeros, still signed.
        let _ = getrandom::fill(&mut jti);
        let jti: String = jti.iter().map(|b| format!("{b:02x}")).collect();
        let claims = serde_json::json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME.as_secs(),
            "jti": jti,
        });
        let mut header = jsonwebtoken::Header::new(self.algorithm.jwt());
        header.typ = Some("client-authentication+jwt".to_owned());
        header.kid = self.key_id.clone();
        jsonwebtoken::encode(&header, &claims, &self.key)
    }
}

/// The label of the first PEM block of `pem` (`PRIVATE KEY`, ...).
fn pem_label(pem: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(pem).ok()?;
    let start = text.find("-----BEGIN ")? + "-----BEGIN ".len();
    let rest = &text[start..];
    let end = rest.find("-----")?;
    let label = &rest[..end];
    (!label.is_empty() && label.len() <= 64 && !label.contains('\n'))
        .then(|| label.trim().to_owned())
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// A failure of the grant, as the client credentials grant with a secret reports one.
fn failed(what: String) -> OAuthError {
    OAuthError::Protocol(Box::new(RmcpAuthError::ClientCredentialsError(what)))
}

/// Whether the token endpoint `endpoint` may be sent an assertion for the server `resource`:
/// HTTPS, or HTTP when both are on loopback.
fn allowed_endpoint(resource: &url::Url, endpoint: &url::Url) -> bool {
    let loopback = |url: &url::Url| match url.host() {
        Some(url::Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        Some(url::Host::Ipv4(a)) => a.is_loopback(),
        Some(url::Host::Ipv6(a)) => a.is_loopback(),
        None => false,
    };
    endpoint.scheme() == "https"
        || (endpoint.scheme() == "http" && loopback(resource) && loopback(endpoint))
}

/// Checks that the metadata offers `private_key_jwt` and the key's algorithm (when it lists
/// them).
fn check_metadata(
    metadata: &AuthorizationMetadata,
    algorithm: SigningAlgorithm,
) -> Result<(), OAuthError> {
    let list = |field: &str| -> Option<Vec<String>> {
        metadata
            .additional_fields
            .get(field)
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|m| {
                        m.as_str()
                            .map(|s| tools_schema::excerpt::cut(s).into_owned())
                    })
                    .collect()
            })
    };
    if let Some(methods) = list("token_endpoint_auth_methods_supported")
        && !methods.iter().any(|m| m == "private_key_jwt")
    {
        return Err(failed(format!(
            "the authorization server does not accept private_key_jwt (it accepts {})",
            methods.join(", ")
        )));
    }
    if let Some(algorithms) = list("token_endpoint_auth_signing_alg_values_supported")
        && !algorithms.iter().any(|a| a == algorithm.name())
    {
        return Err(failed(format!(
            "the authorization server does not accept client assertions signed with {algorithm} \
             (it accepts {})",
            algorithms.join(", ")
        )));
    }
    Ok(())
}

/// The client credentials grant with a client assertion: the token response for `url` (the
/// server, sent as `resource`) from the authorization server of `metadata`, kept as a record.
pub(super) async fn exchange(
    url: &str,
    metadata: &AuthorizationMetadata,
    client_id: &str,
    key: &PrivateKey,
    scopes: &[String],
) -> Result<TokenRecord, OAuthError> {
    use oauth2::{AuthType, ClientId, RequestTokenError, Scope, TokenResponse, TokenUrl};
    check_metadata(metadata, key.algorithm)?;
    let resource =
        url::Url::parse(url).map_err(|_| failed("the server's URL is not a URL".into()))?;
    let endpoint = url::Url::parse(&metadata.token_endpoint)
        .map_err(|_| failed("the token endpoint of the metadata is not a URL".into()))?;
    if !allowed_endpoint(&resource, &endpoint) {
        return Err(failed(format!(
            "the token endpoint {} is not HTTPS (plain HTTP only when it and the server are on \
             loopback); no client assertion is sent to it",
            tools_schema::excerpt::cut(endpoint.as_str())
        )));
    }
    let audience = metadata
        .issuer
        .clone()
        .unwrap_or_else(|| metadata.token_endpoint.clone());
    let assertion = key.assertion(client_id, &audience, now()).map_err(|_| {
        failed(format!(
            "the client assertion could not be signed with {}",
            key.algorithm
        ))
    })?;
    let client = oauth2::Client::<
        oauth2::basic::BasicErrorResponse,
        OAuthTokenResponse,
        oauth2::basic::BasicTokenIntrospectionResponse,
        oauth2::StandardRevocableToken,
        oauth2::basic::BasicRevocationErrorResponse,
    >::new(ClientId::new(client_id.to_owned()))
    .set_token_uri(TokenUrl::from_url(endpoint))
    // No secret: the body carries `client_id` (RFC 7521 4.2 allows it) and the assertion.
    .set_auth_type(AuthType::RequestBody);
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(TOKEN_TIMEOUT)
        .build()
        .map_err(|_| failed("no HTTP client".into()))?;
    let send = |request: oauth2::HttpRequest| {
        let http = http.clone();
        async move { post(&http, request).await }
    };
    let mut request = client
        .exchange_client_credentials()
        .add_extra_param("client_assertion_type", JWT_BEARER)
        .add_extra_param("client_assertion", assertion)
        .add_extra_param("resource", url);
    for scope in scopes {
        request = request.add_scope(Scope::new(scope.clone()));
    }
    let token = request.request_async(&send).await.map_err(|e| match e {
        RequestTokenError::ServerResponse(answer) => {
            let mut words = format!(
                "the token endpoint refused the client assertion: {}",
                answer.error()
            );
            if let Some(description) = answer.error_description() {
                words.push_str(&format!(" ({})", tools_schema::excerpt::cut(description)));
            }
            failed(words)
        }
        RequestTokenError::Request(e) => failed(format!("the token request failed: {e}")),
        RequestTokenError::Parse(e, _) => failed(format!(
            "the token endpoint's answer is not a token response: {}",
            tools_schema::excerpt::cut(&e.to_string())
        )),
        RequestTokenError::Other(e) => failed(format!(
            "the token endpoint's answer is not usable: {}",
            tools_schema::excerpt::cut(&e)
        )),
    })?;
    let granted = token
        .scopes()
        .map(|s| s.iter().map(|s| s.to_string()).collect())
        .unwrap_or_default();
    Ok(TokenRecord::issued(
        client_id,
        token,
        granted,
        now(),
        metadata.issuer.clone(),
    ))
}

/// Why the token request could not be made or its answer read (no URL or body in it).
#[derive(Debug, thiserror::Error)]
enum PostError {
    #[error("the request could not be built")]
    Build,
    #[error("no answer ({0})")]
    Send(&'static str),
    #[error("the answer is larger than 1 MiB")]
    TooLarge,
}

/// Sends `request` with `http`, reading at most [`MAX_TOKEN_ANSWER`] bytes of the answer.
async fn post(
    http: &reqwest::Client,
    request: oauth2::HttpRequest,
) -> Result<oauth2::HttpResponse, PostError> {
    use futures::StreamExt;
    let request = reqwest::Request::try_from(request).map_err(|_| PostError::Build)?;
    let response = http.execute(request).await.map_err(|e| {
        PostError::Send(if e.is_timeout() {
            "timed out"
        } else if e.is_connect() {
            "cannot connect"
        } else {
            "the request failed"
        })
    })?;
    let mut answer = oauth2::http::Response::builder().status(response.status());
    for (name, value) in response.headers() {
        answer = answer.header(name, value);
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| PostError::Send("the answer broke off"))?;
        if body.len() + chunk.len() > MAX_TOKEN_ANSWER {
            return Err(PostError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    answer.body(body).map_err(|_| PostError::Build)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const RSA_KEY: &str = include_str!("../../tests/peers/auth_test_key.pem");
    const RSA_PUBLIC: &str = include_str!("../../tests/peers/auth_test_key.pub.pem");
    const EC_KEY: &str = include_str!("../../tests/peers/client_ec_key.pem");
    const EC_PUBLIC: &str = include_str!("../../tests/peers/client_ec_key.pub.pem");

    fn claims(token: &str, public: &str, algorithm: jsonwebtoken::Algorithm) -> serde_json::Value {
        let key = match algorithm {
            jsonwebtoken::Algorithm::ES256 => {
                jsonwebtoken::DecodingKey::from_ec_pem(public.as_bytes()).unwrap()
            }
            _ => jsonwebtoken::DecodingKey::from_rsa_pem(public.as_bytes()).unwrap(),
        };
        let mut validation = jsonwebtoken::Validation::new(algorithm);
        validation.set_audience(&["https://as.example"]);
        validation.set_issuer(&["client-7"]);
        validation.set_required_spec_claims(&["exp", "iat", "aud", "iss", "sub"]);
        let header = jsonwebtoken::decode_header(token).unwrap();
        assert_eq!(header.typ.as_deref(), Some("client-authentication+jwt"));
        jsonwebtoken::decode::<serde_json::Value>(token, &key, &validation)
            .unwrap()
            .claims
    }

    #[test]
    fn an_assertion_names_the_client_the_issuer_and_a_fresh_id() {
        for (pem, public, algorithm) in [
            (EC_KEY, EC_PUBLIC, SigningAlgorithm::ES256),
            (RSA_KEY, RSA_PUBLIC, SigningAlgorithm::RS256),
        ] {
            let key = PrivateKey::from_pem(pem, algorithm).unwrap().key_id("k1");
            let now = now();
            let one = key
                .assertion("client-7", "https://as.example", now)
                .unwrap();
            let two = key
                .assertion("client-7", "https://as.example", now)
                .unwrap();
            assert_eq!(
                jsonwebtoken::decode_header(&one).unwrap().kid.as_deref(),
                Some("k1")
            );
            let (a, b) = (
                claims(&one, public, algorithm.jwt()),
                claims(&two, public, algorithm.jwt()),
            );
            assert_eq!(a["iss"], "client-7");
            assert_eq!(a["sub"], "client-7");
            assert_eq!(a["aud"], "https://as.example");
            assert_eq!(a["iat"], now);
            assert_eq!(a["exp"], now + 60);
            assert_eq!(a["jti"].as_str().unwrap().len(), 32);
            assert_ne!(a["jti"], b["jti"], "each assertion has its own jti");
            let shown = format!("{key:?}");
            assert!(
                !shown.contains("MII") && shown.contains(algorithm.name()),
                "{shown}"
            );
        }
    }

    #[test]
    fn a_bad_key_says_what_is_wrong_and_shows_none_of_it() {
        let not_pem = PrivateKey::from_pem("hello", SigningAlgorithm::ES256).unwrap_err();
        assert!(matches!(not_pem, PrivateKeyError::NotPem), "{not_pem}");

        let public = PrivateKey::from_pem(EC_PUBLIC, SigningAlgorithm::ES256).unwrap_err();
        assert_eq!(
            public.to_string(),
            "the PEM block is `PUBLIC KEY`, not an unencrypted private key (`PRIVATE KEY`, PKCS#8)"
        );

        // An RSA key for ES256, and an EC key for RS256.
        let rsa_for_ec = PrivateKey::from_pem(RSA_KEY, SigningAlgorithm::ES256).unwrap_err();
        let ec_for_rsa = PrivateKey::from_pem(EC_KEY, SigningAlgorithm::RS256).unwrap_err();
        for (error, words) in [
            (&rsa_for_ec, "EC P-256 key ES256"),
            (&ec_for_rsa, "RSA key RS256"),
        ] {
            let text = crate::error::report(error);
            assert!(text.contains(words), "{text}");
        }
        // A P-256 key for ES384: read, but it cannot sign.
        let curve = PrivateKey::from_pem(EC_KEY, SigningAlgorithm::ES384).unwrap_err();
        assert!(
            matches!(
                curve,
                PrivateKeyError::CannotSign { .. } | PrivateKeyError::Unreadable { .. }
            ),
            "{curve}"
        );

        // A truncated block: the base64 is cut in the middle.
        let body_start = EC_KEY.find('\n').unwrap() + 1;
        let truncated = format!(
            "{}\n-----END PRIVATE KEY-----\n",
            &EC_KEY[..body_start + 20]
        );
        let error = PrivateKey::from_pem(&truncated, SigningAlgorithm::ES256).unwrap_err();
        let text = crate::error::report(&error);
        assert!(
            text.starts_with("the private key could not be read"),
            "{text}"
        );
        // No line of the key is in any message or Debug.
        for error in [&public, &rsa_for_ec, &ec_for_rsa, &curve, &error] {
            let text = format!("{} {error:?} {}", crate::error::report(error), error.code());
            for line in EC_KEY
                .lines()
                .chain(RSA_KEY.lines())
                .filter(|l| !l.starts_with("-----"))
            {
                assert!(!text.contains(&line[..16.min(line.len())]), "{text}");
            }
        }
    }

    #[test]
    fn the_metadata_must_offer_the_method_and_the_algorithm() {
        let mut metadata = AuthorizationMetadata::default();
        metadata.token_endpoint = "https://as.example/token".into();
        assert!(check_metadata(&metadata, SigningAlgorithm::ES256).is_ok());
        metadata.additional_fields.insert(
            "token_endpoint_auth_methods_supported".into(),
            serde_json::json!(["client_secret_basic"]),
        );
        let error = check_metadata(&metadata, SigningAlgorithm::ES256).unwrap_err();
        assert!(crate::error::report(&error).contains("does not accept private_key_jwt"));
        metadata.additional_fields.insert(
            "token_endpoint_auth_methods_supported".into(),
            serde_json::json!(["private_key_jwt"]),
        );
        metadata.additional_fields.insert(
            "token_endpoint_auth_signing_alg_values_supported".into(),
            serde_json::json!(["RS256"]),
        );
        let error = check_metadata(&metadata, SigningAlgorithm::ES256).unwrap_err();
        assert!(crate::error::report(&error).contains("signed with ES256 (it accepts RS256)"));
        assert!(check_metadata(&metadata, SigningAlgorithm::RS256).is_ok());

        let local = url::Url::parse("http://127.0.0.1:9/mcp").unwrap();
        let remote = url::Url::parse("http://example.com/mcp").unwrap();
        let plain = url::Url::parse("http://localhost:8/token").unwrap();
        assert!(allowed_endpoint(&local, &plain));
        assert!(!allowed_endpoint(&remote, &plain));
        assert!(!allowed_endpoint(
            &local,
            &url::Url::parse("http://example.com/token").unwrap()
        ));
        assert!(allowed_endpoint(
            &remote,
            &url::Url::parse("https://example.com/token").unwrap()
        ));
    }
}
