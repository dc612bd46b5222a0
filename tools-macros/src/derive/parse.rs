//! Reads a derive input and its `#[serde(...)]` attributes into the [`model`](super::model).
//!
//! Every attribute serde knows is either honoured or rejected here with a message that says what
//! to write instead; problems are collected, never returned early.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;

use super::model::{Container, Data, Field, Names, Repr, SkipIf, Style, Variant};
use crate::case::RenameRule;
use crate::diag::{Errors, doc_text, skip_value, unraw};

/// A `rename_all`-style rule per side.
#[derive(Clone, Copy, Default)]
struct Rules {
    ser: Option<RenameRule>,
    de: Option<RenameRule>,
}

/// Container attributes that shape how variants and fields are named.
#[derive(Default)]
struct ContainerRules {
    rename_all: Rules,
    rename_all_fields: Rules,
    default: bool,
    tag: Option<(String, Span)>,
    content: Option<(String, Span)>,
    untagged: Option<Span>,
}

fn rename_rules_hint() -> String {
    crate::case::RULES
        .iter()
        .map(|(name, _)| format!("\"{name}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

fn lit_str(meta: &ParseNestedMeta<'_>) -> syn::Result<syn::LitStr> {
    meta.value()?.parse()
}

/// `key = "v"` (both sides) or `key(serialize = "a", deserialize = "b")`.
fn pair(meta: &ParseNestedMeta<'_>) -> syn::Result<(Option<syn::LitStr>, Option<syn::LitStr>)> {
    if meta.input.peek(syn::Token![=]) {
        let s = lit_str(meta)?;
        return Ok((Some(s.clone()), Some(s)));
    }
    let mut ser = None;
    let mut de = None;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("serialize") {
            ser = Some(lit_str(&inner)?);
        } else if inner.path.is_ident("deserialize") {
            de = Some(lit_str(&inner)?);
        } else {
            return Err(inner.error("expected `serialize = \"...\"` or `deserialize = \"...\"`"));
        }
        Ok(())
    })?;
    Ok((ser, de))
}

fn rules(meta: &ParseNestedMeta<'_>, errors: &mut Errors) -> syn::Result<Rules> {
    let (ser, de) = pair(meta)?;
    let mut convert = |lit: Option<syn::LitStr>| {
        lit.and_then(|lit| match RenameRule::by_name(&lit.value()) {
            Some(rule) => Some(rule),
            None => {
                errors.error(
                    &lit,
                    format!(
                        "unknown rename rule `{}`: write one of {}",
                        lit.value(),
                        rename_rules_hint()
                    ),
                );
                None
            }
        })
    };
    Ok(Rules {
        ser: convert(ser),
        de: convert(de),
    })
}

/// A `#[serde(...)]` key the derive does not know: its value is skipped so parsing goes on, and
/// the key is an error, since the schema could not follow what it does.
fn unknown_serde_key(
    meta: &ParseNestedMeta<'_>,
    key: &str,
    errors: &mut Errors,
) -> syn::Result<()> {
    skip_value(meta)?;
    errors.error(
        &meta.path,
        format!(
            "`#[serde({key})]` is not known to `#[derive(ToolSchema)]`, so the schema cannot follow it; \
             remove it or implement `ToolSchema` by hand"
        ),
    );
    Ok(())
}

fn inexpressible_with(path: &syn::Path, errors: &mut Errors) {
    let key = path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_default();
    errors.error(
        path,
        format!(
            "`#[serde({key} = ...)]` gives this item a JSON form that `#[derive(ToolSchema)]` cannot see, so it has no schema; \
             instead, wrap the value in a newtype that carries this serde format and implement `ToolSchema` for it by hand, \
             describing exactly what the format reads and writes"
        ),
    );
}

/// Reads the whole derive input.
pub(crate) fn parse(input: &syn::DeriveInput, errors: &mut Errors) -> Container {
    let mut rules = ContainerRules::default();
    let mut container = Container {
        ident: input.ident.clone(),
        generics: input.generics.clone(),
        doc: doc_text(&input.attrs),
        deny_unknown_fields: false,
        repr: Repr::External,
        transparent: None,
        from: None,
        into: None,
        data: Data::Struct(Style::Unit),
    };
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let result = attr.parse_nested_meta(|meta| {
            let path = &meta.path;
            let key = path.get_ident().map(ToString::to_string).unwrap_or_default();
            match key.as_str() {
                "rename" | "bound" | "crate" | "expecting" => skip_value(&meta)?,
                "rename_all" => rules.rename_all = self::rules(&meta, errors)?,
                "rename_all_fields" => rules.rename_all_fields = self::rules(&meta, errors)?,
                "deny_unknown_fields" => container.deny_unknown_fields = true,
                "default" => {
                    skip_value(&meta)?;
                    rules.default = true;
                }
                "tag" => rules.tag = Some((lit_str(&meta)?.value(), path.span())),
                "content" => rules.content = Some((lit_str(&meta)?.value(), path.span())),
                "untagged" => rules.untagged = Some(path.span()),
                "transparent" => container.transparent = Some(path.span()),
                "from" => container.from = Some(lit_str(&meta)?.parse()?),
                "into" => container.into = Some(lit_str(&meta)?.parse()?),
                "try_from" => {
                    skip_value(&meta)?;
                    errors.error(
                        path,
                        "`#[serde(try_from = \"T\")]` accepts only the values of `T` that the conversion allows, which no schema \
                         can state; write `#[serde(from = \"T\")]` with an infallible conversion, or implement `ToolSchema` by hand",
                    );
                }
                "remote" => {
                    skip_value(&meta)?;
                    errors.error(
                        path,
                        "`#[serde(remote = ...)]` describes another type's format; derive `ToolSchema` on the remote type's \
                         wrapper you serialize instead, or implement `ToolSchema` by hand",
                    );
                }
                "variant_identifier" | "field_identifier" => {
                    errors.error(
                        path,
                        format!(
                            "`#[serde({key})]` makes the enum read both names and indices, which has no schema; \
                             remove it and use a plain unit-only enum (a string enum)"
                        ),
                    );
                }
                _ => unknown_serde_key(&meta, &key, errors)?,
            }
            Ok(())
        });
        if let Err(e) = result {
            errors.push(e);
        }
    }

    container.repr = match (&rules.tag, &rules.content, rules.untagged) {
        (None, None, None) => Repr::External,
        (Some((tag, _)), None, None) => Repr::Internal { tag: tag.clone() },
        (Some((tag, _)), Some((content, _)), None) => Repr::Adjacent {
            tag: tag.clone(),
            content: content.clone(),
        },
        (None, None, Some(_)) => Repr::Untagged,
        (None, Some((_, span)), _) => {
            errors.error_at(
                *span,
                "`content` needs `tag` beside it: write `#[serde(tag = \"type\", content = \"data\")]`",
            );
            Repr::External
        }
        (Some((_, span)), _, Some(_)) => {
            errors.error_at(
                *span,
                "an enum is either tagged or `untagged`, not both: remove `tag` or `untagged`",
            );
            Repr::Untagged
        }
    };

    container.data = match &input.data {
        syn::Data::Struct(data) => {
            if let Some((_, span)) = rules.tag.as_ref().or(rules.content.as_ref()) {
                if !matches!(data.fields, syn::Fields::Named(_)) || rules.content.is_some() {
                    errors.error_at(
                        *span,
                        "`tag`/`content` on a struct: only `#[serde(tag = \"...\")]` on a struct with named fields is supported; remove it",
                    );
                } else {
                    // serde writes the struct name under the tag; it is read back without a check.
                    errors.error_at(
                        *span,
                        "`#[serde(tag = \"...\")]` on a struct adds a field holding the struct's name; add that field yourself \
                         (e.g. `kind: String`) or remove the attribute",
                    );
                }
            }
            Data::Struct(parse_fields(
                &data.fields,
                rules.rename_all,
                rules.default,
                errors,
            ))
        }
        syn::Data::Enum(data) => Data::Enum(
            data.variants
                .iter()
                .map(|v| parse_variant(v, &rules, errors))
                .collect(),
        ),
        syn::Data::Union(u) => {
            errors.error(
                u.union_token,
                "a union has no serde format: derive `ToolSchema` on a struct or an enum instead",
            );
            Data::Struct(Style::Unit)
        }
    };
    container
}

fn parse_variant(variant: &syn::Variant, rules: &ContainerRules, errors: &mut Errors) -> Variant {
    let name = unraw(&variant.ident);
    let mut names = Names {
        ser: rules
            .rename_all
            .ser
            .map_or_else(|| name.clone(), |r| r.apply_to_variant(&name)),
        de: rules
            .rename_all
            .de
            .map_or_else(|| name.clone(), |r| r.apply_to_variant(&name)),
        aliases: Vec::new(),
    };
    let mut field_rules = rules.rename_all_fields;
    let mut skip_ser = false;
    let mut skip_de = false;
    for attr in variant.attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let result = attr.parse_nested_meta(|meta| {
            let path = &meta.path;
            let key = path.get_ident().map(ToString::to_string).unwrap_or_default();
            match key.as_str() {
                "rename" => {
                    let (ser, de) = pair(&meta)?;
                    if let Some(ser) = ser {
                        names.ser = ser.value();
                    }
                    if let Some(de) = de {
                        names.de = de.value();
                    }
                }
                "alias" => names.aliases.push(lit_str(&meta)?.value()),
                "rename_all" => field_rules = self::rules(&meta, errors)?,
                "skip" => {
                    skip_ser = true;
                    skip_de = true;
                }
                "skip_serializing" => skip_ser = true,
                "skip_deserializing" => skip_de = true,
                "bound" | "borrow" => skip_value(&meta)?,
                "with" | "serialize_with" | "deserialize_with" => {
                    skip_value(&meta)?;
                    inexpressible_with(path, errors);
                }
                "other" => errors.error(
                    path,
                    "`#[serde(other)]` accepts every unknown tag, which no schema can list; remove it and name the \
                     accepted variants, or take the tag as a `String` field",
                ),
                "untagged" => errors.error(
                    path,
                    "an `untagged` variant inside a tagged enum has no single schema here; mark the whole enum \
                     `#[serde(untagged)]` or give the variant a tag",
                ),
                _ => unknown_serde_key(&meta, &key, errors)?,
            }
            Ok(())
        });
        if let Err(e) = result {
            errors.push(e);
        }
    }
    Variant {
        ident: variant.ident.clone(),
        doc: doc_text(&variant.attrs),
        names,
        skip_ser,
        skip_de,
        style: parse_fields(&variant.fields, field_rules, false, errors),
    }
}

fn parse_fields(fields: &syn::Fields, rules: Rules, default: bool, errors: &mut Errors) -> Style {
    match fields {
        syn::Fields::Named(named) => Style::Struct(
            named
                .named
                .iter()
                .map(|f| parse_field(f, rules, default, errors))
                .collect(),
        ),
        syn::Fields::Unnamed(unnamed) => {
            // serde skips `skip` fields of a tuple struct too, but a newtype is one field.
            if unnamed.unnamed.len() == 1 {
                Style::Newtype(Box::new(parse_field(
                    &unnamed.unnamed[0],
                    rules,
                    default,
                    errors,
                )))
            } else {
                Style::Tuple(unnamed.span())
            }
        }
        syn::Fields::Unit => Style::Unit,
    }
}

fn parse_field(field: &syn::Field, rules: Rules, default: bool, errors: &mut Errors) -> Field {
    let name = field.ident.as_ref().map(unraw).unwrap_or_default();
    let mut out = Field {
        ty: field.ty.clone(),
        doc: doc_text(&field.attrs),
        names: Names {
            ser: rules
                .ser
                .map_or_else(|| name.clone(), |r| r.apply_to_field(&name)),
            de: rules
                .de
                .map_or_else(|| name.clone(), |r| r.apply_to_field(&name)),
            aliases: Vec::new(),
        },
        default,
        skip_ser: false,
        skip_de: false,
        skip_ser_if: SkipIf::Never,
        flatten: None,
    };
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let result = attr.parse_nested_meta(|meta| {
            let path = &meta.path;
            let key = path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            match key.as_str() {
                "rename" => {
                    let (ser, de) = pair(&meta)?;
                    if let Some(ser) = ser {
                        out.names.ser = ser.value();
                    }
                    if let Some(de) = de {
                        out.names.de = de.value();
                    }
                }
                "alias" => out.names.aliases.push(lit_str(&meta)?.value()),
                "default" => {
                    skip_value(&meta)?;
                    out.default = true;
                }
                "skip" => {
                    out.skip_ser = true;
                    out.skip_de = true;
                }
                "skip_serializing" => out.skip_ser = true,
                "skip_deserializing" => out.skip_de = true,
                "skip_serializing_if" => {
                    let lit = lit_str(&meta)?;
                    let predicate: syn::Path = lit.parse()?;
                    let spelled: Vec<String> = predicate
                        .segments
                        .iter()
                        .map(|s| s.ident.to_string())
                        .collect();
                    out.skip_ser_if =
                        if spelled.ends_with(&["Option".to_owned(), "is_none".to_owned()]) {
                            SkipIf::IsNone
                        } else {
                            SkipIf::Custom
                        };
                }
                "flatten" => out.flatten = Some(path.span()),
                "bound" | "borrow" | "getter" => skip_value(&meta)?,
                "with" | "serialize_with" | "deserialize_with" => {
                    skip_value(&meta)?;
                    inexpressible_with(path, errors);
                }
                _ => unknown_serde_key(&meta, &key, errors)?,
            }
            Ok(())
        });
        if let Err(e) = result {
            errors.push(e);
        }
    }
    out
}
