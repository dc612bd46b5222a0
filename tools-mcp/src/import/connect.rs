//! Connecting to a server within the import's bound: a stdio server started as a child
//! process that holds only the standard streams, an HTTP server reached through the import's
//! client, each spoken to in the protocol the options choose (probed first under
//! [`Protocol::Auto`]).

use std::process::Stdio;
use std::sync::{Arc, Weak};

use rmcp::service::{ClientLifecycleMode, ClientServiceExt, Peer, RoleClient};
use rmcp::transport::StreamableHttpClientTransport;

use super::Inner;
use super::handler::{Client, Handler};
use super::http::LimitedClient;
use super::options::ImportOptions;
use super::probe::{Probe, probe};
use super::source::{McpSource, Protocol};
use crate::error::{ConnectError, McpError, SpawnError};
use crate::lock;
use crate::progress::{ProgressRoutes, ProgressTap};
use crate::wire::LineTransport;

/// A connection's client and what comes with it.
pub(super) struct Connected {
    pub(super) client: Client,
    pub(super) pid: Option<u32>,
    pub(super) gone: Option<crate::child::Gone>,
    pub(super) progress: Arc<ProgressRoutes>,
    pub(super) wire: Wire,
}

/// What a call's client span says of its connection: the transport, and over HTTP where the
/// session's id is noted once there is one.
#[derive(Clone)]
pub(super) struct Wire {
    base: crate::trace::Wire,
    session: Option<super::http::SessionSlot>,
}

impl Wire {
    /// The span's facts now, with the version the connection negotiated.
    pub(super) fn now(&self, peer: &Peer<RoleClient>) -> crate::trace::Wire {
        let mut wire = self.base.clone();
        wire.version = peer
            .peer_info()
            .map(|info| info.protocol_version.as_str().to_owned());
        wire.session = self
            .session
            .as_ref()
            .and_then(|slot| lock(slot).as_deref().map(str::to_owned));
        wire
    }
}

/// Has the child close every descriptor above stderr when its program starts: they are marked
/// close-on-exec between fork and exec (`close_range` with `CLOSE_RANGE_CLOEXEC`, else one
/// `fcntl` per possible descriptor), so the standard library's own exec-error pipe still works.
#[cfg(target_os = "linux")]
fn only_standard_streams(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: between fork and exec only async-signal-safe system calls are made, on
    // descriptors of the child's own table.
    unsafe {
        command.pre_exec(|| {
            if libc::close_range(
                3,
                libc::c_uint::MAX,
                libc::CLOSE_RANGE_CLOEXEC as libc::c_int,
            ) == 0
            {
                return Ok(());
            }
            // Kernels before 5.11: every descriptor the limit allows, one call each.
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            let end = if libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut limit) == 0 {
                limit.rlim_cur.min(1 << 20)
            } else {
                1 << 16
            };
            let end = libc::c_int::try_from(end).unwrap_or(libc::c_int::MAX);
            for fd in 3..end {
                let flags = libc::fcntl(fd, libc::F_GETFD);
                if flags >= 0 {
                    libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
                }
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn only_standard_streams(_command: &mut std::process::Command) {}

/// Connects to `source` within [`ImportOptions::connect_timeout`]; the handler follows
/// `list_changed` for the import `inner` (none for a dangling `Weak`).
pub(super) async fn connect(
    source: &McpSource,
    options: &ImportOptions,
    inner: Weak<Inner>,
) -> Result<Connected, McpError> {
    let timeout = options.connect_timeout;
    // The person's step of an OAuth authorization is bounded by its own timeout, not this one.
    match crate::oauth::within(
        timeout,
        source.oauth_of(),
        connect_unbounded(source, options, inner),
    )
    .await
    {
        Some(connected) => connected,
        None => Err(McpError::Connect {
            server: source.describe(),
            source: ConnectError::Timeout { timeout },
        }),
    }
}

/// Connects with the options' protocol: over stdio, one process (probed first under
/// [`Protocol::Auto`]); over HTTP, a `server/discover` attempt bounded by the probe timeout and,
/// if it fails, the `initialize` handshake on a fresh connection. rmcp's own `Auto` mode is not
/// used: its probe waits a fixed 10 seconds and then fails when the probe's answer comes late.
async fn connect_unbounded(
    source: &McpSource,
    options: &ImportOptions,
    inner: Weak<Inner>,
) -> Result<Connected, McpError> {
    let server = source.describe();
    let connect_error = |why: ConnectError| McpError::Connect {
        server: server.clone(),
        source: why,
    };
    let handshake_error = |e| source.auth_or(connect_error(ConnectError::Handshake(Box::new(e))));
    let handler = || Handler {
        inner: inner.clone(),
    };
    let protocol = options.protocol;
    let progress = Arc::new(ProgressRoutes::default());
    match source {
        McpSource::Stdio { .. } => {
            let mut transport = spawn(source, options)?;
            let pid = transport.child_id();
            let gone = transport.child_gone();
            let lifecycle = match protocol {
                Protocol::Auto => match probe(&mut transport, options.probe_timeout).await {
                    Ok(Probe::Modern) => Protocol::Discover.lifecycle(),
                    Ok(Probe::Legacy) => Protocol::Initialize.lifecycle(),
                    Err(e) => return Err(connect_error(e)),
                },
                other => other.lifecycle(),
            };
            let client = handler()
                .serve_with_lifecycle(ProgressTap::new(transport, progress.clone()), lifecycle)
                .await
                .map_err(handshake_error)?;
            Ok(Connected {
                client,
                pid,
                gone,
                progress,
                wire: Wire {
                    base: crate::trace::Wire::stdio(),
                    session: None,
                },
            })
        }
        McpSource::Http { url, auth } => {
            let session = super::http::SessionSlot::default();
            let headers = auth.header_map().map_err(|e| McpError::AuthFailed {
                server: server.clone(),
                source: e,
            })?;
            let attempt = |lifecycle: ClientLifecycleMode| {
                let client =
                    LimitedClient::new(options.max_message_size).noting_session(session.clone());
                let mut config = client.config(url).custom_headers(headers.clone());
                if let Some(bearer) = &auth.bearer {
                    config = config.auth_header(bearer.expose());
                }
                let tap = progress.clone();
                let handler = handler();
                let serve: futures::future::BoxFuture<'_, _> = match &auth.oauth {
                    Some(oauth) => {
                        let client = crate::oauth::Authorized {
                            inner: client,
                            oauth: oauth.clone(),
                            url: url.as_str().into(),
                        };
                        let transport = StreamableHttpClientTransport::with_client(client, config);
                        Box::pin(
                            handler
                                .serve_with_lifecycle(ProgressTap::new(transport, tap), lifecycle),
                        )
                    }
                    None => {
                        let transport = StreamableHttpClientTransport::with_client(client, config);
                        Box::pin(
                            handler
                                .serve_with_lifecycle(ProgressTap::new(transport, tap), lifecycle),
                        )
                    }
                };
                serve
            };
            let client = match protocol {
                Protocol::Auto => {
                    let probed = crate::oauth::within(
                        options.probe_timeout,
                        auth.oauth.as_ref(),
                        attempt(Protocol::Discover.lifecycle()),
                    )
                    .await;
                    match probed {
                        Some(Ok(client)) => client,
                        Some(Err(first)) => attempt(Protocol::Initialize.lifecycle())
                            .await
                            .map_err(|second| {
                                source.auth_or(connect_error(ConnectError::Fallback {
                                    discover: Box::new(first),
                                    initialize: Box::new(second),
                                }))
                            })?,
                        None => attempt(Protocol::Initialize.lifecycle())
                            .await
                            .map_err(handshake_error)?,
                    }
                }
                other => attempt(other.lifecycle()).await.map_err(handshake_error)?,
            };
            Ok(Connected {
                client,
                pid: None,
                gone: None,
                progress,
                wire: Wire {
                    base: crate::trace::Wire::http(),
                    session: Some(session),
                },
            })
        }
    }
}

/// Starts a stdio server, its stdin and stdout the transport's, its other descriptors closed,
/// its process stopped as `crate::child` says when the transport closes or drops.
fn spawn(
    source: &McpSource,
    options: &ImportOptions,
) -> Result<LineTransport<RoleClient>, McpError> {
    let McpSource::Stdio { program, args, env } = source else {
        return Err(McpError::Spawn {
            command: source.describe(),
            source: SpawnError::NotStdio,
        });
    };
    let spawn_error = |why: SpawnError| McpError::Spawn {
        command: source.describe(),
        source: why,
    };
    let mut command = std::process::Command::new(program);
    command
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(if options.inherit_stderr {
            Stdio::inherit()
        } else {
            Stdio::null()
        });
    only_standard_streams(&mut command);
    let (child, stdin, stdout) = crate::child::ServerProcess::spawn(command, options.shutdown())
        .map_err(|e| spawn_error(SpawnError::Io(e)))?;
    // Registered with this runtime's reactor; dropping them closes the pipes.
    let stdin =
        tokio::process::ChildStdin::from_std(stdin).map_err(|e| spawn_error(SpawnError::Io(e)))?;
    let stdout = tokio::process::ChildStdout::from_std(stdout)
        .map_err(|e| spawn_error(SpawnError::Io(e)))?;
    Ok(LineTransport::new(
        stdout,
        stdin,
        options.max_message_size,
        "ImportOptions::max_message_size",
        false,
    )
    .with_child(child))
}
