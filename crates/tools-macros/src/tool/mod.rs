//! `#[tool]` and `#[tools]`: parse -> validate -> expand.

mod attr;
mod block;
mod expand;
mod model;
mod parse;
mod validate;

use proc_macro2::TokenStream;

use crate::diag::Errors;

pub(crate) use block::tools;

/// Expands `#[tool(...)]` on a free function.
pub(crate) fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let item: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(_) => {
            let mut errors = Errors::default();
            errors.error_at(
                proc_macro2::Span::call_site(),
                "`#[tool]` goes on a function: write `#[tool] async fn name(...) -> T { ... }`; \
                 for stateful tools mark the `impl` block `#[tools]` and its methods `#[tool]`",
            );
            let mut out = errors.to_compile_errors();
            out.extend(item);
            return out;
        }
    };
    let mut errors = Errors::default();
    let attrs = attr::parse(args, &mut errors);
    let model = parse::parse(
        attrs,
        &item.attrs,
        &item.sig,
        parse::Place::Free,
        &mut errors,
    );
    validate::validate(&model, &mut errors);
    if errors.is_empty() {
        expand::free(&item, Some(&model))
    } else {
        let mut out = errors.to_compile_errors();
        out.extend(expand::free(&item, None));
        out
    }
}
