//! The typed model of a `#[tool]` function.

use proc_macro2::Span;

/// A value with the span of the key that set it.
#[derive(Clone, Debug)]
pub(crate) struct Spanned<T> {
    pub(crate) value: T,
    pub(crate) span: Span,
}

/// How a tool declares itself concurrency-safe.
#[derive(Clone, Debug)]
pub(crate) enum Concurrency {
    /// `concurrency_safe`: every call may overlap.
    Always,
    /// `concurrency_safe = path`: `path(&arg, ...) -> bool` decides per call.
    Classifier(syn::Path),
}

/// Who may call the tool (`callers = "direct" | "code" | "any"`); the runtime's `Callers`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CallersKey {
    Any,
    Direct,
    Code,
}

impl CallersKey {
    /// The callers a string names, if any.
    pub(crate) fn from_name(name: &str) -> Option<CallersKey> {
        match name {
            "any" => Some(CallersKey::Any),
            "direct" => Some(CallersKey::Direct),
            "code" => Some(CallersKey::Code),
            _ => None,
        }
    }
}

/// The keys of `#[tool(...)]`.
#[derive(Clone, Debug, Default)]
pub(crate) struct ToolAttrs {
    pub(crate) name: Option<Spanned<String>>,
    pub(crate) description: Option<Spanned<String>>,
    /// The timeout in milliseconds, as written (zero is rejected by validation).
    pub(crate) timeout: Option<Spanned<Result<u128, String>>>,
    /// `timeout_resets_on_progress`: the maximum total time in milliseconds, as written.
    pub(crate) max_total: Option<Spanned<Result<u128, String>>>,
    /// `long_running`.
    pub(crate) long_running: bool,
    pub(crate) concurrency: Option<Spanned<Concurrency>>,
    pub(crate) render: Option<syn::Path>,
    pub(crate) finalize_content: Option<syn::Path>,
    pub(crate) presentation_meta: Option<syn::Path>,
    pub(crate) present_call: Option<syn::Path>,
    pub(crate) present_result: Option<syn::Path>,
    /// `None` inside when the value is not one of the names (rejected by validation).
    pub(crate) callers: Option<Spanned<Option<CallersKey>>>,
    /// MCP's behaviour hints: `read_only`, `destructive`, `idempotent`, `open_world` (each a
    /// flag, or `= true | false`), `title = "..."`.
    pub(crate) hints: Hints,
}

/// The behaviour hints of `#[tool(...)]` (MCP's tool annotations), each as written.
#[derive(Clone, Debug, Default)]
pub(crate) struct Hints {
    pub(crate) title: Option<Spanned<String>>,
    pub(crate) read_only: Option<Spanned<bool>>,
    pub(crate) destructive: Option<Spanned<bool>>,
    pub(crate) idempotent: Option<Spanned<bool>>,
    pub(crate) open_world: Option<Spanned<bool>>,
}

impl Hints {
    /// Whether any hint is given.
    pub(crate) fn any(&self) -> bool {
        self.title.is_some()
            || self.read_only.is_some()
            || self.destructive.is_some()
            || self.idempotent.is_some()
            || self.open_world.is_some()
    }
}

/// How a parameter is filled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ParamKind {
    /// From the model's arguments, with a schema.
    Argument,
    /// Injected from the run context (`#[context]`), absent from the schema.
    Context,
}

/// One parameter of the function.
#[derive(Clone, Debug)]
pub(crate) struct Param {
    /// The argument name the model sees (the identifier without `r#`).
    pub(crate) name: String,
    pub(crate) ty: syn::Type,
    pub(crate) doc: Option<String>,
    pub(crate) kind: ParamKind,
}

/// What the function returns.
#[derive(Clone, Debug)]
pub(crate) enum Returns {
    /// Nothing: the output is `null`.
    Unit,
    /// A value of this type.
    Plain(syn::Type),
    /// A type spelled `Result<..>` (`std::result::Result`, or an alias named `Result` such as
    /// `io::Result<T>`).
    Result(syn::Type),
}

/// The receiver of a method tool inside `#[tools]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Receiver {
    /// A free function.
    None,
    /// `&self`.
    Ref,
}

/// A `#[tool]` function.
#[derive(Clone, Debug)]
pub(crate) struct ToolFn {
    pub(crate) attrs: ToolAttrs,
    pub(crate) ident: syn::Ident,
    pub(crate) name: Spanned<String>,
    pub(crate) description: Option<String>,
    pub(crate) is_async: bool,
    pub(crate) receiver: Receiver,
    pub(crate) params: Vec<Param>,
    pub(crate) returns: Returns,
}
