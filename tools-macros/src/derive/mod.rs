//! `#[derive(ToolSchema)]`: parse -> validate -> expand.

mod expand;
mod model;
mod parse;
mod validate;

use proc_macro2::TokenStream;

use crate::diag::Errors;

/// Expands the derive; on errors, emits them beside a stub implementation.
pub(crate) fn derive(input: &syn::DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let container = parse::parse(input, &mut errors);
    validate::validate(&container, &mut errors);
    if errors.is_empty() {
        expand::expand(&container)
    } else {
        let mut out = errors.to_compile_errors();
        out.extend(expand::stub(input));
        out
    }
}
