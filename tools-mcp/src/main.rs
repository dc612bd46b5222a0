//! `tools-mcp serve`: serves a small demo scope as an MCP server, over stdio (the default) or
//! streamable HTTP (`--http 127.0.0.1:8080`; `--sessions` keeps 2025-11-25 sessions).
//! `--max-message-size BYTES` sets the limit of one incoming message (16 MiB by default).
//!
//! The scope holds `echo` (a guard refuses the message `forbidden`), `add` (structured output),
//! `wait` (sleeps, observing cancellation), `count` (reports progress: a client that sends a
//! progress token gets `notifications/progress`), `job` (long-running: like `count`, but a client
//! that supports MCP tasks gets a task for each call), `enable_extra` (registers `extra`, so
//! clients see `list_changed`) and `stats` (how many `wait` and `job` calls were cancelled). With `--http`, the bound
//! address is printed on stdout as `listening on ADDR (cancellation: ...)`, the parenthesis
//! saying what cancels a call in that mode ([`HttpOptions::cancellation`]). The server stops
//! when stdin closes (stdio), or on SIGINT or SIGTERM (both modes).
//!
//! With `--http`, the endpoint can be an OAuth resource server ([`tools_mcp::auth`]): every
//! request then needs a bearer token for the resource `--resource URI` (its audience), checked
//! by one verifier:
//!
//! - `--jwt-issuer URL --jwks-url URL` (built with the `jwt` feature): JWT access tokens of that
//!   issuer, signed with a key of that JWKS;
//! - `--introspection-url URL`: opaque tokens asked about at that RFC 7662 endpoint, with the
//!   client credentials read from the environment variables that
//!   `--introspection-client-id-env VAR` and `--introspection-client-secret-env VAR` name (a
//!   secret never stands on the command line, where `ps` shows it).
//!
//! `--authorization-server URL` (repeatable; the JWT issuer by default) and `--scope SCOPE`
//! (repeatable) are what the protected resource metadata advertises (`authorization_servers`,
//! `scopes_supported`); `--required-scope SCOPE` (repeatable) is needed by every request;
//! `--require-scope TOOL=SCOPE` (repeatable) is needed to call `TOOL` (the step-up `403`). A
//! bearer flag without `--http`, a resource without a verifier (or the reverse), two verifiers,
//! half of a pair, an unset variable or a `TOOL=SCOPE` without its `=` is refused at start
//! with a line on stderr naming it and exit code 2.
//!
//! Built with the `otel` feature, it exports its spans over OTLP as the `OTEL_*` variables say
//! (`tools_otel::init("tools-mcp")`: service `tools-mcp` unless `OTEL_SERVICE_NAME` names
//! another), and a `tools/call` whose `_meta` carries a `traceparent` runs in the caller's
//! trace. The last spans are exported when the server stops.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use serde_json::json;
use tools_mcp::{HttpOptions, McpServer};
use tools_runtime::progress::Progress;
use tools_runtime::{
    CancellationToken, Output, Scope, ToolDefinition, ToolError, ToolRunContext, ToolRuntime,
    ToolSchema, tool,
};

static CANCELLED: AtomicU64 = AtomicU64::new(0);

/// Echo a message back.
#[tool(concurrency_safe)]
fn echo(
    /// The message.
    message: String,
) -> String {
    message
}

/// A sum.
#[derive(Serialize, ToolSchema)]
struct Sum {
    /// a + b.
    sum: i64,
}

/// Add two integers.
#[tool(
    concurrency_safe,
    read_only,
    open_world = false,
    title = "Add two integers"
)]
fn add(a: i64, b: i64) -> Sum {
    Sum {
        sum: a.saturating_add(b),
    }
}

/// How long a wait took.
#[derive(Serialize, ToolSchema)]
struct Waited {
    /// Milliseconds waited.
    ms: u64,
}

/// Wait `ms` milliseconds (at most a minute), stopping early when cancelled.
#[tool]
async fn wait(ms: u64, #[context] cancel: CancellationToken) -> Result<Waited, std::io::Error> {
    let ms = ms.min(60_000);
    tokio::select! {
        () = cancel.cancelled() => {
            CANCELLED.fetch_add(1, Ordering::SeqCst);
            Err(std::io::Error::other("cancelled"))
        }
        () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(Waited { ms }),
    }
}

/// How far a count went.
#[derive(Serialize, ToolSchema)]
struct Counted {
    /// The last number counted.
    counted: u32,
}

/// Counts from 1 to `to` (at most 1000), reporting each number as progress (total `to`, message
/// `n of to`) and waiting `ms` milliseconds (at most a second) after each; `ABORTED` when
/// cancelled. The last number counted.
async fn count_to(to: u32, ms: u64, ctx: &ToolRunContext) -> Result<u32, ToolError> {
    let to = to.min(1000);
    let pause = Duration::from_millis(ms.min(1000));
    for n in 1..=to {
        ctx.progress(
            Progress::new(f64::from(n))
                .with_total(f64::from(to))
                .with_message(format!("{n} of {to}")),
        )?;
        tokio::select! {
            () = ctx.cancellation().cancelled() => {
                return Err(ToolError::with_code(tools_runtime::codes::ABORTED, "cancelled"));
            }
            () = tokio::time::sleep(pause) => {}
        }
    }
    Ok(to)
}

/// Count from 1 to `to` (at most 1000), reporting each number as progress (total `to`, message
/// `n of to`) and waiting `ms` milliseconds (at most a second) after each; stops early when
/// cancelled.
#[tool]
async fn count(to: u32, ms: u64, #[context] ctx: ToolRunContext) -> Result<Counted, ToolError> {
    Ok(Counted {
        counted: count_to(to, ms, &ctx).await?,
    })
}

/// How far a job went.
#[derive(Serialize, ToolSchema)]
struct Finished {
    /// The steps taken.
    steps: u32,
}

/// A long-running job of `steps` steps (at most 1000), each reported as progress and taking `ms`
/// milliseconds (at most a second); stops early when cancelled. A client that supports MCP
/// tasks gets a task for each call.
#[tool(long_running)]
async fn job(steps: u32, ms: u64, #[context] ctx: ToolRunContext) -> Result<Finished, ToolError> {
    match count_to(steps, ms, &ctx).await {
        Ok(steps) => Ok(Finished { steps }),
        Err(error) => {
            if ctx.cancellation().is_cancelled() {
                CANCELLED.fetch_add(1, Ordering::SeqCst);
            }
            Err(error)
        }
    }
}

/// Counters of this server.
#[derive(Serialize, ToolSchema)]
struct Stats {
    /// `wait` and `job` calls that were cancelled.
    cancelled: u64,
}

/// This server's counters.
#[tool(concurrency_safe)]
fn stats() -> Stats {
    Stats {
        cancelled: CANCELLED.load(Ordering::SeqCst),
    }
}

const USAGE: &str = "usage: tools-mcp serve [--http ADDR] [--sessions] [--max-message-size BYTES]
    [--resource URI (--jwt-issuer URL --jwks-url URL | --introspection-url URL
     [--introspection-client-id-env VAR --introspection-client-secret-env VAR])
     [--authorization-server URL]... [--scope SCOPE]... [--required-scope SCOPE]...
     [--require-scope TOOL=SCOPE]...]";

/// A bearer flag the binary cannot act on: the message on stderr, exit code 2.
#[derive(Debug, thiserror::Error)]
enum FlagError {
    #[error("{flag} applies to --http only: stdio has no bearer token")]
    BearerOnStdio { flag: &'static str },
    #[error(
        "bearer auth needs --resource URI, the endpoint's canonical URI (the tokens' audience)"
    )]
    NoResource,
    #[error("--resource needs a verifier: --jwt-issuer with --jwks-url, or --introspection-url")]
    NoVerifier,
    #[error("one verifier at a time: --jwt-issuer/--jwks-url or --introspection-url, not both")]
    TwoVerifiers,
    #[error("--jwt-issuer and --jwks-url go together")]
    JwtIncomplete,
    #[error("--jwt-issuer and --jwks-url need a build with the `jwt` feature")]
    #[cfg_attr(feature = "jwt", allow(dead_code))]
    NoJwtFeature,
    #[error(
        "--introspection-client-id-env and --introspection-client-secret-env go together, \
         with --introspection-url"
    )]
    CredentialsIncomplete,
    #[error("the environment variable {var} (named by {flag}) is not set, empty or not UTF-8")]
    MissingEnv { var: String, flag: &'static str },
    #[error("--require-scope {arg}: not TOOL=SCOPE")]
    BadToolScope { arg: String },
}

impl FlagError {
    /// The stable code of the refusal.
    fn code(&self) -> &'static str {
        match self {
            FlagError::BearerOnStdio { .. } => "SERVE_BEARER_ON_STDIO",
            FlagError::NoResource => "SERVE_NO_RESOURCE",
            FlagError::NoVerifier => "SERVE_NO_VERIFIER",
            FlagError::TwoVerifiers => "SERVE_TWO_VERIFIERS",
            FlagError::JwtIncomplete => "SERVE_JWT_INCOMPLETE",
            FlagError::NoJwtFeature => "SERVE_NO_JWT_FEATURE",
            FlagError::CredentialsIncomplete => "SERVE_CREDENTIALS_INCOMPLETE",
            FlagError::MissingEnv { .. } => "SERVE_MISSING_ENV",
            FlagError::BadToolScope { .. } => "SERVE_BAD_TOOL_SCOPE",
        }
    }
}

/// The bearer flags, as given.
#[derive(Debug, Default)]
struct AuthFlags {
    /// The first bearer flag given (what a refusal on stdio names).
    first: Option<&'static str>,
    resource: Option<String>,
    jwt_issuer: Option<String>,
    jwks_url: Option<String>,
    introspection_url: Option<String>,
    client_id_env: Option<String>,
    client_secret_env: Option<String>,
    authorization_servers: Vec<String>,
    scopes: Vec<String>,
    required: Vec<String>,
    tool_scopes: Vec<String>,
}

impl AuthFlags {
    /// Reads the bearer flag `flag` with its value; `false` when `flag` is not one.
    fn take(&mut self, flag: &str, value: impl FnOnce() -> String) -> bool {
        let (name, slot): (&'static str, &mut Vec<String>) = match flag {
            "--authorization-server" => ("--authorization-server", &mut self.authorization_servers),
            "--scope" => ("--scope", &mut self.scopes),
            "--required-scope" => ("--required-scope", &mut self.required),
            "--require-scope" => ("--require-scope", &mut self.tool_scopes),
            _ => {
                let (name, one) = match flag {
                    "--resource" => ("--resource", &mut self.resource),
                    "--jwt-issuer" => ("--jwt-issuer", &mut self.jwt_issuer),
                    "--jwks-url" => ("--jwks-url", &mut self.jwks_url),
                    "--introspection-url" => ("--introspection-url", &mut self.introspection_url),
                    "--introspection-client-id-env" => {
                        ("--introspection-client-id-env", &mut self.client_id_env)
                    }
                    "--introspection-client-secret-env" => (
                        "--introspection-client-secret-env",
                        &mut self.client_secret_env,
                    ),
                    _ => return false,
                };
                *one = Some(value());
                self.first.get_or_insert(name);
                return true;
            }
        };
        slot.push(value());
        self.first.get_or_insert(name);
        true
    }

    /// The bearer front these flags describe (`None` when none was given), for an HTTP
    /// endpoint when `http`.
    fn build(self, http: bool) -> Result<Option<tools_mcp::BearerAuth>, FlagError> {
        let Some(first) = self.first else {
            return Ok(None);
        };
        if !http {
            return Err(FlagError::BearerOnStdio { flag: first });
        }
        let resource = self.resource.ok_or(FlagError::NoResource)?;
        let jwt = self.jwt_issuer.is_some() || self.jwks_url.is_some();
        let introspection = self.introspection_url.is_some();
        if jwt && introspection {
            return Err(FlagError::TwoVerifiers);
        }
        if self.client_id_env.is_some() != self.client_secret_env.is_some()
            || (self.client_id_env.is_some() && !introspection)
        {
            return Err(FlagError::CredentialsIncomplete);
        }
        let mut tool_scopes = Vec::with_capacity(self.tool_scopes.len());
        for arg in self.tool_scopes {
            match arg.split_once('=') {
                Some((tool, scope)) if !tool.is_empty() && !scope.is_empty() => {
                    tool_scopes.push((tool.to_owned(), scope.to_owned()));
                }
                _ => return Err(FlagError::BadToolScope { arg }),
            }
        }
        let mut servers = self.authorization_servers;
        let verifier: Arc<dyn tools_mcp::TokenVerifier> = if jwt {
            let (Some(issuer), Some(jwks)) = (self.jwt_issuer, self.jwks_url) else {
                return Err(FlagError::JwtIncomplete);
            };
            if servers.is_empty() {
                servers.push(issuer.clone());
            }
            jwt_verifier(issuer, &resource, jwks)?
        } else if let Some(url) = self.introspection_url {
            let mut verifier = tools_mcp::IntrospectionVerifier::new(url, &resource);
            if let (Some(id_var), Some(secret_var)) = (self.client_id_env, self.client_secret_env) {
                let id = env_value(id_var, "--introspection-client-id-env")?;
                let secret = env_value(secret_var, "--introspection-client-secret-env")?;
                verifier = verifier.client_credentials(id, secret);
            }
            Arc::new(verifier)
        } else {
            return Err(FlagError::NoVerifier);
        };
        let mut auth = tools_mcp::BearerAuth::with_shared(verifier, resource)
            .scopes_supported(self.scopes)
            .required_scopes(self.required);
        for server in servers {
            auth = auth.authorization_server(server);
        }
        for (tool, scope) in tool_scopes {
            auth = auth.require_scope(tool, scope);
        }
        Ok(Some(auth))
    }
}

/// The value of the environment variable `var` that `flag` names.
fn env_value(var: String, flag: &'static str) -> Result<String, FlagError> {
    match std::env::var(&var) {
        Ok(value) if !value.is_empty() => Ok(value),
        _ => Err(FlagError::MissingEnv { var, flag }),
    }
}

#[cfg(feature = "jwt")]
fn jwt_verifier(
    issuer: String,
    resource: &str,
    jwks: String,
) -> Result<Arc<dyn tools_mcp::TokenVerifier>, FlagError> {
    Ok(Arc::new(tools_mcp::JwtVerifier::new(
        issuer, resource, jwks,
    )))
}

#[cfg(not(feature = "jwt"))]
fn jwt_verifier(
    _issuer: String,
    _resource: &str,
    _jwks: String,
) -> Result<Arc<dyn tools_mcp::TokenVerifier>, FlagError> {
    Err(FlagError::NoJwtFeature)
}

/// A command line it does not understand: the usage on stderr, exit code 2.
fn usage() -> ! {
    eprintln!("{USAGE}");
    std::process::exit(2)
}

fn demo_scope(
    runtime: &ToolRuntime,
) -> Result<(Scope, Vec<tools_runtime::Registration>), Box<dyn std::error::Error>> {
    let scope = runtime.scope();
    let mut keep = vec![
        scope.register(echo::definition()?)?,
        scope.register(add::definition()?)?,
        scope.register(wait::definition()?)?,
        scope.register(count::definition()?)?,
        scope.register(job::definition()?)?,
        scope.register(stats::definition()?)?,
        scope.guard(|call| {
            (call.name() == "echo" && call.arguments()["message"] == "forbidden")
                .then(|| "echo refuses `forbidden`".to_owned())
        })?,
    ];
    let extra: Arc<Mutex<Option<Scope>>> = Arc::new(Mutex::new(None));
    let enable = ToolDefinition::builder("enable_extra")
        .description("Register the tool `extra` (idempotent).")
        .input_schema(json!({"type": "object", "properties": {}, "additionalProperties": false}))
        .output(Output::json(json!({"type": "object", "properties": {"registered": {"type": "boolean"}}, "required": ["registered"]})))
        .execute(move |_args, ctx: ToolRunContext| {
            let extra = extra.clone();
            async move {
                let mut slot = extra.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                if slot.is_none() {
                    let plugin = ctx.runtime().scope();
                    let def = ToolDefinition::builder("extra")
                        .description("A tool registered at run time.")
                        .input_schema(json!({"type": "object"}))
                        .output(Output::json(json!({"type": "string"})))
                        .execute(|_, _| async { Ok(json!("extra")) })
                        .build()
                        .map_err(|e| tools_runtime::ToolError::new(e.to_string()))?;
                    // The registration lasts as long as the plugin scope kept in the slot.
                    let _registration = plugin
                        .register(def)
                        .map_err(|e| tools_runtime::ToolError::new(e.to_string()))?;
                    *slot = Some(plugin);
                }
                Ok(json!({"registered": true}))
            }
        })
        .build()?;
    keep.push(scope.register(enable)?);
    Ok((scope, keep))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("serve") => {}
        // Asked for: the usage on stdout, success.
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            return Ok(());
        }
        _ => usage(),
    }
    let mut http = None;
    let mut sessions = false;
    let mut max_message_size = None;
    let mut auth = AuthFlags::default();
    while let Some(arg) = args.next() {
        if auth.take(&arg, || args.next().unwrap_or_else(|| usage())) {
            continue;
        }
        match arg.as_str() {
            "--http" => http = Some(args.next().unwrap_or_else(|| usage())),
            "--sessions" => sessions = true,
            "--max-message-size" => {
                let bytes = args.next().unwrap_or_else(|| usage());
                match bytes.parse::<usize>() {
                    Ok(n) => max_message_size = Some(n),
                    Err(e) => {
                        eprintln!("--max-message-size {bytes}: not a number of bytes ({e})");
                        std::process::exit(2)
                    }
                }
            }
            _ => usage(),
        }
    }
    let auth = match auth.build(http.is_some()) {
        Ok(auth) => auth,
        Err(error) => {
            eprintln!("tools-mcp serve: {error} ({})", error.code());
            std::process::exit(2)
        }
    };
    // With the `otel` feature, every call is a span exported over OTLP (the `OTEL_*` variables
    // say where), parented on the caller's trace context when its `tools/call` carries one. Set
    // up before the async runtime (the exporter's blocking client must not be made or dropped
    // on one of its threads) and dropped after it, which exports what is left: when stdin
    // closes, on SIGINT or SIGTERM, and on an error.
    #[cfg(feature = "otel")]
    let _otel = match tools_otel::init("tools-mcp") {
        Ok(guard) => guard,
        Err(error) => {
            eprintln!("tools-mcp: {error} ({})", error.code());
            std::process::exit(1)
        }
    };
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let served = tokio.block_on(serve(http, sessions, max_message_size, auth));
    // The calls still running end with the runtime, before the guard exports the last spans.
    // Bounded: after a signal, the thread reading stdin is still blocked in its read.
    tokio.shutdown_timeout(Duration::from_millis(500));
    served
}

/// SIGINT or SIGTERM: the server stops (and, with `otel`, exports what is left).
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

async fn serve(
    http: Option<String>,
    sessions: bool,
    max_message_size: Option<usize>,
    auth: Option<tools_mcp::BearerAuth>,
) -> Result<(), Box<dyn std::error::Error>> {
    let runtime = ToolRuntime::new();
    let (scope, _keep) = demo_scope(&runtime)?;
    let mut server = McpServer::new(&scope, "tools-mcp-demo")?;
    if let Some(bytes) = max_message_size {
        server = server.max_message_size(bytes);
    }
    if let Some(auth) = auth {
        server = server.bearer_auth(auth);
    }
    match http {
        None => {
            tokio::select! {
                served = server.serve_stdio() => served?,
                () = stop_signal() => {}
            }
        }
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(&addr).await?;
            let options = HttpOptions::new().sessions(sessions);
            println!(
                "listening on {} ({})",
                listener.local_addr()?,
                options.cancellation()
            );
            use std::io::Write;
            std::io::stdout().flush()?;
            let shutdown = tokio_util::sync::CancellationToken::new();
            let stop = shutdown.clone();
            tokio::spawn(async move {
                stop_signal().await;
                stop.cancel();
            });
            server.serve_http(listener, options, shutdown).await?;
        }
    }
    Ok(())
}
