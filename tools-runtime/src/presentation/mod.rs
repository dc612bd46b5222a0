//! Presentation: how a scope's tools reach the model.
//!
//! The runtime has a [`PresentationMode`] (`native` unless [`ToolRuntimeBuilder::mode`] says
//! otherwise) and an agent scope may choose its own with
//! [`Scope::present_as`](crate::Scope::present_as). [`ToolRuntime::assemble`] turns a scope's
//! view into what a model request carries:
//!
//! | mode | tool definitions | prompt sections |
//! | --- | --- | --- |
//! | `native` | the visible tools | none |
//! | `code` | `run_code` only | `tools:code-only` (order [`CODE_ONLY_SECTION_ORDER`]) and `tools:sdk` (order [`SDK_SECTION_ORDER`]) |
//! | `both` | the visible tools and `run_code` | `tools:sdk`, and `tools:code-only` when some tool is code-only |
//!
//! A tool's [`Callers`](crate::Callers) narrow this per tool: a code-only tool
//! (`Callers::Code`) is never a definition, a direct-only tool (`Callers::Direct`) is never in
//! the SDK ([`ToolRuntime::native_schemas`] and [`ToolRuntime::sdk_schemas`] are the two
//! sets). Under `both`, a `tools:code-only` section then says that the tools found only in the
//! SDK are called from programs.
//!
//! With [`Discovery`] (see [`ToolRuntimeBuilder::discovery`]) a large SDK is replaced by a
//! compact index of the tools' names, and `describe_tools` is offered beside `run_code` to give
//! the declarations of the tools the model names or asks for.
//!
//! `tools:sdk` holds the Code Mode instructions and the SDK of the scope's visible tools, in
//! the language of the configured code runtime, rendered by `tools-codegen`: byte-identical for
//! an unchanged tool set, tools in lexicographic order. The SDK is rendered once per tool set
//! and scope, and taken from a cache while nothing the scope sees has changed.
//!
//! # Example
//!
//! ```
//! # #[cfg(feature = "typescript")]
//! # {
//! use serde_json::json;
//! use tools_runtime::code::{CodeMode, TypeScriptRuntime};
//! use tools_runtime::{Output, PresentationMode, ToolDefinition, ToolRuntime};
//!
//! let runtime = ToolRuntime::builder()
//!     .mode(PresentationMode::Code)
//!     .code_mode(CodeMode::new(TypeScriptRuntime::new()))
//!     .build()
//!     .unwrap();
//! let plugin = runtime.scope();
//! let _read = plugin
//!     .register(
//!         ToolDefinition::builder("read")
//!             .description("Read a file.")
//!             .input_schema(json!({"type": "object", "properties": {"path": {"type": "string"}}}))
//!             .output(Output::json(json!({"type": "string"})))
//!             .execute(|_args, _ctx| async { Ok(json!("")) })
//!             .build()
//!             .unwrap(),
//!     )
//!     .unwrap();
//!
//! let assembly = runtime.assemble(plugin.key()).unwrap();
//! assert_eq!(assembly.tool_names(), vec!["run_code"]);
//! let sdk = assembly.section("tools:sdk").unwrap();
//! assert!(sdk.text.contains("read"));
//! assert!(assembly.section("tools:code-only").is_some());
//! # }
//! ```

mod discovery;

pub use discovery::{
    DEFAULT_DESCRIBE_LIMIT, DEFAULT_DISCOVERY_ABOVE_BYTES, DESCRIBE_TOOLS_EMPTY, Discovery,
    MAX_DESCRIBE_TOOLS,
};

use std::any::Any;
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use tools_codegen::Language;
use tools_schema::catalog::ToolSchema;

use crate::base::call::ScopeKey;
use crate::base::definition::{RESERVED_DESCRIBE_TOOLS, RESERVED_RUN_CODE};
use crate::base::runtime::{PresentationMode, ToolRuntime, lock};
use crate::code::{CodeLanguage, CodeMode, CodeModeError};

/// The order of the `tools:sdk` section.
pub const SDK_SECTION_ORDER: i32 = 150;
/// The order of the `tools:code-only` section: ahead of the SDK and of the per-tool guidance
/// band ([`TOOL_GUIDANCE_ORDER`]), so the model reads which tools it may call before what each
/// one is for.
pub const CODE_ONLY_SECTION_ORDER: i32 = 140;
/// Where a host's per-tool guidance sections start.
pub const TOOL_GUIDANCE_ORDER: i32 = 200;
/// The id of the SDK section.
pub const SDK_SECTION: &str = "tools:sdk";
/// The id of the code-only rule.
pub const CODE_ONLY_SECTION: &str = "tools:code-only";

/// One section of the system prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptSection {
    /// A stable id, such as `tools:sdk`.
    pub id: String,
    /// Sections are laid out by ascending order (ties by id).
    pub order: i32,
    /// The text.
    pub text: Arc<str>,
}

/// What a scope contributes to a model request: tool definitions and prompt sections.
#[derive(Debug, Clone, PartialEq)]
pub struct Assembly {
    /// The mode the scope uses.
    pub mode: PresentationMode,
    /// The tool definitions, in order: `tool_order`'s names first, then the rest by name.
    pub tools: Vec<Arc<ToolSchema>>,
    /// The prompt sections, by ascending order.
    pub sections: Vec<PromptSection>,
}

impl Assembly {
    /// The names of the tool definitions, in order.
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name.as_str()).collect()
    }

    /// The section with this id.
    pub fn section(&self, id: &str) -> Option<&PromptSection> {
        self.sections.iter().find(|s| s.id == id)
    }
}

/// Options of one assembly.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AssembleOptions {
    /// Tool names to put first, in this order. Naming a tool the mode does not contribute
    /// rejects the assembly; a reserved name without a definition yet is allowed and skipped.
    pub tool_order: Vec<String>,
}

/// Why a scope could not be assembled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AssemblyError {
    /// The scope has been disposed.
    #[error("the scope has been disposed")]
    ScopeDisposed,
    /// The mode offers Code Mode, but the runtime has no code runtime.
    #[error(
        "the scope's presentation mode is `{mode}`, which needs a code runtime to render the SDK \
         for, and none is configured: build the runtime with \
         `ToolRuntime::builder().code_mode(CodeMode::new(TypeScriptRuntime::new()))` (or a \
         Python runtime), or present this scope as `native`"
    )]
    NoCodeRuntime {
        /// The scope's mode.
        mode: PresentationMode,
    },
    /// `tool_order` names a tool the mode does not contribute.
    #[error(
        "tool_order names `{name}`, which the `{mode}` presentation does not offer as a tool \
         definition{}", if *.mode == PresentationMode::Code { " (under `code` only `run_code` is)" } else { "" }
    )]
    ToolOrder {
        /// The name.
        name: String,
        /// The scope's mode.
        mode: PresentationMode,
    },
    /// The visible schemas could not form a catalog for the SDK.
    #[error("cannot render the SDK: {message}")]
    Catalog {
        /// What the catalog refused.
        message: String,
    },
    /// The assemble hook panicked.
    #[error("the assemble hook panicked: {message}")]
    HookPanicked {
        /// The panic message.
        message: String,
    },
}

impl AssemblyError {
    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            AssemblyError::ScopeDisposed => "SCOPE_DISPOSED",
            AssemblyError::NoCodeRuntime { .. } => "NO_CODE_RUNTIME",
            AssemblyError::ToolOrder { .. } => "TOOL_ORDER",
            AssemblyError::Catalog { .. } => "SDK_CATALOG",
            AssemblyError::HookPanicked { .. } => "ASSEMBLE_HOOK_PANICKED",
        }
    }
}

/// The assemble hook: sees the scope and the registry's assembly and may return a replacement,
/// which is then the assembly, unchecked. A hook that replaces a Code Mode assembly owns keeping
/// `run_code` and its SDK usable.
pub type AssembleHook = dyn Fn(ScopeKey, &Assembly) -> Option<Assembly> + Send + Sync;

/// The runtime's construction: its presentation mode, Code Mode, and the assemble hook.
#[derive(Default)]
pub struct ToolRuntimeBuilder {
    mode: PresentationMode,
    code: Option<CodeMode>,
    hook: Option<Arc<AssembleHook>>,
    discovery: Discovery,
}

impl fmt::Debug for ToolRuntimeBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRuntimeBuilder")
            .field("mode", &self.mode)
            .field("code", &self.code)
            .field("hook", &self.hook.is_some())
            .field("discovery", &self.discovery)
            .finish()
    }
}

impl ToolRuntimeBuilder {
    /// The runtime's presentation mode (default `native`); agent scopes may choose their own.
    #[must_use]
    pub fn mode(mut self, mode: PresentationMode) -> Self {
        self.mode = mode;
        self
    }

    /// Code Mode: the runtime then owns a `run_code` definition, offered wherever the mode is
    /// `code` or `both`.
    #[must_use]
    pub fn code_mode(mut self, code: CodeMode) -> Self {
        self.code = Some(code);
        self
    }

    /// Whether the SDK section carries the full SDK or, for large catalogs, a compact index
    /// with the `describe_tools` tool beside `run_code` (default: [`Discovery::Auto`] above
    /// [`DEFAULT_DISCOVERY_ABOVE_BYTES`]; see [`Discovery`]).
    #[must_use]
    pub fn discovery(mut self, discovery: Discovery) -> Self {
        self.discovery = discovery;
        self
    }

    /// A hook that may replace every assembly (see [`AssembleHook`]).
    #[must_use]
    pub fn on_assemble(
        mut self,
        hook: impl Fn(ScopeKey, &Assembly) -> Option<Assembly> + Send + Sync + 'static,
    ) -> Self {
        self.hook = Some(Arc::new(hook));
        self
    }

    /// Builds the runtime.
    ///
    /// # Errors
    ///
    /// When the Code Mode settings are unusable ([`CodeMode::validate`]).
    pub fn build(self) -> Result<ToolRuntime, CodeModeError> {
        let code = match self.code {
            Some(code) => {
                code.validate()?;
                Some(Arc::new(code))
            }
            None => None,
        };
        let run_code = match &code {
            // The definition's schemas are fixed and valid; a failure here is a bug in this
            // crate, reported rather than panicking.
            Some(code) => Some(code.definition().map_err(CodeModeError::Definition)?),
            None => None,
        };
        let describe_tools = match (&code, self.discovery) {
            (Some(code), discovery) if discovery != Discovery::Never => Some(
                discovery::definition(language_of(code.language()))
                    .map_err(CodeModeError::Definition)?,
            ),
            _ => None,
        };
        let settings: Arc<dyn Any + Send + Sync> = Arc::new(Settings {
            code,
            run_code_schema: run_code.as_ref().map(|def| Arc::new(def.catalog_entry())),
            describe_tools_schema: describe_tools
                .as_ref()
                .map(|def| Arc::new(def.catalog_entry())),
            discovery: self.discovery,
            hook: self.hook,
            cache: Mutex::new(HashMap::new()),
        });
        Ok(ToolRuntime::with_code_parts(
            self.mode,
            run_code,
            describe_tools,
            Some(settings),
        ))
    }
}

impl ToolRuntime {
    /// An empty registry in `native` mode, without Code Mode (see [`builder`](Self::builder)).
    pub fn new() -> Self {
        Self::with_parts(
            PresentationMode::Native,
            None,
            Some(Arc::new(Settings {
                code: None,
                run_code_schema: None,
                describe_tools_schema: None,
                discovery: Discovery::Never,
                hook: None,
                cache: Mutex::new(HashMap::new()),
            })),
        )
    }

    /// A builder for a runtime with a presentation mode, Code Mode, or an assemble hook.
    pub fn builder() -> ToolRuntimeBuilder {
        ToolRuntimeBuilder::default()
    }

    /// The Code Mode settings, when configured.
    pub fn code_mode(&self) -> Option<&CodeMode> {
        self.settings().and_then(|s| s.code.as_deref())
    }

    fn settings(&self) -> Option<&Settings> {
        self.0.extension.as_deref()?.downcast_ref::<Settings>()
    }

    /// What `scope` contributes to a model request (see [`presentation`](crate::presentation)).
    pub fn assemble(&self, scope: ScopeKey) -> Result<Assembly, AssemblyError> {
        self.assemble_with(scope, &AssembleOptions::default())
    }

    /// [`assemble`](Self::assemble) with options.
    pub fn assemble_with(
        &self,
        scope: ScopeKey,
        options: &AssembleOptions,
    ) -> Result<Assembly, AssemblyError> {
        let mode = self
            .presentation_mode(scope)
            .ok_or(AssemblyError::ScopeDisposed)?;
        let code = self.settings().and_then(|s| s.code.clone());
        let language = match (&code, mode.offers_code()) {
            (_, false) => None,
            (Some(code), true) => Some(language_of(code.language())),
            (None, true) => return Err(AssemblyError::NoCodeRuntime { mode }),
        };
        let view = self.view(scope, mode, language)?;

        let mut tools: Vec<Arc<ToolSchema>> = Vec::new();
        if mode.offers_native() {
            tools.extend(view.native.0.iter().cloned());
        }
        if mode.offers_code()
            && let Some(schema) = self.settings().and_then(|s| s.run_code_schema.clone())
        {
            // The visible tools are in name order; `run_code` takes its place among them.
            let at = tools.partition_point(|t| t.name.as_str() < RESERVED_RUN_CODE);
            tools.insert(at, schema);
        }
        if view.indexed
            && let Some(schema) = self
                .settings()
                .and_then(|s| s.describe_tools_schema.clone())
        {
            let at = tools.partition_point(|t| t.name.as_str() < RESERVED_DESCRIBE_TOOLS);
            tools.insert(at, schema);
        }
        let tools = order_tools(tools, options, mode, || self.reserved_names(scope))?;

        let mut sections = Vec::new();
        if mode == PresentationMode::Code {
            sections.push(PromptSection {
                id: CODE_ONLY_SECTION.to_owned(),
                order: CODE_ONLY_SECTION_ORDER,
                text: Arc::from(code_only_text(view.indexed)),
            });
        } else if mode == PresentationMode::Both && view.code_only_tools {
            // Under `both` the rule is needed only for the tools that declare `Callers::Code`.
            sections.push(PromptSection {
                id: CODE_ONLY_SECTION.to_owned(),
                order: CODE_ONLY_SECTION_ORDER,
                text: Arc::from(code_only_tools_text()),
            });
        }
        if let Some(sdk) = view.sdk {
            sections.push(PromptSection {
                id: SDK_SECTION.to_owned(),
                order: SDK_SECTION_ORDER,
                text: sdk,
            });
        }
        let assembly = Assembly {
            mode,
            tools,
            sections,
        };
        match self.settings().and_then(|s| s.hook.clone()) {
            None => Ok(assembly),
            Some(hook) => {
                match std::panic::catch_unwind(AssertUnwindSafe(|| hook(scope, &assembly))) {
                    Ok(Some(replaced)) => Ok(replaced),
                    Ok(None) => Ok(assembly),
                    Err(p) => Err(AssemblyError::HookPanicked {
                        message: crate::base::error::panic_message(&*p),
                    }),
                }
            }
        }
    }

    /// The scope's tools as `mode` presents them (the definitions it can offer, the SDK's
    /// tools, both in name order) and, for a code language, its SDK section text; from the
    /// cache while the tool set is unchanged.
    fn view(
        &self,
        scope: ScopeKey,
        mode: PresentationMode,
        language: Option<Language>,
    ) -> Result<View, AssemblyError> {
        let key = (scope, mode);
        let generation = self.generation();
        let settings = self.settings();
        if let Some(settings) = settings
            && let Some(hit) = lock(&settings.cache).get(&key)
            && hit.generation == generation
        {
            return Ok(hit.view.clone());
        }
        let listed = |list: Vec<ToolSchema>| Schemas(list.into_iter().map(Arc::new).collect());
        let native = if mode.offers_native() {
            listed(self.native_schemas(scope))
        } else {
            Schemas(Vec::new())
        };
        let sdk_tools = if mode.offers_code() {
            listed(self.sdk_schemas(scope))
        } else {
            Schemas(Vec::new())
        };
        // Something changed somewhere: an unchanged tool set for this scope keeps its text.
        if let Some(settings) = settings
            && let Some(hit) = lock(&settings.cache).get_mut(&key)
            && hit.view.native.same(&native)
            && hit.view.sdk_tools.same(&sdk_tools)
        {
            hit.generation = generation;
            return Ok(hit.view.clone());
        }
        let mut indexed = false;
        let sdk = match language {
            None => None,
            Some(language) => {
                let entries = sdk_tools.0.iter().map(|s| ToolSchema::clone(s)).collect();
                let catalog =
                    tools_schema::Catalog::new(entries).map_err(|e| AssemblyError::Catalog {
                        message: e.to_string(),
                    })?;
                let discovery = settings.map_or(Discovery::Never, |s| s.discovery);
                let full = (discovery != Discovery::Always).then(|| {
                    format!(
                        "{}\n```{}\n{}```\n",
                        tools_codegen::usage_text(language).trim_end(),
                        language.name(),
                        tools_codegen::render_sdk(&catalog, language)
                    )
                });
                match full {
                    Some(full) if !discovery.uses_index(full.len()) => Some(Arc::from(full)),
                    _ => {
                        indexed = true;
                        Some(Arc::from(format!(
                            "{}\n```{}\n{}```\n",
                            tools_codegen::discovery_usage_text(language).trim_end(),
                            language.name(),
                            tools_codegen::render_index(&catalog, language)
                        )))
                    }
                }
            }
        };
        let code_only_tools = mode == PresentationMode::Both
            && sdk_tools
                .0
                .iter()
                .any(|t| native.0.binary_search_by(|n| n.name.cmp(&t.name)).is_err());
        let view = View {
            native: Arc::new(native),
            sdk_tools: Arc::new(sdk_tools),
            sdk,
            code_only_tools,
            indexed,
        };
        if let Some(settings) = settings {
            let mut cache = lock(&settings.cache);
            if cache.len() >= CACHE_PRUNE_AT {
                // Forget the views of scopes that are gone.
                cache.retain(|(scope, _), _| self.presentation_mode(*scope).is_some());
            }
            cache.insert(
                key,
                CacheEntry {
                    generation,
                    view: view.clone(),
                },
            );
        }
        Ok(view)
    }
}

/// Code Mode and presentation settings, kept in the runtime's type-erased extension slot.
struct Settings {
    code: Option<Arc<CodeMode>>,
    /// The catalog entry of the `run_code` definition, made once.
    run_code_schema: Option<Arc<ToolSchema>>,
    /// The catalog entry of the `describe_tools` definition, when discovery is configured.
    describe_tools_schema: Option<Arc<ToolSchema>>,
    discovery: Discovery,
    hook: Option<Arc<AssembleHook>>,
    cache: Mutex<HashMap<(ScopeKey, PresentationMode), CacheEntry>>,
}

/// How many cached views trigger forgetting those of disposed scopes.
const CACHE_PRUNE_AT: usize = 64;

struct CacheEntry {
    generation: u64,
    view: View,
}

#[derive(Clone)]
struct View {
    /// The tools the mode offers as definitions (empty under `code`).
    native: Arc<Schemas>,
    /// The SDK's tools (empty under `native`).
    sdk_tools: Arc<Schemas>,
    sdk: Option<Arc<str>>,
    /// Under `both`: some tool is in the SDK only (it declares `Callers::Code`).
    code_only_tools: bool,
    /// The SDK section is the index (discovery): `describe_tools` is offered.
    indexed: bool,
}

/// A scope's catalog entries, in name order. Raw schemas from outside may be deep: the entries
/// this cache is the last owner of are dropped without recursion.
struct Schemas(Vec<Arc<ToolSchema>>);

impl ToolRuntime {
    /// The SDK's tools as `scope` sees them (name order), from the assembly cache when it is
    /// current (what `describe_tools` describes).
    fn sdk_tools(&self, scope: ScopeKey) -> Arc<Schemas> {
        let mode = self.presentation_mode(scope).unwrap_or_default();
        let language = self.code_mode().map(|c| language_of(c.language()));
        if mode.offers_code()
            && let Ok(view) = self.view(scope, mode, language)
        {
            return view.sdk_tools;
        }
        Arc::new(Schemas(
            self.sdk_schemas(scope).into_iter().map(Arc::new).collect(),
        ))
    }
}

impl Schemas {
    /// Whether both lists hold equal entries, in the same order.
    fn same(&self, other: &Schemas) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| a == b)
    }
}

impl Drop for Schemas {
    fn drop(&mut self) {
        for entry in &mut self.0 {
            if let Some(entry) = Arc::get_mut(entry) {
                crate::base::deep::discard(std::mem::take(&mut entry.input_schema));
                if let Some(output) = entry.output_schema.take() {
                    crate::base::deep::discard(output);
                }
            }
        }
    }
}

fn language_of(language: CodeLanguage) -> Language {
    match language {
        CodeLanguage::TypeScript => Language::TypeScript,
        CodeLanguage::Python => Language::Python,
    }
}

/// `tools` (in name order) with `tool_order`'s names first.
fn order_tools(
    tools: Vec<Arc<ToolSchema>>,
    options: &AssembleOptions,
    mode: PresentationMode,
    reserved: impl Fn() -> BTreeSet<String>,
) -> Result<Vec<Arc<ToolSchema>>, AssemblyError> {
    if options.tool_order.is_empty() {
        return Ok(tools);
    }
    let mut rest: Vec<Option<Arc<ToolSchema>>> = tools.into_iter().map(Some).collect();
    let mut first = Vec::new();
    // Read from the registry only if a listed name is not offered.
    let mut reserved_names: Option<BTreeSet<String>> = None;
    for name in &options.tool_order {
        let found = rest
            .iter_mut()
            .find(|t| t.as_ref().is_some_and(|t| &t.name == name));
        match found {
            Some(slot) => first.extend(slot.take()),
            None if first.iter().any(|t: &Arc<ToolSchema>| &t.name == name) => {}
            None => {
                // A reserved capability may be listed before its definition arrives, where
                // the mode offers definitions at all.
                let names = reserved_names.get_or_insert_with(&reserved);
                if !(mode.offers_native() && names.contains(name)) {
                    return Err(AssemblyError::ToolOrder {
                        name: name.clone(),
                        mode,
                    });
                }
            }
        }
    }
    first.extend(rest.into_iter().flatten());
    Ok(first)
}

fn code_only_tools_text() -> String {
    format!(
        "## Calling tools\n\nSome tools of the SDK below are not among the tools you can call \
         directly: call those from inside a `{RESERVED_RUN_CODE}` program; a direct call of one \
         fails.\n"
    )
}

fn code_only_text(indexed: bool) -> String {
    if indexed {
        return format!(
            "## Calling tools\n\nOnly `{RESERVED_RUN_CODE}` and `{RESERVED_DESCRIBE_TOOLS}` can be \
             called directly. Every other tool below is an async function of the SDK: call it \
             from inside a `{RESERVED_RUN_CODE}` program; a direct call of it fails.\n"
        );
    }
    format!(
        "## Calling tools\n\nOnly `{RESERVED_RUN_CODE}` can be called directly. Every other tool \
         below is an async function of the SDK: call it from inside a `{RESERVED_RUN_CODE}` \
         program; a direct call of it fails.\n"
    )
}
