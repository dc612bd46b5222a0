//! What Code Mode adds to prompt assembly: `run_code` (and `describe_tools`) among the tool
//! definitions, the SDK section and the code-only rule.
//!
//! | mode | tool definitions | prompt sections |
//! | --- | --- | --- |
//! | `native` | the visible tools | none |
//! | `code` | `run_code` only | `tools:code-only` (order [`CODE_ONLY_SECTION_ORDER`]) and `tools:sdk` (order [`SDK_SECTION_ORDER`]) |
//! | `both` | the visible tools and `run_code` | `tools:sdk`, and `tools:code-only` when some tool is code-only |
//!
//! A tool's [`Callers`](tools_runtime::Callers) narrow this per tool: a code-only tool
//! (`Callers::Code`) is never a definition, a direct-only tool (`Callers::Direct`) is never in
//! the SDK ([`ToolRuntime::native_schemas`] and [`ToolRuntime::sdk_schemas`] are the two
//! sets). Under `both`, a `tools:code-only` section then says that the tools found only in the
//! SDK are called from programs.
//!
//! With [`Discovery`] (see [`CodeMode::discovery`](crate::CodeMode::discovery)) a large SDK is replaced by a compact index
//! of the tools' names, and `describe_tools` is offered beside `run_code` to give the
//! declarations of the tools the model names or asks for.
//!
//! `tools:sdk` holds the Code Mode instructions and the SDK of the scope's visible tools, in
//! the language of the code runtime, rendered by `tools-codegen`: byte-identical for an
//! unchanged tool set, tools in lexicographic order. The SDK is rendered once per tool set and
//! scope, and taken from a cache while nothing the scope sees has changed.
//!
//! # Example
//!
//! ```
//! # #[cfg(feature = "typescript")]
//! # {
//! use serde_json::json;
//! use tools_code::{CodeMode, TypeScriptRuntime};
//! use tools_runtime::{Output, PresentationMode, ToolDefinition, ToolRuntime};
//!
//! let runtime = ToolRuntime::builder()
//!     .mode(PresentationMode::Code)
//!     .extension(CodeMode::new(TypeScriptRuntime::new()))
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

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tools_codegen::Language;
use tools_runtime::extension::{Presenter, SchemaList};
use tools_runtime::{
    Assembly, AssemblyError, PresentationMode, PromptSection, RESERVED_DESCRIBE_TOOLS,
    RESERVED_RUN_CODE, ScopeKey, ToolRuntime,
};
use tools_schema::catalog::ToolSchema;

use crate::discovery::Discovery;
use crate::lock;

/// The order of the `tools:sdk` section.
pub const SDK_SECTION_ORDER: i32 = 150;
/// The order of the `tools:code-only` section: ahead of the SDK and of the per-tool guidance
/// band ([`TOOL_GUIDANCE_ORDER`](tools_runtime::TOOL_GUIDANCE_ORDER)), so the model reads which
/// tools it may call before what each one is for.
pub const CODE_ONLY_SECTION_ORDER: i32 = 140;
/// The id of the SDK section.
pub const SDK_SECTION: &str = "tools:sdk";
/// The id of the code-only rule.
pub const CODE_ONLY_SECTION: &str = "tools:code-only";

/// How many cached views trigger forgetting those of disposed scopes.
const CACHE_PRUNE_AT: usize = 64;

/// Code Mode's presenter: one per runtime (made when the runtime is built).
#[derive(Debug)]
pub(crate) struct CodePresenter {
    views: Arc<SdkViews>,
    /// The catalog entry of the `run_code` definition, made once.
    run_code_schema: Arc<ToolSchema>,
    /// The catalog entry of the `describe_tools` definition, when discovery is configured.
    describe_tools_schema: Option<Arc<ToolSchema>>,
}

impl CodePresenter {
    pub(crate) fn new(
        views: Arc<SdkViews>,
        run_code_schema: ToolSchema,
        describe_tools_schema: Option<ToolSchema>,
    ) -> Self {
        CodePresenter {
            views,
            run_code_schema: Arc::new(run_code_schema),
            describe_tools_schema: describe_tools_schema.map(Arc::new),
        }
    }
}

/// The rendered SDK sections of one runtime, per scope and mode, while current; shared by the
/// presenter and `describe_tools`.
#[derive(Debug)]
pub(crate) struct SdkViews {
    language: Language,
    discovery: Discovery,
    cache: Mutex<HashMap<(ScopeKey, PresentationMode), CacheEntry>>,
}

#[derive(Debug)]
struct CacheEntry {
    generation: u64,
    view: View,
}

#[derive(Debug, Clone)]
struct View {
    /// The SDK's tools, in name order.
    sdk_tools: Arc<SchemaList>,
    sdk: Arc<str>,
    /// Under `both`: some tool is in the SDK only (it declares `Callers::Code`).
    code_only_tools: bool,
    /// The SDK section is the index (discovery): `describe_tools` is offered.
    indexed: bool,
}

impl SdkViews {
    pub(crate) fn new(language: Language, discovery: Discovery) -> Self {
        SdkViews {
            language,
            discovery,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The SDK's tools as `scope` sees them (name order), from the cache when it is current
    /// (what `describe_tools` describes).
    pub(crate) fn sdk_tools(&self, runtime: &ToolRuntime, scope: ScopeKey) -> Arc<SchemaList> {
        let mode = runtime.presentation_mode(scope).unwrap_or_default();
        if mode.offers_code()
            && let Ok(view) = self.view(runtime, scope, mode)
        {
            return view.sdk_tools;
        }
        Arc::new(SchemaList::new(runtime.sdk_schemas(scope)))
    }

    /// The scope's SDK tools (name order) and its SDK section text under `mode`; from the
    /// cache while the tool set is unchanged.
    fn view(
        &self,
        runtime: &ToolRuntime,
        scope: ScopeKey,
        mode: PresentationMode,
    ) -> Result<View, AssemblyError> {
        let key = (scope, mode);
        let generation = runtime.generation();
        if let Some(hit) = lock(&self.cache).get(&key)
            && hit.generation == generation
        {
            return Ok(hit.view.clone());
        }
        let sdk_tools = SchemaList::new(runtime.sdk_schemas(scope));
        // Something changed somewhere: an unchanged tool set for this scope keeps its text
        // (under `both` the code-only marker also depends on the native set).
        let code_only_tools = mode == PresentationMode::Both && {
            let native = runtime.native_schemas(scope);
            sdk_tools
                .0
                .iter()
                .any(|t| native.binary_search_by(|n| n.name.cmp(&t.name)).is_err())
        };
        if let Some(hit) = lock(&self.cache).get_mut(&key)
            && *hit.view.sdk_tools == sdk_tools
            && hit.view.code_only_tools == code_only_tools
        {
            hit.generation = generation;
            return Ok(hit.view.clone());
        }
        let language = self.language;
        let entries = sdk_tools.0.iter().map(|s| ToolSchema::clone(s)).collect();
        let catalog = tools_schema::Catalog::new(entries).map_err(|e| AssemblyError::Catalog {
            message: e.to_string(),
        })?;
        let full = (self.discovery != Discovery::Always).then(|| {
            format!(
                "{}\n```{}\n{}```\n",
                tools_codegen::usage_text(language).trim_end(),
                language.name(),
                tools_codegen::render_sdk(&catalog, language)
            )
        });
        let (sdk, indexed) = match full {
            Some(full) if !self.discovery.uses_index(full.len()) => (Arc::from(full), false),
            _ => (
                Arc::from(format!(
                    "{}\n```{}\n{}```\n",
                    tools_codegen::discovery_usage_text(language).trim_end(),
                    language.name(),
                    tools_codegen::render_index(&catalog, language)
                )),
                true,
            ),
        };
        let view = View {
            sdk_tools: Arc::new(sdk_tools),
            sdk,
            code_only_tools,
            indexed,
        };
        let mut cache = lock(&self.cache);
        if cache.len() >= CACHE_PRUNE_AT {
            // Forget the views of scopes that are gone.
            cache.retain(|(scope, _), _| runtime.presentation_mode(*scope).is_some());
        }
        cache.insert(
            key,
            CacheEntry {
                generation,
                view: view.clone(),
            },
        );
        Ok(view)
    }
}

impl Presenter for CodePresenter {
    fn presents_code(&self) -> bool {
        true
    }

    fn assemble(
        &self,
        runtime: &ToolRuntime,
        scope: ScopeKey,
        assembly: &mut Assembly,
    ) -> Result<(), AssemblyError> {
        let mode = assembly.mode;
        if !mode.offers_code() {
            return Ok(());
        }
        let view = self.views.view(runtime, scope, mode)?;
        // The tools are in name order; the owned tools take their places among them.
        let mut insert = |schema: Arc<ToolSchema>| {
            let at = assembly
                .tools
                .partition_point(|t| t.name.as_str() < schema.name.as_str());
            assembly.tools.insert(at, schema);
        };
        insert(self.run_code_schema.clone());
        if view.indexed
            && let Some(schema) = &self.describe_tools_schema
        {
            insert(schema.clone());
        }
        if mode == PresentationMode::Code {
            assembly.sections.push(PromptSection {
                id: CODE_ONLY_SECTION.to_owned(),
                order: CODE_ONLY_SECTION_ORDER,
                text: Arc::from(code_only_text(view.indexed)),
            });
        } else if view.code_only_tools {
            // Under `both` the rule is needed only for the tools that declare `Callers::Code`.
            assembly.sections.push(PromptSection {
                id: CODE_ONLY_SECTION.to_owned(),
                order: CODE_ONLY_SECTION_ORDER,
                text: Arc::from(code_only_tools_text()),
            });
        }
        assembly.sections.push(PromptSection {
            id: SDK_SECTION.to_owned(),
            order: SDK_SECTION_ORDER,
            text: view.sdk,
        });
        Ok(())
    }
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
