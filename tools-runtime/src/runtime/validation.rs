//! Compiled validators for input and output schemas: a thin seam over
//! [`tools_schema::Validator`], compiled once per definition at build time.

use serde_json::Value;
use tools_schema::{Schema, Validator, Violations, assert_object_root};

/// A schema compiled once at registration. Cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct Compiled(Validator);

impl Compiled {
    /// An input schema: in the subset, with an object root.
    pub(crate) fn input(schema: &Value) -> Result<Compiled, String> {
        assert_object_root(schema).map_err(|e| e.to_string())?;
        Validator::new(schema)
            .map(Compiled)
            .map_err(|e| e.to_string())
    }

    /// An output schema: in the subset, any root.
    pub(crate) fn output(schema: &Value) -> Result<Compiled, String> {
        Validator::new(schema)
            .map(Compiled)
            .map_err(|e| e.to_string())
    }

    /// Every violation, `; `-separated, each with its JSON pointer.
    pub(crate) fn validate(&self, value: &Value) -> Result<(), String> {
        self.0.validate(value).map_err(|v| join(&v))
    }

    pub(crate) fn is_valid(&self, value: &Value) -> bool {
        self.0.is_valid(value)
    }
}

fn join(violations: &Violations) -> String {
    let mut out = String::new();
    for (i, v) in violations.iter().enumerate() {
        if i > 0 {
            out.push_str("; ");
        }
        if v.pointer.is_empty() {
            out.push_str(&v.message);
        } else {
            out.push_str(&v.pointer);
            out.push_str(": ");
            out.push_str(&v.message);
        }
    }
    out
}

pub(crate) fn typed_to_json(schema: &Schema) -> Value {
    schema.to_json()
}
