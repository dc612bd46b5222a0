//! The SDK section of a scope, rendered once per tool set: the full SDK or, past the
//! [`Discovery`] threshold, the index; kept per scope and mode while the registry's
//! [`generation`](ToolRuntime::generation) says nothing changed, or while the scope's tool set
//! is the same. The presenter ([`crate::assembly`]) shows it; `describe_tools`
//! ([`crate::discovery`]) describes the same tool set.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tools_codegen::Language;
use tools_runtime::extension::SchemaList;
use tools_runtime::presentation::AssemblyError;
use tools_runtime::{PresentationMode, ScopeKey, ToolRuntime};
use tools_schema::catalog::CatalogEntry;

use crate::lock;

/// The default threshold of [`Discovery::Auto`]: 40 KiB of SDK section, about ten thousand
/// tokens.
pub const DEFAULT_DISCOVERY_ABOVE_BYTES: usize = 40 * 1024;

/// Whether the SDK section carries the full SDK or a compact index with `describe_tools`
/// beside `run_code` (set with [`CodeMode::discovery`](crate::CodeMode::discovery)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Discovery {
    /// Always the full SDK; `describe_tools` does not exist.
    Never,
    /// The full SDK while its section (instructions, fence and SDK) is at most `above_bytes`
    /// bytes, the index past that. Decided per scope each time its tool set changes.
    Auto {
        /// The largest full SDK section, in bytes, shown as it is.
        above_bytes: usize,
    },
    /// Always the index.
    Always,
}

impl Default for Discovery {
    /// [`Discovery::Never`]: the full SDK, as the behaviour contract describes Code Mode. For
    /// large catalogs choose [`Discovery::auto`] (or `Always`); a full SDK section past
    /// [`DEFAULT_DISCOVERY_ABOVE_BYTES`] logs a warning that says so, once each time it is
    /// rendered (when the scope's tool set changes).
    fn default() -> Self {
        Discovery::Never
    }
}

impl Discovery {
    /// [`Discovery::Auto`] above [`DEFAULT_DISCOVERY_ABOVE_BYTES`]: the index for a catalog
    /// whose full SDK section would pass 40 KiB (about ten thousand tokens).
    pub fn auto() -> Self {
        Discovery::Auto {
            above_bytes: DEFAULT_DISCOVERY_ABOVE_BYTES,
        }
    }

    /// Whether a full SDK section of `bytes` bytes is replaced by the index.
    pub fn uses_index(self, bytes: usize) -> bool {
        match self {
            Discovery::Never => false,
            Discovery::Auto { above_bytes } => bytes > above_bytes,
            Discovery::Always => true,
        }
    }
}

/// How many cached views trigger forgetting those of disposed scopes.
const CACHE_PRUNE_AT: usize = 64;

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
pub(crate) struct View {
    /// The SDK's tools, in name order.
    pub(crate) sdk_tools: Arc<SchemaList>,
    pub(crate) sdk: Arc<str>,
    /// Under `both`: some tool is in the SDK only (it declares `Callers::Code`).
    pub(crate) code_only_tools: bool,
    /// The SDK section is the index (discovery): `describe_tools` is offered.
    pub(crate) indexed: bool,
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
    pub(crate) fn view(
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
        let entries = sdk_tools.0.iter().map(|s| CatalogEntry::clone(s)).collect();
        let catalog = tools_schema::Catalog::new(entries).map_err(|e| AssemblyError::Catalog {
            message: e.to_string(),
        })?;
        let full = (self.discovery != Discovery::Always)
            .then(|| tools_codegen::sdk_section(&catalog, language));
        if self.discovery == Discovery::Never
            && let Some(full) = &full
            && full.len() > DEFAULT_DISCOVERY_ABOVE_BYTES
        {
            tracing::warn!(
                bytes = full.len(),
                tools = sdk_tools.0.len(),
                "the SDK section of a code prompt is {} bytes, past {DEFAULT_DISCOVERY_ABOVE_BYTES}: \
                 `CodeMode::discovery(Discovery::auto())` would show an index and `describe_tools` instead",
                full.len()
            );
        }
        let (sdk, indexed) = match full {
            Some(full) if !self.discovery.uses_index(full.len()) => (Arc::from(full), false),
            _ => (
                Arc::from(tools_codegen::index_section(&catalog, language)),
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
