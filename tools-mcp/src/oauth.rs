//! OAuth 2.1 for an imported HTTP server, as the MCP authorization specification (2025-11-25
//! and later) describes it, on rmcp's `auth` (which builds on the `oauth2` crate).
//!
//! A source given an [`OAuth`] ([`McpSource::oauth`](crate::McpSource::oauth)) sends each
//! request with the access token its [`TokenStore`] holds (none at first). When the server
//! answers `401` with a `WWW-Authenticate` challenge, the client authorizes:
//!
//! 1. the protected resource metadata (RFC 9728) from the challenge's `resource_metadata`, or
//!    else from the well-known URIs of the server's URL (path-aware first); its `resource` must
//!    name the server's URL, or nothing is authorized (a server cannot send the client's
//!    authorization to another resource);
//! 2. the authorization server's metadata (RFC 8414, then OpenID Connect discovery, in the
//!    specification's order; the 2025-03-26 fallback to the server's own origin); PKCE `S256`
//!    must be supported;
//! 3. the client: a pre-registered one ([`OAuth::client_id`]), a client ID metadata document
//!    when the server supports them ([`OAuth::client_metadata_url`]), or dynamic client
//!    registration (RFC 7591);
//! 4. the authorization code with PKCE (`S256`), the `resource` parameter (RFC 8707) and the
//!    scopes (the challenge's `scope`, else the metadata's `scopes_supported`, else none;
//!    `offline_access` when the server offers it): the person's step, an [`Authorizer`] the
//!    application implements ([`LoopbackAuthorizer`] for a CLI), gives back the redirect's
//!    `code` and `state` within [`OAuth::authorize_timeout`], and `state` is checked (the
//!    person's time is not counted in the connection's bound,
//!    [`ImportOptions::connect_timeout`](crate::ImportOptions::connect_timeout));
//! 5. the token exchange, and the request again with the new token.
//!
//! Without a person: the client credentials grant ([`OAuth::client_credentials`] with a
//! secret, `OAuth::client_credentials_jwt` with a private key, feature `jwt`) and
//! enterprise-managed authorization ([`OAuth::enterprise`], cross-app access) replace steps 3
//! to 5. (The identity provider and token endpoints of the latter are reached through rmcp's
//! default OAuth HTTP client, which bounds bodies but filters no address.)
//!
//! An expired token is refreshed before it is sent; a token the server rejects with `401` is
//! refreshed once, then authorized again. A `403` with `error="insufficient_scope"` authorizes
//! again for the scopes granted and those the challenge names (step-up), at most
//! [`OAuth::max_step_ups`] times in a row. A refusal that cannot be answered fails with
//! [`MCP_AUTH_REQUIRED`](crate::codes::MCP_AUTH_REQUIRED) or
//! [`MCP_AUTH_FAILED`](crate::codes::MCP_AUTH_FAILED), saying what the server asked for and
//! why authorizing failed.
//!
//! Metadata, registration and token answers are read through rmcp's OAuth HTTP client: bodies
//! over 1 MiB are refused, a discovery redirect to another origin is not followed, and hosts
//! named by metadata may be loopback or private addresses only when the server's own URL is.
//! Tokens are never logged, put in a span, or shown by `Debug` or an error.
//!
//! One [`OAuth`] is for one server: its clones share the tokens and the authorization in
//! progress (several requests refused at once wait for one authorization).
//!
//! ```no_run
//! use std::time::Duration;
//! use tools_mcp::oauth::{LoopbackAuthorizer, OAuth};
//! use tools_mcp::token_store::FileTokenStore;
//! use tools_mcp::{ImportOptions, McpImport, McpSource};
//! use tools_runtime::ToolRuntime;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // The redirect comes back to 127.0.0.1:8765; the URL is printed for the person to open.
//! let authorizer = LoopbackAuthorizer::bind(8765)?;
//! let oauth = OAuth::new(authorizer)
//!     .client_name("my-agent")
//!     // The person has 10 minutes to log in (5 by default) ...
//!     .authorize_timeout(Duration::from_secs(600))
//!     .token_store(FileTokenStore::new("/home/me/.config/my-agent/tokens.json"));
//! let runtime = ToolRuntime::new();
//! let import = McpImport::connect(
//!     runtime.scope(),
//!     McpSource::http("http://127.0.0.1:3000/mcp").oauth(oauth),
//!     // ... which the connection's bound (the network's part only) does not count.
//!     ImportOptions::new().connect_timeout(Duration::from_secs(30)),
//! )
//! .await?;
//! # let _ = import; Ok(()) }
//! ```

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{
    AuthError as RmcpAuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, ClientCredentialsConfig, CredentialStore, StoredCredentials,
};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use crate::credential::{Challenge, Secret};
use crate::token_store::{MemoryTokenStore, TokenRecord, TokenStore, TokenStoreError};

#[cfg(feature = "jwt")]
mod assertion;
#[cfg(feature = "jwt")]
pub use assertion::{PrivateKey, PrivateKeyError, SigningAlgorithm};

/// The default of [`OAuth::max_step_ups`].
pub const DEFAULT_MAX_STEP_UPS: u32 = 2;

/// The default of [`OAuth::authorize_timeout`]: 5 minutes.
pub const DEFAULT_AUTHORIZE_TIMEOUT: Duration = Duration::from_secs(300);

/// A future of this module's traits.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the redirect of an authorization brought back. Its `Debug` redacts the code.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Callback {
    /// The authorization code.
    pub code: Secret,
    /// The `state` the redirect carried (the client checks it against the one it sent).
    pub state: String,
    /// The issuer (`iss`, RFC 9207), when the server sent one.
    pub issuer: Option<String>,
}

impl Callback {
    /// A callback of `code` and `state`.
    pub fn new(code: impl Into<Secret>, state: impl Into<String>) -> Callback {
        Callback {
            code: code.into(),
            state: state.into(),
            issuer: None,
        }
    }

    /// The same with the issuer `iss`.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Callback {
        self.issuer = Some(issuer.into());
        self
    }

    /// The callback of a redirect URL (`code`, `state` and `iss` of its query), or the
    /// authorization server's error it carries.
    pub fn from_redirect(url: &str) -> Result<Callback, AuthorizeError> {
        let url = url::Url::parse(url).map_err(|_| AuthorizeError::BadRedirect {
            reason: "not a URL",
        })?;
        let (mut code, mut state, mut issuer, mut error) = (None, None, None, None);
        for (key, value) in url.query_pairs() {
            match key.as_ref() {
                "code" => code = Some(value.into_owned()),
                "state" => state = Some(value.into_owned()),
                "iss" => issuer = Some(value.into_owned()),
                "error" => error = Some(value.into_owned()),
                _ => {}
            }
        }
        if let Some(error) = error {
            return Err(AuthorizeError::Denied {
                error: tools_schema::excerpt::cut(&error).into_owned(),
            });
        }
        let code = code.ok_or(AuthorizeError::BadRedirect {
            reason: "no `code`",
        })?;
        let state = state.ok_or(AuthorizeError::BadRedirect {
            reason: "no `state`",
        })?;
        Ok(Callback {
            code: Secret::new(code),
            state,
            issuer,
        })
    }
}

impl fmt::Debug for Callback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Callback")
            .field("code", &self.code)
            .field("state", &"[REDACTED]")
            .field("issuer", &self.issuer)
            .finish()
    }
}

/// Why the person's step of an authorization failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthorizeError {
    /// No redirect came back in time.
    #[error("no authorization redirect came back within {0:?}")]
    Timeout(Duration),
    /// The redirect's `state` is not the one sent (a forged or stale redirect).
    #[error("the authorization redirect's state does not match the request's")]
    StateMismatch,
    /// The authorization server sent an error instead of a code.
    #[error("the authorization server answered with the error `{error}`")]
    Denied {
        /// The `error` parameter.
        error: String,
    },
    /// The redirect could not be read.
    #[error("the authorization redirect is not usable: {reason}")]
    BadRedirect {
        /// What is wrong.
        reason: &'static str,
    },
    /// Listening for the redirect failed.
    #[error("cannot listen for the authorization redirect")]
    Io(#[from] std::io::Error),
    /// The application's own step failed.
    #[error("{0}")]
    Other(String),
}

/// The person's step of an authorization, which the application implements: show or open
/// `url` (the authorization server's page, with PKCE, `state` and `resource` in it), and give
/// back what the redirect to [`redirect_uri`](Authorizer::redirect_uri) brought.
pub trait Authorizer: Send + Sync + 'static {
    /// The redirect URI registered for the client and sent with each authorization.
    fn redirect_uri(&self) -> String;
    /// Has the person authorize at `url`, and returns the redirect's code and state.
    fn authorize(&self, url: String) -> BoxFuture<'_, Result<Callback, AuthorizeError>>;
}

/// How [`LoopbackAuthorizer`] shows the authorization URL.
type Show = Arc<dyn Fn(&str) + Send + Sync>;

/// The authorization step of a CLI: the redirect comes back to `http://127.0.0.1:<port>/callback`
/// on a listener bound when it is made; the URL is printed on stderr (or given to
/// [`LoopbackAuthorizer::on_url`], to open a browser, say); the redirect is awaited for
/// [`LoopbackAuthorizer::timeout`] (5 minutes by default) and its `state` checked against the
/// URL's. Other requests to the port are answered `404` and ignored.
#[derive(Clone)]
pub struct LoopbackAuthorizer {
    listener: Arc<std::net::TcpListener>,
    port: u16,
    timeout: Duration,
    show: Show,
}

impl fmt::Debug for LoopbackAuthorizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoopbackAuthorizer")
            .field("port", &self.port)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// The largest redirect request read (its request line and headers).
const MAX_REDIRECT_REQUEST: usize = 16 * 1024;

impl LoopbackAuthorizer {
    /// Binds `127.0.0.1:port` (`0` for any free port; the redirect URI then names the port
    /// given).
    pub fn bind(port: u16) -> Result<LoopbackAuthorizer, std::io::Error> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        Ok(LoopbackAuthorizer {
            listener: Arc::new(listener),
            port,
            timeout: Duration::from_secs(300),
            show: Arc::new(|url| {
                eprintln!("Open this URL to authorize:\n{url}");
            }),
        })
    }

    /// How long a redirect is awaited.
    pub fn timeout(mut self, timeout: Duration) -> LoopbackAuthorizer {
        self.timeout = timeout;
        self
    }

    /// What is done with the authorization URL (printing it on stderr by default).
    pub fn on_url(mut self, show: impl Fn(&str) + Send + Sync + 'static) -> LoopbackAuthorizer {
        self.show = Arc::new(show);
        self
    }

    /// The port listened on.
    pub fn port(&self) -> u16 {
        self.port
    }

    async fn wait(&self, expected_state: Option<String>) -> Result<Callback, AuthorizeError> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::from_std(self.listener.try_clone()?)?;
        loop {
            let (mut socket, _) = listener.accept().await?;
            let mut request = Vec::new();
            let mut buf = [0u8; 2048];
            // The request line and headers, bounded.
            while !request.windows(4).any(|w| w == b"\r\n\r\n")
                && request.len() < MAX_REDIRECT_REQUEST
            {
                match tokio::time::timeout(Duration::from_secs(10), socket.read(&mut buf)).await {
                    Ok(Ok(0)) | Err(_) | Ok(Err(_)) => break,
                    Ok(Ok(n)) => request.extend_from_slice(&buf[..n]),
                }
            }
            let line = String::from_utf8_lossy(&request);
            let target = line
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("GET "))
                .and_then(|l| l.split(' ').next())
                .filter(|t| t.starts_with("/callback"))
                .map(str::to_owned);
            let Some(target) = target else {
                let _ = socket
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                    )
                    .await;
                continue;
            };
            let callback = Callback::from_redirect(&format!("http://127.0.0.1{target}"));
            let checked = match callback {
                Ok(callback)
                    if expected_state
                        .as_deref()
                        .is_some_and(|s| s != callback.state) =>
                {
                    Err(AuthorizeError::StateMismatch)
                }
                other => other,
            };
            let body: &[u8] = if checked.is_ok() {
                b"Authorized. You may close this page."
            } else {
                b"Authorization failed. You may close this page."
            };
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.write_all(body).await;
            return checked;
        }
    }
}

impl Authorizer for LoopbackAuthorizer {
    fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    fn authorize(&self, url: String) -> BoxFuture<'_, Result<Callback, AuthorizeError>> {
        Box::pin(async move {
            let state = url::Url::parse(&url).ok().and_then(|u| {
                u.query_pairs()
                    .find(|(k, _)| k == "state")
                    .map(|(_, v)| v.into_owned())
            });
            (self.show)(&url);
            match tokio::time::timeout(self.timeout, self.wait(state)).await {
                Ok(callback) => callback,
                Err(_) => Err(AuthorizeError::Timeout(self.timeout)),
            }
        })
    }
}

/// Why an OAuth authorization failed (the source of
/// [`AuthError::Authorize`](crate::import_auth::AuthError::Authorize)). It carries no token.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// Discovery, registration or the token exchange failed, as rmcp's OAuth client says (a
    /// resource metadata document naming another resource among them).
    #[error("OAuth failed")]
    Protocol(#[source] Box<RmcpAuthError>),
    /// The person's step failed.
    #[error("the authorization step failed")]
    Authorize(#[source] AuthorizeError),
    /// The token store failed.
    #[error("the token store failed")]
    Store(#[source] TokenStoreError),
    /// The server asked for more scope again right after a step-up.
    #[error("the server still refuses after {0} scope step-ups in a row (OAuth::max_step_ups)")]
    StepUpLimit(u32),
    /// The server refused the token with `403` for no missing scope.
    #[error("the server refuses the token, and names no missing scope")]
    Forbidden,
    /// The person's step ([`Authorizer::authorize`]) did not finish within
    /// [`OAuth::authorize_timeout`].
    #[error(
        "the person's step of the authorization (Authorizer::authorize) did not finish within \
         {0:?} (OAuth::authorize_timeout)"
    )]
    AuthorizeTimeout(Duration),
}

/// Where an authorization's failure waits for the error of the request it failed.
#[derive(Debug, Clone, Default)]
pub(crate) struct FailureSlot(Arc<Mutex<Option<OAuthError>>>);

impl FailureSlot {
    pub(crate) fn take(&self) -> Option<OAuthError> {
        crate::lock(&self.0).take()
    }

    fn put(&self, error: OAuthError) {
        *crate::lock(&self.0) = Some(error);
    }
}

/// The client credentials grant's client and how it authenticates.
#[derive(Clone)]
enum MachineClient {
    /// A client secret (`client_secret_basic` or `client_secret_post`).
    Secret { id: String, secret: Secret },
    /// A signed client assertion (`private_key_jwt`, RFC 7523).
    #[cfg(feature = "jwt")]
    Key { id: String, key: PrivateKey },
}

impl MachineClient {
    fn id(&self) -> &str {
        match self {
            MachineClient::Secret { id, .. } => id,
            #[cfg(feature = "jwt")]
            MachineClient::Key { id, .. } => id,
        }
    }
}

/// Which client the authorization uses.
#[derive(Clone)]
enum Client {
    /// Dynamic client registration (RFC 7591), or a client ID metadata document.
    Dynamic,
    /// A pre-registered client.
    Registered { id: String, secret: Option<Secret> },
}

#[derive(Clone)]
struct Config {
    /// The person's step of the authorization code grant (none with client credentials).
    authorizer: Option<Arc<dyn Authorizer>>,
    /// The client credentials grant's client, when it is used.
    client_credentials: Option<MachineClient>,
    /// Enterprise-managed authorization, when it is used.
    enterprise: Option<Arc<Enterprise>>,
    client_name: String,
    client: Client,
    client_metadata_url: Option<String>,
    scopes: Vec<String>,
    store: Arc<dyn TokenStore>,
    max_step_ups: u32,
    authorize_timeout: Duration,
}

/// The state the clones of one [`OAuth`] share.
struct Shared {
    /// The manager of the tokens, once authorized (or loaded from the store).
    manager: tokio::sync::Mutex<Option<AuthorizationManager>>,
    /// Step-ups since a request last succeeded.
    step_ups: Mutex<u32>,
    failure: FailureSlot,
    /// The time the person's steps took, which the connection's bounds leave out.
    person: PersonTime,
}

/// How long the person's steps of authorizations took, and whether one is under way.
#[derive(Debug, Default)]
pub(crate) struct PersonTime {
    state: Mutex<PersonState>,
    /// Told when a step ends.
    ended: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct PersonState {
    /// When the step under way began.
    since: Option<tokio::time::Instant>,
    /// The time of the steps that ended.
    finished: Duration,
}

/// A step under way; it ends when this drops.
struct Step<'a>(&'a PersonTime);

impl Drop for Step<'_> {
    fn drop(&mut self) {
        {
            let mut state = crate::lock(&self.0.state);
            if let Some(since) = state.since.take() {
                state.finished += since.elapsed();
            }
        }
        self.0.ended.notify_waiters();
    }
}

impl PersonTime {
    fn begin(&self) -> Step<'_> {
        crate::lock(&self.state).since = Some(tokio::time::Instant::now());
        Step(self)
    }

    /// The time of all steps so far, the one under way included.
    fn spent(&self) -> Duration {
        let state = crate::lock(&self.state);
        state.finished + state.since.map(|s| s.elapsed()).unwrap_or_default()
    }

    fn in_step(&self) -> bool {
        crate::lock(&self.state).since.is_some()
    }
}

/// `future` within `timeout`, the time the person's step of `oauth`'s authorizations takes
/// meanwhile not counted ([`OAuth::authorize_timeout`] bounds that), or `None` when the time
/// ran out.
pub(crate) async fn within<F: Future>(
    timeout: Duration,
    oauth: Option<&OAuth>,
    future: F,
) -> Option<F::Output> {
    let Some(oauth) = oauth else {
        return tokio::time::timeout(timeout, future).await.ok();
    };
    let person = &oauth.shared.person;
    let start = tokio::time::Instant::now();
    let before = person.spent();
    let mut deadline = start + timeout;
    let mut future = std::pin::pin!(future);
    loop {
        let ended = person.ended.notified();
        tokio::select! {
            output = &mut future => return Some(output),
            () = tokio::time::sleep_until(deadline) => {}
        }
        if person.in_step() {
            // The clock stops while the person is on their step.
            tokio::select! {
                output = &mut future => return Some(output),
                () = ended => {}
            }
        }
        let extended = start + timeout + person.spent().saturating_sub(before);
        if extended <= tokio::time::Instant::now() && !person.in_step() {
            return None;
        }
        deadline = extended;
    }
}

/// OAuth 2.1 for one HTTP server (see the module doc). Cloning shares its tokens and state.
#[derive(Clone)]
pub struct OAuth {
    config: Arc<Config>,
    shared: Arc<Shared>,
}

impl PartialEq for OAuth {
    fn eq(&self, other: &OAuth) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

impl Eq for OAuth {}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let client = match &self.config.client {
            Client::Dynamic => "dynamic".to_owned(),
            Client::Registered { id, .. } => format!("pre-registered {id}"),
        };
        f.debug_struct("OAuth")
            .field(
                "redirect_uri",
                &self.config.authorizer.as_ref().map(|a| a.redirect_uri()),
            )
            .field(
                "client_credentials",
                &self
                    .config
                    .client_credentials
                    .as_ref()
                    .map(MachineClient::id),
            )
            .field("client_name", &self.config.client_name)
            .field("client", &client)
            .field("client_metadata_url", &self.config.client_metadata_url)
            .field("scopes", &self.config.scopes)
            .field("max_step_ups", &self.config.max_step_ups)
            .field("authorize_timeout", &self.config.authorize_timeout)
            .finish_non_exhaustive()
    }
}

impl OAuth {
    /// OAuth whose person's step is `authorizer`, with dynamic client registration, the scopes
    /// the server asks for and tokens in memory.
    pub fn new(authorizer: impl Authorizer) -> OAuth {
        OAuth::with(Some(Arc::new(authorizer)), None)
    }

    /// OAuth with the client credentials grant (a machine client, no person's step; the
    /// `io.modelcontextprotocol/oauth-client-credentials` extension): the client `id` and its
    /// `secret`, sent as the authorization server's metadata asks (`client_secret_basic` when it
    /// supports only that, else `client_secret_post`), with the `resource` parameter.
    pub fn client_credentials(id: impl Into<String>, secret: impl Into<Secret>) -> OAuth {
        OAuth::with(
            None,
            Some(MachineClient::Secret {
                id: id.into(),
                secret: secret.into(),
            }),
        )
    }

    /// OAuth with the client credentials grant, the client authenticated with `private_key_jwt`
    /// (RFC 7523; SEP-1046): a JWT assertion signed with `key`, `iss` and `sub` the client `id`,
    /// `aud` the authorization server's issuer, sent with the `resource` parameter and no
    /// secret (see [`PrivateKey`]). The authorization server's metadata must offer
    /// `private_key_jwt` and the key's algorithm when it lists them. Feature `jwt`.
    ///
    /// ```no_run
    /// use tools_mcp::McpSource;
    /// use tools_mcp::oauth::{OAuth, PrivateKey, SigningAlgorithm};
    ///
    /// # fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let pem = std::fs::read("/etc/my-agent/client-key.pem")?;
    /// let key = PrivateKey::from_pem(&pem, SigningAlgorithm::ES256)?;
    /// let source = McpSource::http("https://mcp.example.com/mcp")
    ///     .oauth(OAuth::client_credentials_jwt("my-agent", key));
    /// # let _ = source; Ok(()) }
    /// ```
    #[cfg(feature = "jwt")]
    pub fn client_credentials_jwt(id: impl Into<String>, key: PrivateKey) -> OAuth {
        OAuth::with(None, Some(MachineClient::Key { id: id.into(), key }))
    }

    /// OAuth with enterprise-managed authorization (cross-app access, SEP-990; no person's
    /// step): the enterprise identity provider exchanges its ID token for an identity
    /// assertion grant (RFC 8693 token exchange, `requested_token_type` ID-JAG, with the
    /// server's `resource` and its authorization server as `audience`), which the server's
    /// authorization server takes for an access token (the JWT bearer grant, RFC 7523, the
    /// client authenticated with `client_secret_basic`). The identity provider's endpoints are
    /// given; the authorization server's come from discovery.
    pub fn enterprise(enterprise: Enterprise) -> OAuth {
        let mut oauth = OAuth::with(None, None);
        Arc::make_mut(&mut oauth.config).enterprise = Some(Arc::new(enterprise));
        oauth
    }

    fn with(
        authorizer: Option<Arc<dyn Authorizer>>,
        client_credentials: Option<MachineClient>,
    ) -> OAuth {
        OAuth {
            config: Arc::new(Config {
                authorizer,
                client_credentials,
                enterprise: None,
                client_name: "agent-tools".to_owned(),
                client: Client::Dynamic,
                client_metadata_url: None,
                scopes: Vec::new(),
                store: Arc::new(MemoryTokenStore::new()),
                max_step_ups: DEFAULT_MAX_STEP_UPS,
                authorize_timeout: DEFAULT_AUTHORIZE_TIMEOUT,
            }),
            shared: Arc::new(Shared {
                manager: tokio::sync::Mutex::new(None),
                step_ups: Mutex::new(0),
                failure: FailureSlot::default(),
                person: PersonTime::default(),
            }),
        }
    }

    fn config(mut self, change: impl FnOnce(&mut Config)) -> OAuth {
        let config = Arc::make_mut(&mut self.config);
        change(config);
        self
    }

    /// The client name sent with dynamic registration.
    pub fn client_name(self, name: impl Into<String>) -> OAuth {
        let name = name.into();
        self.config(|c| c.client_name = name)
    }

    /// A pre-registered client (no registration): its id.
    pub fn client_id(self, id: impl Into<String>) -> OAuth {
        let id = id.into();
        self.config(|c| {
            let secret = match &c.client {
                Client::Registered { secret, .. } => secret.clone(),
                Client::Dynamic => None,
            };
            c.client = Client::Registered { id, secret };
        })
    }

    /// The pre-registered client's secret (with [`OAuth::client_id`]): a confidential client,
    /// which authenticates at the token endpoint as the server's metadata says
    /// (`client_secret_basic` or `client_secret_post`).
    pub fn client_secret(self, secret: impl Into<Secret>) -> OAuth {
        let secret = secret.into();
        self.config(|c| {
            if let Client::Registered { secret: s, .. } = &mut c.client {
                *s = Some(secret);
            } else {
                c.client = Client::Registered {
                    id: String::new(),
                    secret: Some(secret),
                };
            }
        })
    }

    /// The HTTPS URL of this client's metadata document (a client ID metadata document), used
    /// as its client id by an authorization server that supports them.
    pub fn client_metadata_url(self, url: impl Into<String>) -> OAuth {
        let url = url.into();
        self.config(|c| c.client_metadata_url = Some(url))
    }

    /// The scopes to ask for at first (by default those the challenge or the metadata name).
    pub fn scopes<I, S>(self, scopes: I) -> OAuth
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let scopes = scopes.into_iter().map(Into::into).collect();
        self.config(|c| c.scopes = scopes)
    }

    /// Where tokens are kept ([`MemoryTokenStore`] by default).
    pub fn token_store(self, store: impl TokenStore) -> OAuth {
        let store: Arc<dyn TokenStore> = Arc::new(store);
        self.config(|c| c.store = store)
    }

    /// How many scope step-ups in a row (each a new authorization) a `403 insufficient_scope`
    /// may cause before the request fails ([`DEFAULT_MAX_STEP_UPS`]).
    pub fn max_step_ups(self, max: u32) -> OAuth {
        self.config(|c| c.max_step_ups = max)
    }

    /// How long the person's step of an authorization ([`Authorizer::authorize`]) may take
    /// ([`DEFAULT_AUTHORIZE_TIMEOUT`], 5 minutes); past it the authorization fails with
    /// [`OAuthError::AuthorizeTimeout`]. This time is not counted in
    /// [`ImportOptions::connect_timeout`](crate::ImportOptions::connect_timeout) (nor in the
    /// probe's bound), which bounds the network's part of connecting only: a person may take
    /// minutes to log in while a connection's bound stays seconds. (A step-up that a call's
    /// `403` causes is still within that call's own timeout,
    /// [`ImportOptions::call_timeout`](crate::ImportOptions::call_timeout).)
    pub fn authorize_timeout(self, timeout: Duration) -> OAuth {
        self.config(|c| c.authorize_timeout = timeout)
    }

    pub(crate) fn failure(&self) -> &FailureSlot {
        &self.shared.failure
    }
}

/// Saves a token record that was obtained without rmcp (a signed assertion's or an enterprise
/// exchange's token) to `store`, on tokio's blocking pool.
async fn save_record(store: Arc<dyn TokenStore>, record: TokenRecord) -> Result<(), OAuthError> {
    tokio::task::spawn_blocking(move || store.save(&record))
        .await
        .map_err(|e| OAuthError::Store(TokenStoreError::Other(e.to_string())))?
        .map_err(OAuthError::Store)
}

/// rmcp's credential store over a [`TokenStore`], on tokio's blocking pool.
struct StoreAdapter(Arc<dyn TokenStore>);

impl StoreAdapter {
    async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn TokenStore) -> Result<T, TokenStoreError> + Send + 'static,
    ) -> Result<T, RmcpAuthError> {
        let store = self.0.clone();
        let answer = tokio::task::spawn_blocking(move || f(&*store))
            .await
            .map_err(|e| RmcpAuthError::CredentialStoreError(e.to_string()))?;
        answer.map_err(|e| RmcpAuthError::CredentialStoreError(crate::error::report(&e)))
    }
}

type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, RmcpAuthError>> + Send + 'a>>;

impl CredentialStore for StoreAdapter {
    fn load<'life0, 'async_trait>(
        &'life0 self,
    ) -> StoreFuture<'async_trait, Option<StoredCredentials>>
    where
        'life0: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(async move { self.run(|store| store.load().map(|r| r.map(|r| r.0))).await })
    }

    fn save<'life0, 'async_trait>(
        &'life0 self,
        credentials: StoredCredentials,
    ) -> StoreFuture<'async_trait, ()>
    where
        'life0: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(async move {
            self.run(move |store| store.save(&TokenRecord(credentials)))
                .await
        })
    }

    fn clear<'life0, 'async_trait>(&'life0 self) -> StoreFuture<'async_trait, ()>
    where
        'life0: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(async move { self.run(|store| store.clear()).await })
    }
}

/// Why a request is authorized again.
enum Refusal<'a> {
    /// `401`: the token is missing, expired or revoked.
    Unauthorized { challenge: &'a str },
    /// `403`: the token lacks a scope.
    Forbidden { challenge: &'a str },
}

impl OAuth {
    /// The token to send with a request: the store's (refreshed when it is about to expire),
    /// or none before the first authorization.
    async fn token(&self, url: &str) -> Option<String> {
        let mut manager = self.shared.manager.lock().await;
        if manager.is_none() {
            let store = self.config.store.clone();
            let record = tokio::task::spawn_blocking(move || store.load()).await;
            let record = match record {
                Ok(Ok(record)) => record,
                Ok(Err(e)) => {
                    self.shared.failure.put(OAuthError::Store(e));
                    return None;
                }
                Err(_) => return None,
            };
            if !record.as_ref().is_some_and(TokenRecord::has_token) {
                return None;
            }
            let mut loaded = match self.manager(url).await {
                Ok(loaded) => loaded,
                Err(e) => {
                    self.shared.failure.put(e);
                    return None;
                }
            };
            match loaded.initialize_from_store().await {
                Ok(true) => *manager = Some(loaded),
                Ok(false) => return None,
                Err(e) => {
                    self.shared.failure.put(OAuthError::Protocol(Box::new(e)));
                    return None;
                }
            }
        }
        let current = manager.as_ref()?;
        match current.get_access_token().await {
            Ok(token) => Some(token),
            Err(RmcpAuthError::AuthorizationRequired) => None,
            Err(e) => {
                tracing::debug!(error = %e, "the OAuth token could not be refreshed");
                None
            }
        }
    }

    /// A fresh manager for `url`, tokens in the configured store.
    async fn manager(&self, url: &str) -> Result<AuthorizationManager, OAuthError> {
        let mut manager = AuthorizationManager::new(url)
            .await
            .map_err(|e| OAuthError::Protocol(Box::new(e)))?;
        manager.set_credential_store(StoreAdapter(self.config.store.clone()));
        Ok(manager)
    }

    /// A new token after the refusal `refusal` of a request sent with `sent`, or why there is
    /// none (noted for the request's error too).
    async fn answer(
        &self,
        url: &str,
        sent: Option<&str>,
        refusal: Refusal<'_>,
    ) -> Result<String, ()> {
        let result = self.answer_inner(url, sent, refusal).await;
        if result.is_ok() {
            // A failure noted before is no longer the story of a refusal to come.
            let _ = self.shared.failure.take();
        }
        result.map_err(|e| {
            tracing::debug!(error = %crate::error::report(&e), "OAuth authorization failed");
            self.shared.failure.put(e);
        })
    }

    async fn answer_inner(
        &self,
        url: &str,
        sent: Option<&str>,
        refusal: Refusal<'_>,
    ) -> Result<String, OAuthError> {
        let mut manager = self.shared.manager.lock().await;
        let (challenge, step_up) = match refusal {
            Refusal::Unauthorized { challenge } => {
                // Another request may have authorized while this one waited.
                if let Some(current) = manager.as_ref()
                    && let Ok(token) = current.get_access_token().await
                    && Some(token.as_str()) != sent
                {
                    return Ok(token);
                }
                // A rejected token is refreshed once before a new authorization.
                if sent.is_some()
                    && let Some(current) = manager.as_ref()
                    && current.refresh_token().await.is_ok()
                    && let Ok(fresh) = current.get_access_token().await
                    && Some(fresh.as_str()) != sent
                {
                    return Ok(fresh);
                }
                (challenge, None)
            }
            Refusal::Forbidden { challenge } => {
                let parsed = Challenge::parse(403, challenge, url);
                if !parsed.is_insufficient_scope() {
                    return Err(OAuthError::Forbidden);
                }
                {
                    let mut step_ups = crate::lock(&self.shared.step_ups);
                    if *step_ups >= self.config.max_step_ups {
                        return Err(OAuthError::StepUpLimit(*step_ups));
                    }
                    *step_ups += 1;
                }
                let mut scopes: Vec<String> = match manager.as_ref() {
                    Some(current) => current.get_current_scopes().await,
                    None => Vec::new(),
                };
                for scope in parsed.scope.as_deref().unwrap_or("").split_whitespace() {
                    if !scopes.iter().any(|s| s == scope) {
                        scopes.push(scope.to_owned());
                    }
                }
                (challenge, Some(scopes))
            }
        };
        let authorized = self.authorize(url, challenge, step_up).await?;
        let token = authorized
            .get_access_token()
            .await
            .map_err(|e| OAuthError::Protocol(Box::new(e)))?;
        *manager = Some(authorized);
        Ok(token)
    }

    /// A whole authorization (see the module doc) after the challenge `challenge`, for
    /// `scopes` when given.
    async fn authorize(
        &self,
        url: &str,
        challenge: &str,
        scopes: Option<Vec<String>>,
    ) -> Result<AuthorizationManager, OAuthError> {
        let mut manager = self.manager(url).await?;
        let challenge = (!challenge.trim().is_empty()).then_some(challenge);
        let metadata = match manager.resolve_metadata_from_challenge(challenge).await {
            Ok(resolution) => resolution.metadata,
            Err(RmcpAuthError::AuthorizationServerMismatch {
                expected_issuer,
                received_issuer,
            }) if legacy_issuer(url, &expected_issuer, &received_issuer) => {
                legacy_metadata(url, &received_issuer).await?
            }
            Err(e) => return Err(OAuthError::Protocol(Box::new(e))),
        };
        manager.set_metadata(metadata.clone());
        let config = &self.config;
        #[cfg(feature = "jwt")]
        if let Some(MachineClient::Key { id, key }) = &config.client_credentials {
            let scopes = scopes.unwrap_or_else(|| config.scopes.clone());
            let record = assertion::exchange(url, &metadata, id, key, &scopes).await?;
            save_record(config.store.clone(), record).await?;
            return Ok(manager);
        }
        if let Some(MachineClient::Secret { id, secret }) = &config.client_credentials {
            let credentials = ClientCredentialsConfig::ClientSecret {
                client_id: id.clone(),
                client_secret: secret.expose().to_owned(),
                scopes: scopes.unwrap_or_else(|| config.scopes.clone()),
                resource: Some(url.to_owned()),
            };
            manager
                .validate_client_credentials_metadata(&credentials)
                .map_err(|e| OAuthError::Protocol(Box::new(e)))?;
            manager
                .configure_client_credentials(&credentials)
                .map_err(|e| OAuthError::Protocol(Box::new(e)))?;
            manager
                .exchange_client_credentials(&credentials)
                .await
                .map_err(|e| OAuthError::Protocol(Box::new(e)))?;
            return Ok(manager);
        }
        if let Some(enterprise) = &config.enterprise {
            let token = enterprise.exchange(url, &metadata).await?;
            let record = TokenRecord::bearer(&enterprise.client_id, &token, metadata.issuer)?;
            save_record(config.store.clone(), record).await?;
            return Ok(manager);
        }
        let Some(authorizer) = &config.authorizer else {
            return Err(OAuthError::Authorize(AuthorizeError::Other(
                "no Authorizer for the authorization code".to_owned(),
            )));
        };
        let mut request = AuthorizationRequest::new(authorizer.redirect_uri())
            .with_client_name(config.client_name.clone());
        request = match scopes {
            Some(scopes) if !scopes.is_empty() => request.with_scopes(scopes),
            _ if !config.scopes.is_empty() => request.with_scopes(config.scopes.clone()),
            _ => request.with_initial_scope_selection(),
        };
        if let Client::Registered { id, secret } = &config.client {
            if id.is_empty() {
                return Err(OAuthError::Authorize(AuthorizeError::Other(
                    "OAuth::client_secret was given without OAuth::client_id".to_owned(),
                )));
            }
            request = request.with_preregistered_client(id.clone());
            if let Some(secret) = secret {
                request = request.with_client_secret(secret.expose().to_owned());
            }
        }
        if let Some(url) = &config.client_metadata_url {
            request = request.with_client_metadata_url(url.clone());
        }
        let session = AuthorizationSession::new(manager, request)
            .await
            .map_err(|(_, e)| OAuthError::Protocol(Box::new(e)))?;
        let timeout = config.authorize_timeout;
        let step = self.shared.person.begin();
        let callback = tokio::time::timeout(
            timeout,
            authorizer.authorize(session.get_authorization_url().to_owned()),
        )
        .await;
        drop(step);
        let callback = callback
            .map_err(|_| OAuthError::AuthorizeTimeout(timeout))?
            .map_err(OAuthError::Authorize)?;
        session
            .handle_callback_with_issuer(
                callback.code.expose(),
                &callback.state,
                callback.issuer.as_deref(),
            )
            .await
            .map_err(|e| OAuthError::Protocol(Box::new(e)))?;
        Ok(session.auth_manager)
    }

    /// The request `call` sent with the token, authorized again (in a task of its own, which a
    /// dropped request does not stop) when the server refuses it.
    async fn with_token<T, F, Fut>(
        &self,
        url: &str,
        call: F,
    ) -> Result<T, StreamableHttpError<reqwest::Error>>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, StreamableHttpError<reqwest::Error>>>,
    {
        let mut token = self.token(url).await;
        let mut unauthorized_retried = false;
        loop {
            let answer = call(token.clone()).await;
            let refusal = match &answer {
                Err(StreamableHttpError::AuthRequired(e)) if !unauthorized_retried => {
                    unauthorized_retried = true;
                    Refusal::Unauthorized {
                        challenge: &e.www_authenticate_header,
                    }
                }
                Err(StreamableHttpError::InsufficientScope(e)) => Refusal::Forbidden {
                    challenge: &e.www_authenticate_header,
                },
                Err(StreamableHttpError::AuthRequired(_)) => return answer,
                Ok(_) => {
                    *crate::lock(&self.shared.step_ups) = 0;
                    return answer;
                }
                Err(_) => return answer,
            };
            let (owned, forbidden) = match refusal {
                Refusal::Unauthorized { challenge } => (challenge.to_owned(), false),
                Refusal::Forbidden { challenge } => (challenge.to_owned(), true),
            };
            let this = self.clone();
            let (url_owned, sent) = (url.to_owned(), token.clone());
            let task = tokio::spawn(async move {
                let refusal = if forbidden {
                    Refusal::Forbidden { challenge: &owned }
                } else {
                    Refusal::Unauthorized { challenge: &owned }
                };
                this.answer(&url_owned, sent.as_deref(), refusal).await
            });
            match task.await {
                Ok(Ok(fresh)) => token = Some(fresh),
                _ => return answer,
            }
        }
    }
}

/// Enterprise-managed authorization's parties (see [`OAuth::enterprise`]). Its `Debug` shows
/// no token or secret.
#[derive(Clone)]
#[non_exhaustive]
pub struct Enterprise {
    /// The identity provider's issuer.
    pub idp_issuer: String,
    /// The identity provider's token endpoint.
    pub idp_token_endpoint: String,
    /// This client's id at the identity provider (a public client there).
    pub idp_client_id: String,
    /// The enterprise ID token of the person the client acts for.
    pub id_token: Secret,
    /// This client's id at the server's authorization server.
    pub client_id: String,
    /// Its secret there.
    pub client_secret: Secret,
}

impl Enterprise {
    /// The parties: the identity provider's issuer, token endpoint and this client's id there,
    /// the ID token, and this client's id and secret at the server's authorization server.
    pub fn new(
        idp_issuer: impl Into<String>,
        idp_token_endpoint: impl Into<String>,
        idp_client_id: impl Into<String>,
        id_token: impl Into<Secret>,
        client_id: impl Into<String>,
        client_secret: impl Into<Secret>,
    ) -> Enterprise {
        Enterprise {
            idp_issuer: idp_issuer.into(),
            idp_token_endpoint: idp_token_endpoint.into(),
            idp_client_id: idp_client_id.into(),
            id_token: id_token.into(),
            client_id: client_id.into(),
            client_secret: client_secret.into(),
        }
    }

    /// The access token for `url` from the two exchanges, the authorization server's
    /// `metadata` naming its issuer and token endpoint.
    async fn exchange(
        &self,
        url: &str,
        metadata: &AuthorizationMetadata,
    ) -> Result<String, OAuthError> {
        use rmcp::transport::auth::enterprise::{
            EmaAuthorizationServer, EmaClientAuthentication, EmaExchangeRequest,
        };
        let failed = |what: String| OAuthError::Protocol(Box::new(RmcpAuthError::OAuthError(what)));
        let issuer = metadata
            .issuer
            .clone()
            .ok_or_else(|| failed("the authorization server's metadata names no issuer".into()))?;
        let idp = EmaAuthorizationServer::new(
            &self.idp_issuer,
            &self.idp_token_endpoint,
            &self.idp_client_id,
        );
        let resource_as =
            EmaAuthorizationServer::new(issuer, &metadata.token_endpoint, &self.client_id)
                .with_client_authentication(EmaClientAuthentication::ClientSecretBasic(
                    oauth2::ClientSecret::new(self.client_secret.expose().to_owned()),
                ));
        let http = rmcp::transport::auth::default_oauth_http_client()
            .map_err(|e| OAuthError::Protocol(Box::new(e)))?;
        let token =
            EmaExchangeRequest::new_with_id_token(idp, resource_as, url, self.id_token.expose())
                .exchange(&http, &http)
                .await
                .map_err(|e| failed(format!("enterprise-managed authorization: {e}")))?;
        Ok(token.access_token.secret().to_owned())
    }
}

impl fmt::Debug for Enterprise {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Enterprise")
            .field("idp_issuer", &self.idp_issuer)
            .field("idp_token_endpoint", &self.idp_token_endpoint)
            .field("idp_client_id", &self.idp_client_id)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// The origin of `url` (`scheme://host:port`), if it has one.
fn origin(url: &str) -> Option<String> {
    let url = url::Url::parse(url).ok()?;
    match url.origin() {
        url::Origin::Tuple(..) => Some(url.origin().ascii_serialization()),
        url::Origin::Opaque(_) => None,
    }
}

/// Whether a metadata document's issuer that is not the one RFC 8414 expects may still be taken:
/// only in the 2025-03-26 fallback (no protected resource metadata; the metadata read at the
/// server's own origin, whose issuer RFC 8414 expects to be that origin) and only when the
/// issuer it names is on that same origin (one party: the server is its own authorization
/// server, at a path). Metadata of any other issuer is refused as rmcp refuses it.
fn legacy_issuer(url: &str, expected: &str, received: &str) -> bool {
    let Some(server) = origin(url) else {
        return false;
    };
    expected.trim_end_matches('/') == server && origin(received).as_deref() == Some(&server)
}

/// The largest authorization server metadata document read here.
const MAX_METADATA: usize = 1 << 20;

/// The 2025-03-26 fallback's metadata (see [`legacy_issuer`]), read from the server's origin
/// without following redirects, bounded, and held to name `issuer`.
async fn legacy_metadata(url: &str, issuer: &str) -> Result<AuthorizationMetadata, OAuthError> {
    use futures::StreamExt;
    let failed = |what: &str| {
        OAuthError::Protocol(Box::new(RmcpAuthError::MetadataError(format!(
            "the authorization server metadata of {}: {what}",
            tools_schema::excerpt::cut(url)
        ))))
    };
    let server = origin(url).ok_or_else(|| failed("the server's URL has no origin"))?;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|_| failed("no HTTP client"))?;
    let response = client
        .get(format!("{server}/.well-known/oauth-authorization-server"))
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|_| failed("the request failed"))?;
    if !response.status().is_success() {
        return Err(failed("no document"));
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| failed("the body could not be read"))?;
        if body.len() + chunk.len() > MAX_METADATA {
            return Err(failed("larger than 1 MiB"));
        }
        body.extend_from_slice(&chunk);
    }
    let metadata: AuthorizationMetadata =
        serde_json::from_slice(&body).map_err(|_| failed("not a metadata document"))?;
    if metadata.issuer.as_deref() != Some(issuer) {
        return Err(failed("the issuer changed"));
    }
    Ok(metadata)
}

/// An HTTP client that authorizes with [`OAuth`] (see the module doc).
#[derive(Clone)]
pub(crate) struct Authorized<C> {
    pub(crate) inner: C,
    pub(crate) oauth: OAuth,
    pub(crate) url: Arc<str>,
}

impl<C> StreamableHttpClient for Authorized<C>
where
    C: StreamableHttpClient<Error = reqwest::Error> + Send + Sync + Clone + 'static,
{
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.oauth
            .with_token(&self.url, |token| {
                self.inner.post_message(
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    token,
                    custom_headers.clone(),
                )
            })
            .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.oauth
            .with_token(&self.url, |token| {
                self.inner.post_message_with_response_limits(
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    token,
                    custom_headers.clone(),
                    limits,
                )
            })
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        let token = self.oauth.token(&self.url).await;
        self.inner
            .delete_session(uri, session_id, token, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.oauth
            .with_token(&self.url, |token| {
                self.inner.get_stream(
                    uri.clone(),
                    session_id.clone(),
                    last_event_id.clone(),
                    token,
                    custom_headers.clone(),
                )
            })
            .await
    }
}
