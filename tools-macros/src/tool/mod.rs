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

/// A free function as `#[tool]` reads it: the body is kept as unparsed tokens and passed
/// through unchanged (the macro only needs the signature), which keeps the expansion cheap.
#[derive(Clone)]
pub(crate) struct FnItem {
    pub(crate) attrs: Vec<syn::Attribute>,
    pub(crate) vis: syn::Visibility,
    pub(crate) sig: syn::Signature,
    pub(crate) body: proc_macro2::Group,
}

impl syn::parse::Parse for FnItem {
    fn parse(input: syn::parse::ParseStream<'_>) -> syn::Result<Self> {
        let attrs = input.call(syn::Attribute::parse_outer)?;
        let vis = input.parse()?;
        let sig = input.parse()?;
        let body: proc_macro2::Group = input.parse()?;
        if body.delimiter() != proc_macro2::Delimiter::Brace {
            return Err(syn::Error::new(body.span(), "expected a function body"));
        }
        Ok(FnItem {
            attrs,
            vis,
            sig,
            body,
        })
    }
}

impl quote::ToTokens for FnItem {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        for attr in &self.attrs {
            attr.to_tokens(tokens);
        }
        self.vis.to_tokens(tokens);
        self.sig.to_tokens(tokens);
        self.body.to_tokens(tokens);
    }
}

/// Expands `#[tool(...)]` on a free function.
pub(crate) fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let item: FnItem = match syn::parse2(item.clone()) {
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
