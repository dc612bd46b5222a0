//! MCP tool annotations, both ways: served from what a definition says, and on import kept and,
//! when asked, turned into policy.
//!
//! MCP tools carry four behaviour hints (`readOnlyHint`, `destructiveHint`, `idempotentHint`,
//! `openWorldHint`) and a `title`. They are hints, not promises: a client trusts them only as
//! far as it trusts the server.
//!
//! **Served.** [`McpServer`](crate::McpServer) lists a tool's
//! [`ToolAnnotations`] (set by `#[tool(read_only, destructive, idempotent, open_world, title =
//! "...")]` or [`ToolDefinitionBuilder::annotations`](tools_runtime::definition::ToolDefinitionBuilder::annotations))
//! as its MCP `annotations`, and the title also as the tool's `title`. A tool that says
//! nothing is listed without annotations (MCP's defaults then hold for its clients: not
//! read-only, destructive, not idempotent, open world).
//!
//! **Imported.** [`McpImport`](crate::McpImport) keeps a server's annotations on each imported
//! definition ([`ToolDefinition::annotations`](tools_runtime::ToolDefinition::annotations)), so
//! they show in catalogs and a server of ours serves them on. A server that says a tool is both
//! read-only and destructive contradicts itself; the import keeps the safer reading (destructive,
//! not read-only) and logs a warning. By default nothing else follows from them. With
//! [`ImportOptions::annotation_policy`](crate::ImportOptions::annotation_policy) they become
//! policy, each part on its own switch:
//!
//! | the server says | [`AnnotationPolicy`] switch | what the import does |
//! |---|---|---|
//! | `readOnlyHint: true` | [`concurrent_read_only`](AnnotationPolicy::concurrent_read_only) | the tool is concurrency-safe: its calls run in parallel with their neighbours in a batch |
//! | `readOnlyHint` not `true` and `destructiveHint` not `false` (MCP's default for a tool that says nothing is destructive) | [`ask_destructive`](AnnotationPolicy::ask_destructive) | each call asks for approval: a pre-execute listener on the import's scope answers [`PreDecision::Ask`] with a reason naming the hint (without an approval service that is a denial) |
//! | `readOnlyHint: true`, or `idempotentHint: true` | [`retry_idempotent`](AnnotationPolicy::retry_idempotent) | a call that timed out ([`codes::MCP_TIMEOUT`]) or lost its server ([`codes::MCP_SERVER_GONE`]) is sent again, up to the attempts given, after a backoff that doubles; a cancelled call, a tool error and an invalid result are never retried |
//! | `openWorldHint` | none | kept and served on; no policy |
//!
//! [`AnnotationPolicy::recommended`] turns all three on (two retries, from 200 ms). A
//! listener registered later on the import's scope (or on an agent scope) still sees, and may
//! change, the decision the import's listener made.
//!
//! ```
//! use std::time::Duration;
//! use tools_mcp::{AnnotationPolicy, ImportOptions};
//!
//! // Read-only tools in parallel, destructive ones asking a person, idempotent ones retried.
//! let options = ImportOptions::new().annotation_policy(AnnotationPolicy::recommended());
//! // Or only part of it.
//! let options = ImportOptions::new().annotation_policy(
//!     AnnotationPolicy::none()
//!         .ask_destructive(true)
//!         .retry_idempotent(3, Duration::from_millis(100)),
//! );
//! # let _ = options;
//! ```
//!
//! [`PreDecision::Ask`]: tools_runtime::hooks::PreDecision::Ask
//! [`codes::MCP_TIMEOUT`]: crate::codes::MCP_TIMEOUT
//! [`codes::MCP_SERVER_GONE`]: crate::codes::MCP_SERVER_GONE

use std::time::Duration;

use tools_schema::ToolAnnotations;

use crate::codes;

/// What an import makes of its server's tool annotations (see the [module doc](self) for the
/// table). [`none`](Self::none), the default, keeps them as hints and acts on none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AnnotationPolicy {
    concurrent_read_only: bool,
    ask_destructive: bool,
    retries: u32,
    first_backoff: Duration,
}

/// The backoff before the first retry under [`AnnotationPolicy::recommended`].
pub const DEFAULT_RETRY_BACKOFF: Duration = Duration::from_millis(200);

/// The longest backoff between two retries: the doubling stops there.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

impl AnnotationPolicy {
    /// The annotations are kept and served on; nothing follows from them.
    pub fn none() -> AnnotationPolicy {
        AnnotationPolicy::default()
    }

    /// Read-only tools concurrency-safe, destructive ones asking for approval, idempotent (and
    /// read-only) ones retried twice, the first time after [`DEFAULT_RETRY_BACKOFF`].
    pub fn recommended() -> AnnotationPolicy {
        AnnotationPolicy {
            concurrent_read_only: true,
            ask_destructive: true,
            retries: 2,
            first_backoff: DEFAULT_RETRY_BACKOFF,
        }
    }

    /// A tool that says it is read-only is concurrency-safe: its calls may run in parallel with
    /// their neighbours.
    pub fn concurrent_read_only(mut self, on: bool) -> AnnotationPolicy {
        self.concurrent_read_only = on;
        self
    }

    /// A tool that may be destructive by MCP's reading (not read-only, and not saying
    /// `destructiveHint: false`; a tool that says nothing is destructive) asks for approval on
    /// every call.
    pub fn ask_destructive(mut self, on: bool) -> AnnotationPolicy {
        self.ask_destructive = on;
        self
    }

    /// A call of a tool that says it is idempotent or read-only is sent again, up to `retries`
    /// more times, when it timed out or lost its server; the first retry waits `first_backoff`,
    /// each next one twice as long (at most 30 seconds). `0` retries turns this off. Each send
    /// has the call's own timeout, so a call retried after timeouts may take up to
    /// `retries + 1` timeouts and the backoffs between them; the server may still be running
    /// an earlier send it was told to cancel, which is why only tools that say they are
    /// idempotent or read-only are retried.
    pub fn retry_idempotent(mut self, retries: u32, first_backoff: Duration) -> AnnotationPolicy {
        self.retries = retries;
        self.first_backoff = first_backoff;
        self
    }

    /// Whether destructive tools ask for approval.
    pub(crate) fn asks_destructive(&self) -> bool {
        self.ask_destructive
    }

    /// How the calls of a tool with `hints` are treated under this policy.
    pub(crate) fn treatment(&self, hints: &Hints) -> Treatment {
        Treatment {
            concurrency_safe: self.concurrent_read_only && hints.read_only,
            ask: self.ask_destructive && hints.destructive,
            retry: Retry {
                attempts: if hints.read_only || hints.idempotent {
                    self.retries
                } else {
                    0
                },
                first_backoff: self.first_backoff,
            },
        }
    }
}

/// An imported tool's hints as MCP reads them, its defaults filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hints {
    pub(crate) read_only: bool,
    pub(crate) destructive: bool,
    pub(crate) idempotent: bool,
}

impl Hints {
    /// MCP's reading of `annotations`: not read-only, destructive and not idempotent unless it
    /// says otherwise; a destructive hint means nothing for a read-only tool.
    pub(crate) fn of(annotations: Option<&ToolAnnotations>) -> Hints {
        let flag = |get: fn(&ToolAnnotations) -> Option<bool>, default: bool| {
            annotations.and_then(get).unwrap_or(default)
        };
        let read_only = flag(|a| a.read_only_hint, false);
        Hints {
            read_only,
            destructive: !read_only && flag(|a| a.destructive_hint, true),
            idempotent: !read_only && flag(|a| a.idempotent_hint, false),
        }
    }
}

/// What the policy makes of one tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Treatment {
    pub(crate) concurrency_safe: bool,
    pub(crate) ask: bool,
    pub(crate) retry: Retry,
}

/// How often a failed call is sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Retry {
    pub(crate) attempts: u32,
    pub(crate) first_backoff: Duration,
}

impl Retry {
    /// Whether a call that failed with `code` on its `attempt`-th retry (0 for the first send)
    /// is sent again, and after how long.
    pub(crate) fn next(&self, attempt: u32, code: &str) -> Option<Duration> {
        if attempt >= self.attempts || !matches!(code, codes::MCP_TIMEOUT | codes::MCP_SERVER_GONE)
        {
            return None;
        }
        let factor = 1u32.checked_shl(attempt).unwrap_or(u32::MAX);
        Some(
            self.first_backoff
                .checked_mul(factor)
                .map_or(MAX_BACKOFF, |d| d.min(MAX_BACKOFF)),
        )
    }
}

/// A server's `annotations` as this crate keeps them: its known keys of the right type, a
/// contradiction (read-only and destructive) read as destructive. `None` when it says nothing.
pub(crate) fn imported(
    tool: &str,
    annotations: &rmcp::model::ToolAnnotations,
) -> Option<ToolAnnotations> {
    let value = serde_json::to_value(annotations).ok()?;
    let mut kept = ToolAnnotations::from_json(&value)?;
    if kept.read_only_hint == Some(true) && kept.destructive_hint == Some(true) {
        tracing::warn!(
            tool = %tools_schema::excerpt::cut(tool),
            "the MCP server says the tool is read-only and destructive; it is taken as destructive"
        );
        kept.read_only_hint = Some(false);
    }
    Some(kept)
}

/// The MCP form of `annotations`, for `tools/list`.
pub(crate) fn served(annotations: &ToolAnnotations) -> rmcp::model::ToolAnnotations {
    let mut out = rmcp::model::ToolAnnotations::default();
    out.title = annotations.title.clone();
    out.read_only_hint = annotations.read_only_hint;
    out.destructive_hint = annotations.destructive_hint;
    out.idempotent_hint = annotations.idempotent_hint;
    out.open_world_hint = annotations.open_world_hint;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hints(
        read_only: Option<bool>,
        destructive: Option<bool>,
        idempotent: Option<bool>,
    ) -> Hints {
        let a = ToolAnnotations {
            read_only_hint: read_only,
            destructive_hint: destructive,
            idempotent_hint: idempotent,
            ..ToolAnnotations::default()
        };
        Hints::of(Some(&a))
    }

    #[test]
    fn mcp_defaults_fill_in_what_a_tool_leaves_out() {
        let silent = Hints::of(None);
        assert!(!silent.read_only && silent.destructive && !silent.idempotent);
        let read_only = hints(Some(true), Some(true), None);
        assert!(read_only.read_only && !read_only.destructive);
        let additive = hints(None, Some(false), Some(true));
        assert!(!additive.destructive && additive.idempotent);
    }

    #[test]
    fn the_policy_acts_only_on_what_it_is_asked() {
        let rw = hints(None, None, Some(true));
        let none = AnnotationPolicy::none().treatment(&rw);
        assert!(!none.ask && !none.concurrency_safe && none.retry.attempts == 0);
        let all = AnnotationPolicy::recommended().treatment(&rw);
        assert!(all.ask && !all.concurrency_safe && all.retry.attempts == 2);
        let ro = AnnotationPolicy::recommended().treatment(&hints(Some(true), None, None));
        assert!(!ro.ask && ro.concurrency_safe && ro.retry.attempts == 2);
        let plain = AnnotationPolicy::recommended().treatment(&hints(None, Some(false), None));
        assert!(!plain.ask && plain.retry.attempts == 0);
    }

    #[test]
    fn only_timeouts_and_lost_servers_are_retried_with_a_doubling_backoff() {
        let retry = Retry {
            attempts: 3,
            first_backoff: Duration::from_millis(100),
        };
        assert_eq!(
            retry.next(0, codes::MCP_TIMEOUT),
            Some(Duration::from_millis(100))
        );
        assert_eq!(
            retry.next(2, codes::MCP_SERVER_GONE),
            Some(Duration::from_millis(400))
        );
        assert_eq!(retry.next(3, codes::MCP_TIMEOUT), None);
        assert_eq!(retry.next(0, codes::MCP_TOOL_ERROR), None);
        assert_eq!(retry.next(0, tools_runtime::codes::ABORTED), None);
        let long = Retry {
            attempts: 100,
            first_backoff: Duration::from_secs(1),
        };
        assert_eq!(long.next(40, codes::MCP_TIMEOUT), Some(MAX_BACKOFF));
    }

    #[test]
    fn a_contradiction_is_read_as_destructive() {
        let mut a = rmcp::model::ToolAnnotations::default();
        a.read_only_hint = Some(true);
        a.destructive_hint = Some(true);
        let kept = imported("t", &a).unwrap_or_default();
        assert_eq!(kept.read_only_hint, Some(false));
        assert!(Hints::of(Some(&kept)).destructive);
        assert_eq!(
            imported("t", &rmcp::model::ToolAnnotations::default()),
            None
        );
    }
}
