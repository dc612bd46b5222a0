//! What a tool call hands back to the model: content blocks and additional contexts.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One block of model-facing content.
///
/// Content is the presentation of a result; the canonical value of a success lives beside it in
/// [`ToolOutcome::Success`](crate::ToolOutcome::Success).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// The base64 data.
        data: String,
        /// The media type, such as `image/png`.
        mime_type: String,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text { text: text.into() }
    }

    /// The text of a text block, `None` for other blocks.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text { text } => Some(text),
            ContentBlock::Image { .. } => None,
        }
    }
}

/// A message the agent loop appends after a tool's result, in order (the spec's identified
/// `UserMessage`s of `additionalContexts`).
///
/// A body defers one with [`ToolRunContext::defer_context`](crate::ToolRunContext::defer_context);
/// a post-execute listener attaches them with
/// [`PostDecision::with_context`](crate::hooks::PostDecision::with_context).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdditionalContext {
    /// Who produced it (a plugin or tool name), kept so the loop can attribute it.
    pub source: String,
    /// The text the model reads.
    pub text: String,
    /// Optional metadata that travels with the message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

impl AdditionalContext {
    /// A context from `source` with `text` and no metadata.
    pub fn new(source: impl Into<String>, text: impl Into<String>) -> Self {
        AdditionalContext {
            source: source.into(),
            text: text.into(),
            meta: None,
        }
    }

    /// The same context with metadata attached.
    pub fn with_meta(mut self, meta: Value) -> Self {
        self.meta = Some(meta);
        self
    }
}
