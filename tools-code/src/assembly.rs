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
//! With [`Discovery`](crate::Discovery) (see [`CodeMode::discovery`](crate::CodeMode::discovery)) a large SDK is replaced by a compact index
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

use std::sync::Arc;

use tools_runtime::extension::Presenter;
use tools_runtime::presentation::{Assembly, AssemblyError, PromptSection};
use tools_runtime::{PresentationMode, ScopeKey, ToolRuntime};
use tools_schema::catalog::CatalogEntry;

use crate::sdk::SdkViews;

/// The order of the `tools:sdk` section.
pub const SDK_SECTION_ORDER: i32 = 150;
/// The order of the `tools:code-only` section: ahead of the SDK and of the per-tool guidance
/// band ([`TOOL_GUIDANCE_ORDER`](tools_runtime::presentation::TOOL_GUIDANCE_ORDER)), so the model reads which
/// tools it may call before what each one is for.
pub const CODE_ONLY_SECTION_ORDER: i32 = 140;
/// The id of the SDK section.
pub const SDK_SECTION: &str = "tools:sdk";
/// The id of the code-only rule.
pub const CODE_ONLY_SECTION: &str = "tools:code-only";

/// Code Mode's presenter: one per runtime (made when the runtime is built).
#[derive(Debug)]
pub(crate) struct CodePresenter {
    views: Arc<SdkViews>,
    /// The catalog entry of the `run_code` definition, made once.
    run_code_schema: Arc<CatalogEntry>,
    /// The catalog entry of the `describe_tools` definition, when discovery is configured.
    describe_tools_schema: Option<Arc<CatalogEntry>>,
}

impl CodePresenter {
    pub(crate) fn new(
        views: Arc<SdkViews>,
        run_code_schema: CatalogEntry,
        describe_tools_schema: Option<CatalogEntry>,
    ) -> Self {
        CodePresenter {
            views,
            run_code_schema: Arc::new(run_code_schema),
            describe_tools_schema: describe_tools_schema.map(Arc::new),
        }
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
        let mut insert = |schema: Arc<CatalogEntry>| {
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
                text: Arc::from(tools_codegen::code_only_text(view.indexed)),
            });
        } else if view.code_only_tools {
            // Under `both` the rule is needed only for the tools that declare `Callers::Code`.
            assembly.sections.push(PromptSection {
                id: CODE_ONLY_SECTION.to_owned(),
                order: CODE_ONLY_SECTION_ORDER,
                text: Arc::from(tools_codegen::code_only_tools_text()),
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

#[cfg(test)]
mod tests {
    use tools_codegen::Language;
    use tools_runtime::definition::{RESERVED_DESCRIBE_TOOLS, RESERVED_RUN_CODE};

    /// The texts `tools-codegen` writes (which `stats` counts) name Code Mode's own tools as
    /// the registry reserves them.
    #[test]
    fn the_codegen_texts_name_the_reserved_tools() {
        for language in Language::ALL {
            let run_code = tools_codegen::run_code_definition(language);
            assert_eq!(run_code.name, RESERVED_RUN_CODE);
            let describe = tools_codegen::describe_tools_definition(language);
            assert_eq!(describe.name, RESERVED_DESCRIBE_TOOLS);
        }
        let indexed = tools_codegen::code_only_text(true);
        assert!(indexed.contains(&format!(
            "`{RESERVED_RUN_CODE}` and `{RESERVED_DESCRIBE_TOOLS}`"
        )));
        let full = tools_codegen::code_only_text(false);
        assert!(full.contains(&format!("Only `{RESERVED_RUN_CODE}` can")));
        assert!(tools_codegen::code_only_tools_text().contains(&format!("`{RESERVED_RUN_CODE}`")));
    }
}
