//! [`JwtVerifier`]: JWT access tokens checked against the issuer's JWKS (feature `jwt`).

use std::str::FromStr as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use futures::future::BoxFuture;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, KeyAlgorithm};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, Validation};
use serde_json::Value;
use tools_runtime::Principal;

use crate::auth::{MAX_LEEWAY, TokenRefusal, TokenVerifier, principal_of_claims};

/// The longest key set read.
const MAX_JWKS: usize = 1024 * 1024;
/// The most keys kept of one key set.
const MAX_KEYS: usize = 64;

/// JWT access tokens (RFC 9068) checked against the issuer's key set (JWKS): the signature
/// with a key of the set whose `kid` the token names (a token without `kid` needs a set of one
/// key of its algorithm), `iss` equal to the issuer, `aud` naming this server's resource,
/// `exp` required and `nbf` when present, with a bounded clock skew ([`leeway`](Self::leeway),
/// 60 s by default, at most 5 minutes). The principal is [`principal_of_claims`] of the payload.
///
/// - Algorithms: asymmetric only (RS256 by default; [`algorithms`](Self::algorithms) widens
///   it to RS384/512, PS256/384/512, ES256/384, EdDSA). `alg: none` and every HMAC algorithm
///   are refused ([`TokenRefusal::Algorithm`]) whatever the set says, so an RSA public key can
///   never be used as an HMAC secret (algorithm confusion); a key whose JWK names another
///   `alg`, or of another family than the token's algorithm, does not verify it. Symmetric
///   (`oct`) keys of a set are dropped, and a header's `jwk`/`jku` is never looked at.
/// - Keys: fetched on the first token, kept, and fetched again when a token names a `kid` the
///   set lacks or the set is older than [`max_age`](Self::max_age) (1 hour) — but never twice
///   within [`refresh_interval`](Self::refresh_interval) (30 s): a flood of tokens naming
///   unknown keys costs one fetch per interval, not one per token. One fetch at a time (the
///   others wait for it), bounded by [`timeout`](Self::timeout) (5 s) and 1 MiB. A key set that
///   cannot be fetched refuses with [`TokenRefusal::Unavailable`] (`503`) while no set younger
///   than the maximum age is held.
/// - Work per token before any key is looked for: its length (the front), the three segments,
///   the header's `alg`. A malformed token or a refused algorithm fetches nothing.
#[derive(Debug, Clone)]
pub struct JwtVerifier {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    issuer: String,
    audience: String,
    jwks_uri: String,
    algorithms: Vec<Algorithm>,
    leeway: Duration,
    refresh_interval: Duration,
    max_age: Duration,
    timeout: Duration,
    http: reqwest::Client,
    keys: tokio::sync::Mutex<Keys>,
}

#[derive(Debug, Default)]
struct Keys {
    set: Arc<Vec<Jwk>>,
    /// When the set was fetched.
    fetched: Option<Instant>,
    /// When a fetch was last tried.
    tried: Option<Instant>,
}

impl JwtVerifier {
    /// Tokens of `issuer` for `audience` (this server's resource URI), checked with the keys at
    /// `jwks_uri` (the issuer's metadata names it, `jwks_uri`).
    pub fn new(
        issuer: impl Into<String>,
        audience: impl Into<String>,
        jwks_uri: impl Into<String>,
    ) -> JwtVerifier {
        if jsonwebtoken::crypto::CryptoProvider::try_get_default().is_none() {
            // Both jsonwebtoken backends are built (another crate asked for aws-lc-rs):
            // RustCrypto, as this crate asks. Failing means one is installed already.
            let _ = jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER.install_default();
        }
        JwtVerifier {
            inner: Arc::new(Inner {
                issuer: issuer.into(),
                audience: audience.into(),
                jwks_uri: jwks_uri.into(),
                algorithms: vec![Algorithm::RS256],
                leeway: Duration::from_secs(60),
                refresh_interval: Duration::from_secs(30),
                max_age: Duration::from_secs(3600),
                timeout: Duration::from_secs(5),
                http: reqwest::Client::new(),
                keys: tokio::sync::Mutex::new(Keys::default()),
            }),
        }
    }

    fn with(self, change: impl FnOnce(&mut Inner)) -> JwtVerifier {
        let mut inner = Arc::try_unwrap(self.inner).unwrap_or_else(|shared| Inner {
            issuer: shared.issuer.clone(),
            audience: shared.audience.clone(),
            jwks_uri: shared.jwks_uri.clone(),
            algorithms: shared.algorithms.clone(),
            leeway: shared.leeway,
            refresh_interval: shared.refresh_interval,
            max_age: shared.max_age,
            timeout: shared.timeout,
            http: shared.http.clone(),
            keys: tokio::sync::Mutex::new(Keys::default()),
        });
        change(&mut inner);
        JwtVerifier {
            inner: Arc::new(inner),
        }
    }

    /// The algorithms accepted (RS256 by default). HMAC algorithms are dropped: a resource
    /// server holds no shared secret, and accepting one is the algorithm-confusion hole.
    pub fn algorithms(self, algorithms: impl IntoIterator<Item = Algorithm>) -> JwtVerifier {
        let list: Vec<Algorithm> = algorithms
            .into_iter()
            .filter(|a| a.family() != AlgorithmFamily::Hmac)
            .collect();
        self.with(|inner| inner.algorithms = list)
    }

    /// The clock skew allowed on `exp` and `nbf` (60 s by default; at most 5 minutes).
    pub fn leeway(self, leeway: Duration) -> JwtVerifier {
        self.with(|inner| inner.leeway = leeway.min(MAX_LEEWAY))
    }

    /// The least time between two fetches of the key set (30 s by default).
    pub fn refresh_interval(self, interval: Duration) -> JwtVerifier {
        self.with(|inner| inner.refresh_interval = interval)
    }

    /// How long a fetched key set is used before it is fetched again (1 hour by default).
    pub fn max_age(self, age: Duration) -> JwtVerifier {
        self.with(|inner| inner.max_age = age)
    }

    /// The bound of one key set fetch (5 s by default).
    pub fn timeout(self, timeout: Duration) -> JwtVerifier {
        self.with(|inner| inner.timeout = timeout)
    }

    async fn check(&self, token: &str) -> Result<Principal, TokenRefusal> {
        let inner = &self.inner;
        let alg = header_alg(token)?;
        let algorithm = Algorithm::from_str(&alg)
            .ok()
            .filter(|a| inner.algorithms.contains(a))
            .ok_or(TokenRefusal::Algorithm { alg })?;
        let header =
            jsonwebtoken::decode_header(token).map_err(|e| TokenRefusal::Malformed(Box::new(e)))?;
        let kid = header.kid;
        // The refusal names the kid (it is the sender's text): at most 200 characters of it.
        let named = |kid: &Option<String>| {
            kid.as_deref()
                .map(|k| tools_schema::excerpt::cut(k).into_owned())
        };
        let key = match self.find(kid.as_deref(), algorithm, false).await? {
            Some(key) => key,
            None => self
                .find(kid.as_deref(), algorithm, true)
                .await?
                .ok_or_else(|| TokenRefusal::UnknownKey { kid: named(&kid) })?,
        };
        let mut validation = Validation::new(algorithm);
        validation.leeway = inner.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_issuer(&[inner.issuer.as_str()]);
        validation.set_audience(&[inner.audience.as_str()]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let data = jsonwebtoken::decode::<serde_json::Map<String, Value>>(token, &key, &validation)
            .map_err(refusal)?;
        principal_of_claims(data.claims)
    }

    /// The key for `kid` and `algorithm` from the held set; `refresh` fetches the set again
    /// first (within the rate limit). A stale set is fetched again either way.
    async fn find(
        &self,
        kid: Option<&str>,
        algorithm: Algorithm,
        refresh: bool,
    ) -> Result<Option<DecodingKey>, TokenRefusal> {
        let inner = &self.inner;
        let set = {
            let mut keys = inner.keys.lock().await;
            let stale = keys.fetched.is_none_or(|at| at.elapsed() >= inner.max_age);
            let may_try = keys
                .tried
                .is_none_or(|at| at.elapsed() >= inner.refresh_interval);
            if (stale || refresh) && may_try {
                keys.tried = Some(Instant::now());
                match self.fetch().await {
                    Ok(set) => {
                        keys.set = Arc::new(set);
                        keys.fetched = Some(Instant::now());
                    }
                    Err(error) if stale => {
                        keys.set = Arc::new(Vec::new());
                        return Err(error);
                    }
                    Err(error) => tracing::warn!(
                        reason = %crate::error::report(&error),
                        "JWKS refresh failed; the held key set stays"
                    ),
                }
            } else if stale && keys.set.is_empty() && !refresh {
                return Err(TokenRefusal::Unavailable(
                    "no key set (the last fetch failed; retried after the refresh interval)".into(),
                ));
            }
            keys.set.clone()
        };
        let mut fitting = set.iter().filter(|jwk| fits(jwk, algorithm));
        let jwk = match kid {
            Some(kid) => fitting.find(|jwk| jwk.common.key_id.as_deref() == Some(kid)),
            None => match (fitting.next(), fitting.next()) {
                (Some(only), None) => Some(only),
                _ => None,
            },
        };
        Ok(jwk
            .and_then(|jwk| DecodingKey::from_jwk(jwk).ok())
            .filter(|key| key.family() == algorithm.family()))
    }

    async fn fetch(&self) -> Result<Vec<Jwk>, TokenRefusal> {
        let inner = &self.inner;
        let unavailable = |e: reqwest::Error| TokenRefusal::Unavailable(Box::new(e));
        let mut response = inner
            .http
            .get(&inner.jwks_uri)
            .timeout(inner.timeout)
            .header("accept", "application/json")
            .send()
            .await
            .map_err(unavailable)?;
        if !response.status().is_success() {
            return Err(TokenRefusal::Unavailable(
                format!("the key set answered {}", response.status()).into(),
            ));
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(unavailable)? {
            if bytes.len() + chunk.len() > MAX_JWKS {
                return Err(TokenRefusal::Unavailable(
                    "the key set is over 1 MiB".into(),
                ));
            }
            bytes.extend_from_slice(&chunk);
        }
        let document: Value =
            serde_json::from_slice(&bytes).map_err(|e| TokenRefusal::Unavailable(Box::new(e)))?;
        let Some(Value::Array(listed)) = document.get("keys") else {
            return Err(TokenRefusal::Unavailable(
                "the key set has no `keys` list".into(),
            ));
        };
        let keys: Vec<Jwk> = listed
            .iter()
            .filter_map(|key| serde_json::from_value::<Jwk>(key.clone()).ok())
            .filter(|jwk| !matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_)))
            .take(MAX_KEYS)
            .collect();
        tracing::debug!(keys = keys.len(), "JWKS fetched");
        Ok(keys)
    }
}

/// Whether `jwk` may verify a token of `algorithm`: not for encryption only, and naming that
/// algorithm when it names one.
fn fits(jwk: &Jwk, algorithm: Algorithm) -> bool {
    let use_ok = !matches!(
        jwk.common.public_key_use,
        Some(jsonwebtoken::jwk::PublicKeyUse::Encryption)
    );
    let alg_ok = match jwk.common.key_algorithm {
        None => true,
        Some(KeyAlgorithm::UNKNOWN_ALGORITHM) => false,
        // KeyAlgorithm's text (its Display) is the JWA name, as Algorithm's FromStr reads it.
        Some(named) => Algorithm::from_str(&named.to_string()).ok() == Some(algorithm),
    };
    use_ok && alg_ok
}

/// The `alg` of a compact JWS's header, read before anything else is.
fn header_alg(token: &str) -> Result<String, TokenRefusal> {
    let malformed = |why: &str| TokenRefusal::Malformed(why.to_owned().into());
    let mut segments = token.split('.');
    let (Some(header), Some(_), Some(_), None) = (
        segments.next(),
        segments.next(),
        segments.next(),
        segments.next(),
    ) else {
        return Err(malformed("not three dot-separated segments"));
    };
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(header)
        .map_err(|e| TokenRefusal::Malformed(Box::new(e)))?;
    let header: serde_json::Map<String, Value> =
        serde_json::from_slice(&bytes).map_err(|e| TokenRefusal::Malformed(Box::new(e)))?;
    match header.get("alg") {
        Some(Value::String(alg)) => Ok(tools_schema::excerpt::cut(alg).into_owned()),
        _ => Err(malformed("the header has no `alg`")),
    }
}

fn refusal(error: jsonwebtoken::errors::Error) -> TokenRefusal {
    use jsonwebtoken::errors::ErrorKind;
    match error.kind() {
        ErrorKind::ExpiredSignature => TokenRefusal::Expired,
        ErrorKind::ImmatureSignature => TokenRefusal::NotYetValid,
        ErrorKind::InvalidIssuer => TokenRefusal::Issuer,
        ErrorKind::InvalidAudience => TokenRefusal::Audience,
        ErrorKind::InvalidSignature => TokenRefusal::Signature(Box::new(error)),
        ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName => TokenRefusal::Algorithm {
            alg: "(not the key's)".to_owned(),
        },
        ErrorKind::MissingRequiredClaim(claim) => TokenRefusal::Claims {
            reason: format!("`{claim}` is missing"),
        },
        ErrorKind::InvalidClaimFormat(claim) => TokenRefusal::Claims {
            reason: format!("`{claim}` is of the wrong type"),
        },
        _ => TokenRefusal::Malformed(Box::new(error)),
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, TokenRefusal>> {
        Box::pin(self.check(token))
    }
}
