//! Checks a parsed [`Container`] for shapes the schema subset cannot state. Every problem is
//! recorded with its span; nothing stops at the first.

use syn::visit::Visit;

use super::model::{Container, Data, Style};
use crate::diag::Errors;

/// Records every problem of `container`.
pub(crate) fn validate(container: &Container, errors: &mut Errors) {
    let mut styles: Vec<(&Style, Option<&syn::Ident>)> = Vec::new();
    match &container.data {
        Data::Struct(style) => styles.push((style, None)),
        Data::Enum(variants) => {
            if variants.is_empty() {
                errors.error(
                    &container.ident,
                    "an enum without variants has no JSON values, so it has no schema; add a variant or use `()`",
                );
            }
            for v in variants {
                styles.push((&v.style, Some(&v.ident)));
            }
        }
    }
    for (style, variant) in &styles {
        match style {
            Style::Tuple(span) => errors.error_at(
                *span,
                match variant {
                    Some(_) => "serde writes a tuple variant as a positional array, which the schema subset cannot describe; \
                                give the variant named fields instead: `Variant { first: A, second: B }`",
                    None => "serde writes a tuple struct as a positional array, which the schema subset cannot describe; \
                             give the struct named fields instead: `struct Point { x: f64, y: f64 }`",
                },
            ),
            Style::Struct(fields) => {
                for f in fields {
                    if let Some(span) = f.flatten
                        && container.deny_unknown_fields
                    {
                        errors.error_at(
                            span,
                            "serde cannot combine `flatten` with `deny_unknown_fields`: remove `deny_unknown_fields` from the container \
                             or list the flattened fields here directly",
                        );
                    }
                }
            }
            Style::Newtype(_) | Style::Unit => {}
        }
    }
    check_recursion(container, errors);
}

/// Rejects a field type that names the deriving type itself.
fn check_recursion(container: &Container, errors: &mut Errors) {
    struct Finder<'a> {
        ident: &'a syn::Ident,
        found: Vec<syn::TypePath>,
    }
    impl<'ast> Visit<'ast> for Finder<'_> {
        fn visit_type_path(&mut self, ty: &'ast syn::TypePath) {
            let names_self = ty.qself.is_none()
                && ty.path.segments.last().is_some_and(|s| {
                    &s.ident == self.ident || (ty.path.segments.len() == 1 && s.ident == "Self")
                });
            if names_self {
                self.found.push(ty.clone());
            }
            syn::visit::visit_type_path(self, ty);
        }
    }
    let mut finder = Finder {
        ident: &container.ident,
        found: Vec::new(),
    };
    let mut visit_style = |style: &Style| match style {
        Style::Struct(fields) => fields.iter().for_each(|f| finder.visit_type(&f.ty)),
        Style::Newtype(f) => finder.visit_type(&f.ty),
        Style::Tuple(_) | Style::Unit => {}
    };
    match &container.data {
        Data::Struct(style) => visit_style(style),
        Data::Enum(variants) => variants.iter().for_each(|v| visit_style(&v.style)),
    }
    for ty in finder.found {
        errors.error(
            &ty,
            format!(
                "`{}` contains itself, and a recursive type has no schema: the schema subset has no `$ref`; \
                 bound the depth with a separate type for the inner level, or hold the nested part as `serde_json::Value`",
                container.ident
            ),
        );
    }
}
