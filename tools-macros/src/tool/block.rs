//! `#[tools]` on an `impl` block: every method marked `#[tool]` becomes a definition bound to a
//! shared `Arc` of the value.

use proc_macro2::TokenStream;
use quote::quote;

use super::{attr, expand, parse, validate};
use crate::diag::Errors;

fn is_tool_attr(attr: &syn::Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|s| s.ident == "tool")
}

/// Expands `#[tools]` on an `impl` block.
pub(crate) fn tools(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    if !args.is_empty() {
        errors.error(
            &args,
            "`#[tools]` takes no arguments: write `#[tools]` and put the keys on each method's `#[tool(...)]`",
        );
    }
    let mut block: syn::ItemImpl = match syn::parse2(item.clone()) {
        Ok(block) => block,
        Err(_) => {
            errors.error_at(
                proc_macro2::Span::call_site(),
                "`#[tools]` goes on an inherent `impl` block: write `#[tools] impl MyPlugin { #[tool] async fn ...(&self) ... }`",
            );
            let mut out = errors.to_compile_errors();
            out.extend(item);
            return out;
        }
    };
    if let Some((_, path, _)) = &block.trait_ {
        errors.error(
            path,
            "`#[tools]` goes on an inherent `impl` block, not a trait implementation: \
             move the tool methods into `impl MyPlugin { ... }`",
        );
    }
    if !block.generics.params.is_empty() {
        errors.error(
            &block.generics,
            "a `#[tools]` block cannot be generic: its schemas are fixed at compile time; \
             implement the tools for a concrete type",
        );
    }

    let mut models = Vec::new();
    for item in &mut block.items {
        match item {
            syn::ImplItem::Fn(method) => {
                let Some(index) = method.attrs.iter().position(is_tool_attr) else {
                    continue;
                };
                let attr = method.attrs.remove(index);
                if let Some(again) = method.attrs.iter().find(|a| is_tool_attr(a)) {
                    errors.error(again, "`#[tool]` is given twice on this method: keep one");
                }
                let args = match &attr.meta {
                    syn::Meta::Path(_) => TokenStream::new(),
                    syn::Meta::List(list) => list.tokens.clone(),
                    syn::Meta::NameValue(nv) => {
                        errors.error(nv, "write `#[tool]` or `#[tool(key = value, ...)]`");
                        TokenStream::new()
                    }
                };
                let attrs = attr::parse(args, &mut errors);
                let model =
                    parse::parse(attrs, &method.attrs, &method.sig, parse::Place::Method, &mut errors);
                validate::validate(&model, &mut errors);
                parse::strip_param_attrs(&mut method.sig);
                models.push(model);
            }
            syn::ImplItem::Macro(mac) => errors.error(
                &mac.mac.path,
                "a macro call inside a `#[tools]` block expands after `#[tools]` has read the block, so a `#[tool]` \
                 method it produces would be missed; move the macro call into a separate `impl` block, or write \
                 the methods out here",
            ),
            _ => {}
        }
    }
    let mut seen: Vec<&str> = Vec::new();
    for model in &models {
        if seen.contains(&model.name.value.as_str()) {
            errors.error_at(
                model.name.span,
                format!(
                    "two tools in this block are named `{}`: give one another name with `#[tool(name = \"...\")]`",
                    model.name.value
                ),
            );
        }
        seen.push(&model.name.value);
    }

    let p = quote!(::tools_runtime::__private);
    let self_ty = &block.self_ty;
    let body = if errors.is_empty() {
        let definitions = models.iter().map(|m| expand::definition(m).0);
        quote!(::core::result::Result::Ok(::std::vec![#(#definitions?),*]))
    } else {
        quote!(::core::unreachable!())
    };
    let mut out = errors.to_compile_errors();
    out.extend(quote! {
        #block

        impl #self_ty {
            /// The definitions of every `#[tool]` method of the `#[tools]` block, each bound to
            /// this shared value.
            #[allow(dead_code)]
            pub fn tool_definitions(
                self: &::std::sync::Arc<Self>,
            ) -> ::core::result::Result<::std::vec::Vec<#p::ToolDefinition>, #p::DefinitionError> {
                #body
            }
        }
    });
    out
}
