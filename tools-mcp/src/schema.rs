//! Validation of imported tools' arguments and results against the server's own JSON Schema.
//!
//! An MCP server's schemas are full JSON Schema (draft 2020-12 unless they say otherwise, `$ref`
//! and `$defs` included), and many use keywords outside the registry's enforced subset. An
//! imported tool is therefore a raw definition that validates its own arguments and its own
//! structured results with the `jsonschema` crate. That crate recurses, so both the schema and
//! every value are measured first, without recursion, and refused past [`MAX_DEPTH`] levels.

use serde_json::Value;
use tools_schema::excerpt::cut;

/// The deepest schema or value (in nested arrays and objects) that is validated; deeper ones
/// are refused with a clear message instead of risking the stack.
pub const MAX_DEPTH: usize = 128;

/// At most this many violations are listed in one message.
const MAX_VIOLATIONS: usize = 20;

/// A server's JSON Schema compiled once, at import.
pub struct FullSchema {
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for FullSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FullSchema").finish_non_exhaustive()
    }
}

impl FullSchema {
    /// Compiles `schema` (draft 2020-12 unless its `$schema` names another draft). Fails on a
    /// schema deeper than [`MAX_DEPTH`], on an invalid schema and on a `$ref` that cannot be
    /// resolved locally (nothing is fetched).
    pub fn compile(schema: &Value) -> Result<FullSchema, String> {
        if tools_schema::deep::deeper_than(schema, MAX_DEPTH) {
            return Err(format!(
                "the schema nests more than {MAX_DEPTH} levels deep, which is refused"
            ));
        }
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(false)
            .build(schema)
            .map_err(|e| cut(&e.to_string()).into_owned())?;
        Ok(FullSchema { validator })
    }

    /// Checks `value`; on failure, every violation (up to 20) with its JSON pointer, `; `
    /// separated, as the registry words them (`/offset: ...`).
    pub fn validate(&self, value: &Value) -> Result<(), String> {
        if tools_schema::deep::deeper_than(value, MAX_DEPTH) {
            return Err(format!(
                "the value nests more than {MAX_DEPTH} levels deep, which is refused"
            ));
        }
        let mut out = String::new();
        let mut count = 0usize;
        for error in self.validator.iter_errors(value) {
            count += 1;
            if count > MAX_VIOLATIONS {
                continue;
            }
            if !out.is_empty() {
                out.push_str("; ");
            }
            let pointer = error.instance_path().as_str().to_owned();
            let message = cut(&error.to_string()).into_owned();
            if pointer.is_empty() {
                out.push_str(&message);
            } else {
                out.push_str(&pointer);
                out.push_str(": ");
                out.push_str(&message);
            }
        }
        if count == 0 {
            return Ok(());
        }
        if count > MAX_VIOLATIONS {
            out.push_str(&format!("; and {} more", count - MAX_VIOLATIONS));
        }
        Err(out)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn refs_and_keywords_outside_the_subset_are_enforced_with_paths() {
        let schema = json!({
            "type": "object",
            "$defs": {"port": {"type": "integer", "minimum": 1, "maximum": 65535}},
            "properties": {
                "port": {"$ref": "#/$defs/port"},
                "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}
            },
            "required": ["port"],
            "dependentRequired": {"tags": ["port"]}
        });
        let compiled = FullSchema::compile(&schema).unwrap();
        assert!(compiled.validate(&json!({"port": 80})).is_ok());
        let err = compiled
            .validate(&json!({"port": 0, "tags": ["a", "a"]}))
            .unwrap_err();
        assert!(err.contains("/port: "), "{err}");
        assert!(err.contains("/tags: "), "{err}");
        let missing = compiled.validate(&json!({})).unwrap_err();
        assert!(
            missing.contains("\"port\" is a required property"),
            "{missing}"
        );
    }

    #[test]
    fn deep_values_and_schemas_are_refused_without_overflow() {
        let compiled = FullSchema::compile(&json!({})).unwrap();
        let mut deep = json!(1);
        for _ in 0..100_000 {
            deep = Value::Array(vec![deep]);
        }
        let err = compiled.validate(&deep).unwrap_err();
        assert!(err.contains("more than 128 levels deep"), "{err}");
        let mut schema = json!({"type": "integer"});
        for _ in 0..200 {
            schema = json!({"type": "array", "items": schema});
        }
        let err = FullSchema::compile(&schema).unwrap_err();
        assert!(err.contains("more than 128 levels deep"), "{err}");
        tools_schema::deep::drop_value(deep);
        tools_schema::deep::drop_value(schema);
    }

    #[test]
    fn many_violations_are_counted_not_all_listed() {
        let compiled =
            FullSchema::compile(&json!({"type": "array", "items": {"type": "string"}})).unwrap();
        let value = Value::Array((0..30).map(|i| json!(i)).collect());
        let err = compiled.validate(&value).unwrap_err();
        assert!(err.ends_with("; and 10 more"), "{err}");
    }
}
