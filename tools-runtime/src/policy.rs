//! The room of the policy hooks: what the hooks of the pipeline decide and the services they
//! call, in the order they run: pre-execute decisions (with the approval service for `ask`,
//! whose answer, [`Approval`], is a decision on a call and lives with the call), guards, execute
//! wrappers, post-execute decisions, and result observers; plus registry change listeners. The
//! lists of registered hooks and the execute-wrapper chain
//! ([`Dispatch`](crate::hooks::Dispatch), [`Next`](crate::hooks::Next)) are with the runtime
//! handle (`runtime/handle.rs`); the pipeline runs them.

use std::future::Future;

use futures::future::BoxFuture;
use serde_json::Value;

use crate::call::content::{AdditionalContext, ContentBlock};
use crate::call::decision::Approval;
use crate::call::tool_call::ScopeKey;
use crate::execution::ToolExecution;

/// The decision of the pre-execute waterfall. Each listener receives the decision so far
/// (starting at [`Allow`](PreDecision::Allow)) and returns the next one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreDecision {
    /// Let the call proceed.
    Allow,
    /// Refuse the call with a reason the model reads.
    Deny {
        /// The reason.
        reason: String,
    },
    /// Ask the approval service; without one installed, this is a denial.
    Ask {
        /// Why approval is needed.
        reason: Option<String>,
    },
}

impl PreDecision {
    /// A denial with `reason`.
    pub fn deny(reason: impl Into<String>) -> Self {
        PreDecision::Deny {
            reason: reason.into(),
        }
    }
    /// A request for approval with `reason`.
    pub fn ask(reason: impl Into<String>) -> Self {
        PreDecision::Ask {
            reason: Some(reason.into()),
        }
    }
}

/// What replaces part of a successful result in a post-execute decision: the content or the
/// value, never both.
#[derive(Debug, Clone, PartialEq)]
pub enum Replacement {
    /// New content; the value and metadata are kept.
    Content(Vec<ContentBlock>),
    /// A new canonical value; it is validated against the output schema and rendered again.
    Value(Value),
}

/// The decision of a post-execute listener on a successful result.
#[derive(Debug, Clone, PartialEq)]
pub enum PostDecision {
    /// Keep the result, optionally replacing its content or value, and attach contexts.
    Accept {
        /// What to replace, if anything.
        replace: Option<Replacement>,
        /// Contexts to append after the tool's own deferred contexts.
        contexts: Vec<AdditionalContext>,
    },
    /// Turn the result into a valueless failure carrying `feedback`; the tool's deferred
    /// contexts are dropped and only `contexts` remain.
    Block {
        /// What the model reads.
        feedback: String,
        /// The only contexts the failed result carries.
        contexts: Vec<AdditionalContext>,
    },
}

impl PostDecision {
    /// Keep the result as it is.
    pub fn accept() -> Self {
        PostDecision::Accept {
            replace: None,
            contexts: Vec::new(),
        }
    }
    /// Keep the value, replace the content.
    pub fn replace_content(content: Vec<ContentBlock>) -> Self {
        PostDecision::Accept {
            replace: Some(Replacement::Content(content)),
            contexts: Vec::new(),
        }
    }
    /// Replace the value (validated and rendered again).
    pub fn replace_value(value: Value) -> Self {
        PostDecision::Accept {
            replace: Some(Replacement::Value(value)),
            contexts: Vec::new(),
        }
    }
    /// Block the result with `feedback`.
    pub fn block(feedback: impl Into<String>) -> Self {
        PostDecision::Block {
            feedback: feedback.into(),
            contexts: Vec::new(),
        }
    }
    /// The same decision with one more context attached.
    pub fn with_context(mut self, context: AdditionalContext) -> Self {
        match &mut self {
            PostDecision::Accept { contexts, .. } | PostDecision::Block { contexts, .. } => {
                contexts.push(context)
            }
        }
        self
    }
}

/// The successful result a post-execute listener inspects.
#[derive(Debug, Clone, Copy)]
pub struct PostView<'a> {
    /// The canonical value.
    pub value: &'a Value,
    /// The content so far.
    pub content: &'a [ContentBlock],
    /// The presentation metadata so far.
    pub meta: Option<&'a Value>,
}

/// An owned copy of a successful result, for asynchronous post-execute listeners.
#[derive(Debug, Clone, PartialEq)]
pub struct PostSnapshot {
    /// The canonical value.
    pub value: Value,
    /// The content so far.
    pub content: Vec<ContentBlock>,
    /// The presentation metadata so far.
    pub meta: Option<Value>,
}

/// The service that answers [`PreDecision::Ask`]. Install one with
/// [`Scope::set_approval`](crate::Scope::set_approval); without one, `ask` is a denial.
///
/// Closures `Fn(ToolExecution, Option<String>) -> impl Future<Output = Approval>` implement it.
pub trait ApprovalService: Send + Sync + 'static {
    /// Asks whether `exec` may proceed; `reason` is what the asking listener gave.
    fn request(&self, exec: ToolExecution, reason: Option<String>) -> BoxFuture<'static, Approval>;
}

impl<F, Fut> ApprovalService for F
where
    F: Fn(ToolExecution, Option<String>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Approval> + Send + 'static,
{
    fn request(&self, exec: ToolExecution, reason: Option<String>) -> BoxFuture<'static, Approval> {
        Box::pin(self(exec, reason))
    }
}

/// A change of the registry's shared state, delivered unfiltered to every
/// [`on_change`](crate::Scope::on_change) listener.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryChange {
    /// A tool was registered in `scope`.
    Registered {
        /// The tool.
        name: String,
        /// Its layer.
        scope: ScopeKey,
    },
    /// A tool was removed from `scope`.
    Removed {
        /// The tool.
        name: String,
        /// Its layer.
        scope: ScopeKey,
    },
    /// A name was reserved in `scope`.
    Reserved {
        /// The name.
        name: String,
        /// Its layer.
        scope: ScopeKey,
    },
    /// A reservation was removed from `scope`.
    Unreserved {
        /// The name.
        name: String,
        /// Its layer.
        scope: ScopeKey,
    },
    /// A mask was added to or removed from an agent scope.
    MasksChanged {
        /// The agent scope.
        scope: ScopeKey,
    },
    /// An agent scope chose its presentation mode, or dropped its choice.
    PresentationChanged {
        /// The agent scope.
        scope: ScopeKey,
    },
    /// An agent scope was disposed.
    ScopeDisposed {
        /// The agent scope.
        scope: ScopeKey,
    },
}
