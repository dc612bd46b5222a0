//! Presentation: how a scope's tools reach the model.
//!
//! The runtime has a [`PresentationMode`] (`native` unless [`ToolRuntimeBuilder::mode`] says
//! otherwise) and an agent scope may choose its own with
//! [`Scope::present_as`](crate::Scope::present_as). [`ToolRuntime::assemble`] turns a scope's
//! view into what a model request carries, an [`Assembly`]:
//!
//! 1. where the mode offers native definitions (`native`, `both`), the visible tools whose
//!    [`Callers`](crate::Callers) allow a direct call ([`ToolRuntime::native_schemas`]), in
//!    name order;
//! 2. what each installed extension's [`Presenter`] adds: Code
//!    Mode (`tools-code`) adds `run_code`, the SDK section and the code-only rule where the
//!    mode offers code. A mode that offers code without a presenter that renders an SDK is
//!    [`AssemblyError::NoCodeRuntime`];
//! 3. the sections by ascending order (ties by id), the tools with
//!    [`AssembleOptions::tool_order`]'s names first;
//! 4. the assemble hook ([`ToolRuntimeBuilder::on_assemble`]), which may replace the whole.
//!
//! The native list is kept per scope and mode while nothing the registry holds changes
//! ([`ToolRuntime::generation`]).
//!
//! # Example
//!
//! ```
//! use serde_json::json;
//! use tools_runtime::presentation::AssembleOptions;
//! use tools_runtime::{Output, ToolDefinition, ToolRuntime};
//!
//! let runtime = ToolRuntime::new();
//! let plugin = runtime.scope();
//! let tool = |name: &str| {
//!     ToolDefinition::builder(name)
//!         .description("A tool.")
//!         .input_schema(json!({"type": "object"}))
//!         .output(Output::json(json!({"type": "string"})))
//!         .execute(|_args, _ctx| async { Ok(json!("")) })
//!         .build()
//!         .unwrap()
//! };
//! let _read = plugin.register(tool("read")).unwrap();
//! let _write = plugin.register(tool("write")).unwrap();
//!
//! let assembly = runtime.assemble(plugin.key()).unwrap();
//! assert_eq!(assembly.tool_names(), vec!["read", "write"]);
//! assert!(assembly.sections.is_empty());
//!
//! let options = AssembleOptions { tool_order: vec!["write".to_owned()] };
//! let ordered = runtime.assemble_with(plugin.key(), &options).unwrap();
//! assert_eq!(ordered.tool_names(), vec!["write", "read"]);
//! ```

pub(crate) mod extension;

pub use crate::assembly::{AssembleHook, AssembleOptions, Assembly, AssemblyError, PromptSection};

use std::collections::BTreeSet;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use crate::call::tool_call::ScopeKey;
use crate::durable::approvals::DurableApprovals;
use crate::mode::PresentationMode;
use crate::runtime::definition::RESERVED_NAMES;
use extension::{BuildError, Extension};
use tools_schema::catalog::CatalogEntry;

use crate::runtime::handle::{Presenter, SchemaList, ToolRuntime, lock};

/// Where a host's per-tool guidance sections start.
pub const TOOL_GUIDANCE_ORDER: i32 = 200;

/// The runtime's construction: its presentation mode, its extensions (Code Mode) and the
/// assemble hook.
#[derive(Default)]
pub struct ToolRuntimeBuilder {
    mode: PresentationMode,
    extensions: Vec<Box<dyn Extension>>,
    hook: Option<Arc<AssembleHook>>,
    durable: Option<DurableApprovals>,
}

impl fmt::Debug for ToolRuntimeBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRuntimeBuilder")
            .field("mode", &self.mode)
            .field(
                "extensions",
                &self.extensions.iter().map(|e| e.name()).collect::<Vec<_>>(),
            )
            .field("hook", &self.hook.is_some())
            .field("durable", &self.durable)
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

    /// Installs a registry-owned capability: Code Mode is
    /// `.extension(tools_code::CodeMode::new(...))`, which gives the runtime its `run_code`
    /// definition, offered wherever the mode is `code` or `both`. See
    /// [`extension`](crate::extension).
    #[must_use]
    pub fn extension(mut self, extension: impl Extension) -> Self {
        self.extensions.push(Box::new(extension));
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

    /// Makes approvals durable: an approval service may then answer
    /// [`Approval::Deferred`](crate::hooks::Approval::Deferred), the call pauses into
    /// `durable`'s store and its result carries the handle any process with the same tools,
    /// store and key resumes it with ([`ToolRuntime::resume`]). See
    /// [`approvals`](crate::approvals).
    #[must_use]
    pub fn durable_approvals(mut self, durable: DurableApprovals) -> Self {
        self.durable = Some(durable);
        self
    }

    /// Builds the runtime, installing each extension in order.
    ///
    /// # Errors
    ///
    /// When an extension refuses its settings, owns a name the registry does not reserve, or
    /// owns a name another extension owns ([`BuildError`]).
    pub fn build(self) -> Result<ToolRuntime, BuildError> {
        let mut owned = std::collections::BTreeMap::new();
        let mut presenters: Vec<Arc<dyn Presenter>> = Vec::new();
        for extension in self.extensions {
            let name = extension.name();
            let installation = extension.install()?;
            for tool in installation.tools {
                let tool_name = tool.definition.name().to_owned();
                if !RESERVED_NAMES.contains(&tool_name.as_str()) {
                    return Err(BuildError::NotReserved {
                        extension: name,
                        name: tool_name,
                    });
                }
                if owned.contains_key(&tool_name) {
                    return Err(BuildError::Duplicate {
                        extension: name,
                        name: tool_name,
                    });
                }
                owned.insert(tool_name, (tool.definition, tool.offered));
            }
            presenters.extend(installation.presenter);
        }
        Ok(ToolRuntime::with_parts(
            self.mode,
            owned,
            presenters,
            self.hook,
            self.durable,
        ))
    }
}

impl ToolRuntime {
    /// An empty registry in `native` mode, without extensions (see [`builder`](Self::builder)).
    pub fn new() -> Self {
        Self::with_parts(
            PresentationMode::Native,
            std::collections::BTreeMap::new(),
            Vec::new(),
            None,
            None,
        )
    }

    /// A builder for a runtime with a presentation mode, extensions (Code Mode), or an assemble
    /// hook.
    pub fn builder() -> ToolRuntimeBuilder {
        ToolRuntimeBuilder::default()
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
        if mode.offers_code() && !self.0.presenters.iter().any(|p| p.presents_code()) {
            return Err(AssemblyError::NoCodeRuntime { mode });
        }
        let tools = if mode.offers_native() {
            self.native_list(scope, mode).0.clone()
        } else {
            Vec::new()
        };
        let mut assembly = Assembly {
            mode,
            tools,
            sections: Vec::new(),
        };
        for presenter in &self.0.presenters {
            presenter.assemble(self, scope, &mut assembly)?;
        }
        assembly
            .sections
            .sort_by(|a, b| a.order.cmp(&b.order).then_with(|| a.id.cmp(&b.id)));
        assembly.tools = order_tools(assembly.tools, options, mode, || self.reserved_names(scope))?;
        match self.0.hook.clone() {
            None => Ok(assembly),
            Some(hook) => {
                match std::panic::catch_unwind(AssertUnwindSafe(|| hook(scope, &assembly))) {
                    Ok(Some(replaced)) => Ok(replaced),
                    Ok(None) => Ok(assembly),
                    Err(p) => Err(AssemblyError::HookPanicked {
                        message: crate::errors::panic_message(&*p),
                    }),
                }
            }
        }
    }

    /// The tools `scope` offers as definitions under `mode`, in name order, from the cache
    /// while nothing the registry holds has changed.
    fn native_list(&self, scope: ScopeKey, mode: PresentationMode) -> Arc<SchemaList> {
        let key = (scope, mode);
        let generation = self.generation();
        if let Some((seen, list)) = lock(&self.0.native_cache).get(&key)
            && *seen == generation
        {
            return list.clone();
        }
        let list = Arc::new(SchemaList::new(self.native_schemas(scope)));
        let mut cache = lock(&self.0.native_cache);
        if cache.len() >= CACHE_PRUNE_AT {
            // Forget the lists of scopes that are gone.
            cache.retain(|(scope, _), _| self.presentation_mode(*scope).is_some());
        }
        cache.insert(key, (generation, list.clone()));
        list
    }
}

/// How many cached lists trigger forgetting those of disposed scopes.
const CACHE_PRUNE_AT: usize = 64;

/// `tools` (in name order) with `tool_order`'s names first.
fn order_tools(
    tools: Vec<Arc<CatalogEntry>>,
    options: &AssembleOptions,
    mode: PresentationMode,
    reserved: impl Fn() -> BTreeSet<String>,
) -> Result<Vec<Arc<CatalogEntry>>, AssemblyError> {
    if options.tool_order.is_empty() {
        return Ok(tools);
    }
    let mut rest: Vec<Option<Arc<CatalogEntry>>> = tools.into_iter().map(Some).collect();
    let mut first = Vec::new();
    // Read from the registry only if a listed name is not offered.
    let mut reserved_names: Option<BTreeSet<String>> = None;
    for name in &options.tool_order {
        let found = rest
            .iter_mut()
            .find(|t| t.as_ref().is_some_and(|t| &t.name == name));
        match found {
            Some(slot) => first.extend(slot.take()),
            None if first.iter().any(|t: &Arc<CatalogEntry>| &t.name == name) => {}
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
