//! Reads a function signature into the [`ToolFn`] model, recording every problem.

use syn::spanned::Spanned as _;

use super::model::{Param, ParamKind, Receiver, Returns, Spanned, ToolAttrs, ToolFn};
use crate::diag::{Errors, doc_text, unraw};

/// Where the function stands.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// A free function under `#[tool]`.
    Free,
    /// A method inside a `#[tools]` block.
    Method,
}

fn is_context_attr(attr: &syn::Attribute) -> bool {
    attr.path().is_ident("context")
}

/// Suggests the owned type to write instead of a reference.
fn owned_hint(reference: &syn::TypeReference) -> String {
    let inner = &reference.elem;
    let spelled = quote::quote!(#inner).to_string().replace(' ', "");
    match spelled.as_str() {
        "str" => "`String`".to_owned(),
        "Path" => "`PathBuf`".to_owned(),
        "Value" => "`Value`".to_owned(),
        s if s.starts_with('[') => {
            format!("`Vec<{}>`", s.trim_start_matches('[').trim_end_matches(']'))
        }
        s => format!("`{s}`"),
    }
}

/// Reads `sig` (with the function's attributes) into the model.
pub(crate) fn parse(
    attrs: ToolAttrs,
    fn_attrs: &[syn::Attribute],
    sig: &syn::Signature,
    place: Place,
    errors: &mut Errors,
) -> ToolFn {
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.error(
            &sig.generics,
            "a tool function cannot be generic: its schema is fixed at compile time; \
             write concrete parameter types (and one `#[tool]` function per type you need)",
        );
    }
    if let Some(unsafety) = &sig.unsafety {
        errors.error(
            unsafety,
            "a tool function cannot be `unsafe`: the runtime calls it with model input; \
             make it safe and keep the `unsafe` block inside its body",
        );
    }
    if let Some(abi) = &sig.abi {
        errors.error(
            abi,
            "a tool function uses the Rust ABI: remove the `extern` qualifier",
        );
    }
    if let Some(variadic) = &sig.variadic {
        errors.error(variadic, "a tool function cannot be variadic: remove `...`");
    }

    let mut receiver = Receiver::None;
    let mut params = Vec::new();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Receiver(r) => match place {
                Place::Free => errors.error(
                    r,
                    "`self` outside `#[tools]`: a method tool belongs in an `impl` block marked `#[tools]`; \
                     write `#[tools] impl MyPlugin { #[tool] async fn ...(&self, ...) }` and register it with \
                     `Arc::new(plugin).tool_definitions()`",
                ),
                Place::Method => {
                    if r.reference.is_none() || r.mutability.is_some() || r.colon_token.is_some() {
                        errors.error(
                            r,
                            "a method tool takes `&self`: the tools of a block share one `Arc` of the value, \
                             so keep mutable state behind a `Mutex` and write `&self`",
                        );
                    }
                    receiver = Receiver::Ref;
                }
            },
            syn::FnArg::Typed(pat_type) => {
                if let Some(p) = parse_param(pat_type, errors) {
                    params.push(p);
                }
            }
        }
    }
    if place == Place::Method && receiver == Receiver::None {
        errors.error(
            &sig.ident,
            "a `#[tool]` inside `#[tools]` is a method: add `&self` as its first parameter \
             (or move a free function out of the block and mark it `#[tool]` there)",
        );
    }

    let returns = match &sig.output {
        syn::ReturnType::Default => Returns::Unit,
        syn::ReturnType::Type(_, ty) => {
            let is_result = matches!(&**ty, syn::Type::Path(p) if p.qself.is_none()
                && p.path.segments.last().is_some_and(|s| s.ident == "Result"));
            if is_result {
                Returns::Result((**ty).clone())
            } else {
                Returns::Plain((**ty).clone())
            }
        }
    };

    let name = match &attrs.name {
        Some(name) => name.clone(),
        None => Spanned {
            value: unraw(&sig.ident),
            span: sig.ident.span(),
        },
    };
    let description = match &attrs.description {
        Some(d) => Some(d.value.clone()),
        None => doc_text(fn_attrs),
    };
    ToolFn {
        attrs,
        ident: sig.ident.clone(),
        name,
        description,
        is_async: sig.asyncness.is_some(),
        receiver,
        params,
        returns,
    }
}

fn parse_param(pat_type: &syn::PatType, errors: &mut Errors) -> Option<Param> {
    let context = pat_type.attrs.iter().find(|a| is_context_attr(a));
    if let Some(attr) = context
        && !matches!(attr.meta, syn::Meta::Path(_))
    {
        errors.error(attr, "`#[context]` takes no arguments: write `#[context]`");
    }
    let kind = if context.is_some() {
        ParamKind::Context
    } else {
        ParamKind::Argument
    };
    let name = match &*pat_type.pat {
        syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => unraw(&pi.ident),
        other => {
            errors.error(
                other,
                "a tool parameter is a plain name, which is the argument name the model sees; \
                 write `name: Type` and destructure inside the body",
            );
            return None;
        }
    };
    match &*pat_type.ty {
        syn::Type::Reference(reference) => {
            let message = match kind {
                ParamKind::Argument => format!(
                    "a tool parameter cannot be a reference: it is deserialized from the model's JSON and owned by the call; \
                     write {} instead",
                    owned_hint(reference)
                ),
                ParamKind::Context => format!(
                    "a `#[context]` parameter is passed owned (the run context and tokens are cheap to clone); write {} instead",
                    owned_hint(reference)
                ),
            };
            errors.error(reference, message);
            return None;
        }
        syn::Type::ImplTrait(it) => {
            errors.error(
                it,
                "a tool function cannot be generic, and `impl Trait` in a parameter makes it generic; \
                 write a concrete type",
            );
            return None;
        }
        _ => {}
    }
    let _ = pat_type.ty.span();
    Some(Param {
        name,
        ty: (*pat_type.ty).clone(),
        doc: doc_text(&pat_type.attrs),
        kind,
    })
}

/// Removes the attributes only `#[tool]` understands (`#[context]`, `///` docs) from the
/// parameters, so the function compiles as plain Rust.
pub(crate) fn strip_param_attrs(sig: &mut syn::Signature) {
    for input in &mut sig.inputs {
        if let syn::FnArg::Typed(pat_type) = input {
            pat_type
                .attrs
                .retain(|a| !is_context_attr(a) && !a.path().is_ident("doc"));
        }
    }
}
