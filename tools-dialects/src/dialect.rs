//! The dialects: which provider's tool definitions a projection writes.

use crate::project::Target;

/// A provider's dialect of tool definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dialect {
    /// OpenAI Chat Completions function tools.
    OpenAiChat {
        /// Structured Outputs (`strict: true`).
        strict: bool,
    },
    /// OpenAI Responses function tools.
    OpenAiResponses {
        /// Structured Outputs (`strict: true`).
        strict: bool,
    },
    /// Anthropic Messages tools (`input_schema`).
    Anthropic {
        /// Strict tool use (`strict: true`).
        strict: bool,
    },
    /// Gemini function declarations with `parameters` (its OpenAPI subset).
    GeminiParameters,
    /// Gemini function declarations with `parametersJsonSchema`.
    GeminiJsonSchema,
    /// MCP `tools/list` entries (JSON Schema 2020-12).
    Mcp,
}

impl Dialect {
    /// Every dialect, in a fixed order.
    pub const ALL: [Dialect; 9] = [
        Dialect::OpenAiChat { strict: true },
        Dialect::OpenAiChat { strict: false },
        Dialect::OpenAiResponses { strict: true },
        Dialect::OpenAiResponses { strict: false },
        Dialect::Anthropic { strict: true },
        Dialect::Anthropic { strict: false },
        Dialect::GeminiParameters,
        Dialect::GeminiJsonSchema,
        Dialect::Mcp,
    ];

    /// A short stable name: `openai-chat-strict`, `anthropic`, `gemini-parameters`, `mcp`, ...
    pub fn name(self) -> &'static str {
        match self {
            Dialect::OpenAiChat { strict: true } => "openai-chat-strict",
            Dialect::OpenAiChat { strict: false } => "openai-chat",
            Dialect::OpenAiResponses { strict: true } => "openai-responses-strict",
            Dialect::OpenAiResponses { strict: false } => "openai-responses",
            Dialect::Anthropic { strict: true } => "anthropic-strict",
            Dialect::Anthropic { strict: false } => "anthropic",
            Dialect::GeminiParameters => "gemini-parameters",
            Dialect::GeminiJsonSchema => "gemini-json-schema",
            Dialect::Mcp => "mcp",
        }
    }

    /// Whether this is a strict (grammar-constrained) dialect.
    pub fn is_strict(self) -> bool {
        matches!(
            self,
            Dialect::OpenAiChat { strict: true }
                | Dialect::OpenAiResponses { strict: true }
                | Dialect::Anthropic { strict: true }
        )
    }

    /// The same provider without strict mode (itself when it has none).
    pub fn non_strict(self) -> Dialect {
        match self {
            Dialect::OpenAiChat { .. } => Dialect::OpenAiChat { strict: false },
            Dialect::OpenAiResponses { .. } => Dialect::OpenAiResponses { strict: false },
            Dialect::Anthropic { .. } => Dialect::Anthropic { strict: false },
            other => other,
        }
    }

    pub(crate) fn target(self) -> Option<Target> {
        match self {
            Dialect::OpenAiChat { strict: true } | Dialect::OpenAiResponses { strict: true } => {
                Some(Target::OpenAiStrict)
            }
            Dialect::Anthropic { strict: true } => Some(Target::AnthropicStrict),
            Dialect::GeminiParameters => Some(Target::GeminiParameters),
            Dialect::GeminiJsonSchema => Some(Target::GeminiJsonSchema),
            _ => None,
        }
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
