//! Error collection: every problem is recorded with its span, and all of them are reported
//! together.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::meta::ParseNestedMeta;

/// Collects `syn::Error`s so that validation reports every problem in one compile.
#[derive(Default)]
pub(crate) struct Errors {
    errors: Vec<syn::Error>,
}

impl Errors {
    /// Records an error spanned on `tokens`.
    pub(crate) fn error(&mut self, tokens: impl ToTokens, message: impl std::fmt::Display) {
        self.errors.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an error at `span`.
    pub(crate) fn error_at(&mut self, span: proc_macro2::Span, message: impl std::fmt::Display) {
        self.errors.push(syn::Error::new(span, message));
    }

    /// Records an error that syn produced.
    pub(crate) fn push(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    /// Whether nothing was recorded.
    pub(crate) fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// The recorded errors as `compile_error!` invocations.
    pub(crate) fn to_compile_errors(&self) -> TokenStream {
        self.errors
            .iter()
            .map(syn::Error::to_compile_error)
            .collect()
    }
}

/// Reads the `///` lines of an item as one description: each line's single leading space is
/// removed, surrounding blank lines are dropped, and lines are joined with `\n`. `None` when there
/// is no doc text.
pub(crate) fn doc_text(attrs: &[syn::Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
        {
            let value = s.value();
            for line in value.split('\n') {
                let line = line.strip_prefix(' ').unwrap_or(line);
                lines.push(line.trim_end().to_owned());
            }
        }
    }
    while lines.first().is_some_and(|l| l.is_empty()) {
        lines.remove(0);
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    if lines.is_empty() {
        None
    } else {
        Some(lines.join("\n"))
    }
}

/// The identifier as written, without a raw `r#` prefix.
pub(crate) fn unraw(ident: &syn::Ident) -> String {
    let s = ident.to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}

/// Consumes the value after an attribute key (`= value` or `(...)`) that is accepted without
/// being read or rejected with an error, so the parse goes on to the next key.
pub(crate) fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: syn::Token![=] = meta.input.parse()?;
        let _: syn::Expr = meta.input.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        let _: TokenStream = content.parse()?;
    }
    Ok(())
}
