//! Where an MCP server is ([`McpSource`]), and which protocol generation to speak to it
//! ([`Protocol`]).

use rmcp::model::ProtocolVersion;
use rmcp::service::ClientLifecycleMode;
use tools_schema::excerpt::cut;

use crate::error::{McpError, SpawnError};

/// Where an MCP server is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpSource {
    /// A server started as a child process, spoken to over its stdin and stdout. On Linux it
    /// gets those and stderr and no other descriptor of the host: whatever the host holds
    /// without close-on-exec (a descriptor it inherited, or one a library opened without
    /// `O_CLOEXEC`) is closed when the server's program starts.
    Stdio {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables.
        env: Vec<(String, String)>,
    },
    /// A server reached over streamable HTTP (plain `http://`; this crate builds no TLS stack).
    Http {
        /// The endpoint, such as `http://127.0.0.1:8080/mcp`.
        url: String,
        /// Its credentials ([`McpSource::bearer`], [`McpSource::header`],
        /// [`McpSource::oauth`]; none by default).
        auth: crate::import_auth::HttpAuth,
    },
}

impl McpSource {
    /// A child process: `program` with `args`.
    pub fn stdio<I, S>(program: impl Into<String>, args: I) -> McpSource
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        McpSource::Stdio {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
        }
    }

    /// A child process from one command line, split on whitespace (no shell quoting: pass
    /// arguments with spaces through [`McpSource::stdio`]).
    pub fn command_line(line: &str) -> Result<McpSource, McpError> {
        let mut words = line.split_whitespace();
        let Some(program) = words.next() else {
            return Err(McpError::Spawn {
                command: line.to_owned(),
                source: SpawnError::EmptyCommandLine,
            });
        };
        Ok(McpSource::stdio(program, words))
    }

    /// A streamable HTTP endpoint.
    pub fn http(url: impl Into<String>) -> McpSource {
        McpSource::Http {
            url: url.into(),
            auth: crate::import_auth::HttpAuth::default(),
        }
    }

    /// The same source with an extra environment variable (stdio only; ignored for HTTP).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> McpSource {
        if let McpSource::Stdio { env, .. } = &mut self {
            env.push((key.into(), value.into()));
        }
        self
    }

    /// The OAuth of an HTTP source, if it authorizes.
    pub(crate) fn oauth_of(&self) -> Option<&crate::oauth::OAuth> {
        match self {
            McpSource::Http { auth, .. } => auth.oauth.as_ref(),
            McpSource::Stdio { .. } => None,
        }
    }

    /// The source in words, for messages.
    pub fn describe(&self) -> String {
        match self {
            McpSource::Stdio { program, args, .. } => {
                let mut s = format!("`{program}");
                for a in args {
                    s.push(' ');
                    s.push_str(a);
                }
                s.push('`');
                cut(&s).into_owned()
            }
            McpSource::Http { url, .. } => cut(url).into_owned(),
        }
    }
}

/// Which protocol generation to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Protocol {
    /// Probe for 2026-07-28 (`server/discover`, no session) within
    /// [`ImportOptions::probe_timeout`]; if the server refuses it or stays silent that long,
    /// use the `initialize` handshake (2025-11-25): on the same stdio process (a late answer to
    /// the probe is dropped), on a fresh HTTP connection.
    ///
    /// [`ImportOptions::probe_timeout`]: super::ImportOptions::probe_timeout
    #[default]
    Auto,
    /// The `initialize` handshake, 2025-11-25.
    Initialize,
    /// 2026-07-28 only (`server/discover`).
    Discover,
}

impl Protocol {
    pub(super) fn lifecycle(self) -> ClientLifecycleMode {
        match self {
            Protocol::Auto => ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            },
            Protocol::Initialize => ClientLifecycleMode::Initialize,
            Protocol::Discover => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        }
    }
}
