//! Parses the keys of `#[tool(...)]`. Unknown and repeated keys are errors on the key.

use proc_macro2::TokenStream;
use syn::parse::Parser;
use syn::spanned::Spanned as _;

use super::model::{CallersKey, Concurrency, Spanned, ToolAttrs};
use crate::diag::{Errors, skip_value};

/// Every key `#[tool]` accepts, for messages.
pub(crate) const KEYS: &str = "`name`, `description`, `timeout`, `timeout_resets_on_progress`, `long_running`, `concurrency_safe`, `render`, `finalize_content`, \
     `presentation_meta`, `present_call`, `present_result`, `callers`, `read_only`, `destructive`, `idempotent`, \
     `open_world`, `title`";

/// A hint key: alone (`read_only`) it says `true`; `= true` or `= false` says which.
fn flag_value(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<Spanned<bool>> {
    if meta.input.peek(syn::Token![=]) {
        let lit: syn::LitBool = meta.value()?.parse()?;
        Ok(Spanned {
            value: lit.value,
            span: lit.span,
        })
    } else {
        Ok(Spanned {
            value: true,
            span: meta.path.span(),
        })
    }
}

/// The duration after `= ` (`"1m30s"`) in milliseconds, or why it is not one (`what` names it).
fn duration_value(
    meta: &syn::meta::ParseNestedMeta<'_>,
    what: &str,
) -> syn::Result<Spanned<Result<u128, String>>> {
    let lit: syn::Lit = meta.value()?.parse()?;
    let value = match &lit {
        syn::Lit::Str(s) => parse_duration(&s.value()),
        _ => Err(format!("{what} is a string with a unit")),
    };
    Ok(Spanned {
        value,
        span: lit.span(),
    })
}

/// Parses `name = "...", timeout = "30s", ...`.
pub(crate) fn parse(tokens: TokenStream, errors: &mut Errors) -> ToolAttrs {
    let mut attrs = ToolAttrs::default();
    let mut seen: Vec<String> = Vec::new();
    let parser = syn::meta::parser(|meta| {
        let key = match meta.path.get_ident() {
            Some(ident) => ident.to_string(),
            None => {
                errors.error(&meta.path, format!("expected a key, one of {KEYS}"));
                return skip_value(&meta);
            }
        };
        let span = meta.path.span();
        if seen.contains(&key) {
            errors.error(
                &meta.path,
                format!("`{key}` is given twice: keep one `{key}` and remove the other"),
            );
            return skip_value(&meta);
        }
        seen.push(key.clone());
        match key.as_str() {
            "name" => {
                let lit: syn::LitStr = meta.value()?.parse()?;
                attrs.name = Some(Spanned {
                    value: lit.value(),
                    span: lit.span(),
                });
            }
            "description" => {
                let lit: syn::LitStr = meta.value()?.parse()?;
                attrs.description = Some(Spanned {
                    value: lit.value(),
                    span: lit.span(),
                });
            }
            "timeout" => attrs.timeout = Some(duration_value(&meta, "the timeout")?),
            "timeout_resets_on_progress" => {
                attrs.max_total = Some(duration_value(&meta, "the maximum total time")?);
            }
            "long_running" => attrs.long_running = true,
            "concurrency_safe" => {
                let value = if meta.input.peek(syn::Token![=]) {
                    Concurrency::Classifier(meta.value()?.parse()?)
                } else {
                    Concurrency::Always
                };
                attrs.concurrency = Some(Spanned { value, span });
            }
            "callers" => {
                let lit: syn::Lit = meta.value()?.parse()?;
                let value = match &lit {
                    syn::Lit::Str(s) => CallersKey::from_name(&s.value()),
                    _ => None,
                };
                attrs.callers = Some(Spanned {
                    value,
                    span: lit.span(),
                });
            }
            "read_only" => attrs.hints.read_only = Some(flag_value(&meta)?),
            "destructive" => attrs.hints.destructive = Some(flag_value(&meta)?),
            "idempotent" => attrs.hints.idempotent = Some(flag_value(&meta)?),
            "open_world" => attrs.hints.open_world = Some(flag_value(&meta)?),
            "title" => {
                let lit: syn::LitStr = meta.value()?.parse()?;
                attrs.hints.title = Some(Spanned {
                    value: lit.value(),
                    span: lit.span(),
                });
            }
            "render" => attrs.render = Some(meta.value()?.parse()?),
            "finalize_content" => attrs.finalize_content = Some(meta.value()?.parse()?),
            "presentation_meta" => attrs.presentation_meta = Some(meta.value()?.parse()?),
            "present_call" => attrs.present_call = Some(meta.value()?.parse()?),
            "present_result" => attrs.present_result = Some(meta.value()?.parse()?),
            _ => {
                errors.error(
                    &meta.path,
                    format!("unknown key `{key}` in `#[tool]`: the keys are {KEYS}"),
                );
                skip_value(&meta)?;
            }
        }
        Ok(())
    });
    if let Err(e) = parser.parse2(tokens) {
        errors.push(e);
    }
    attrs
}

/// Parses `"30s"`, `"500ms"`, `"2m"`, `"1h30m"` into milliseconds.
pub(crate) fn parse_duration(text: &str) -> Result<u128, String> {
    let hint =
        "write a duration such as \"30s\", \"500ms\", \"2m\" or \"1h30m\" (units: ms, s, m, h)";
    let text = text.trim();
    if text.is_empty() {
        return Err(format!("the timeout is empty: {hint}"));
    }
    let mut total: u128 = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return Err(format!("`{text}` is not a duration: {hint}"));
        }
        let number: u128 = rest[..digits]
            .parse()
            .map_err(|_| format!("`{text}` is too large: {hint}"))?;
        rest = &rest[digits..];
        let unit_len = rest.len()
            - rest
                .trim_start_matches(|c: char| c.is_ascii_alphabetic())
                .len();
        let factor = match &rest[..unit_len] {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            "" => return Err(format!("`{text}` has a number without a unit: {hint}")),
            other => return Err(format!("`{other}` is not a time unit: {hint}")),
        };
        rest = &rest[unit_len..];
        total = number
            .checked_mul(factor)
            .and_then(|ms| total.checked_add(ms))
            .ok_or_else(|| format!("`{text}` is too large: {hint}"))?;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::parse_duration;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Ok(30_000));
        assert_eq!(parse_duration("500ms"), Ok(500));
        assert_eq!(parse_duration("1h30m"), Ok(5_400_000));
        assert_eq!(parse_duration("0s"), Ok(0));
        assert!(parse_duration("30").is_err());
        assert!(parse_duration("3d").is_err());
        assert!(parse_duration("").is_err());
        assert!(parse_duration("s").is_err());
    }
}
