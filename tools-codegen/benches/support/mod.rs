//! What the codegen benches share: the 1,000-tool catalog and a timer.

#![allow(dead_code)]

use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// The same catalog shape as `benches/codegen/compare.py` generates.
pub fn catalog_json(count: usize) -> String {
    let tools: Vec<Value> = (0..count)
        .map(|i| {
            let mut properties = json!({
                "path": {"type": "string", "description": format!("Path for tool {i}.")},
                "limit": {"type": "integer", "minimum": 1, "maximum": 500},
                "mode": {"type": "string", "enum": ["fast", "exact", "fuzzy"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "dryRun": {"type": "boolean", "default": false},
                "filter": {
                    "type": "object",
                    "properties": {
                        "since": {"type": ["string", "null"], "format": "date-time"},
                        "owner": {"type": "string"},
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}}
                    },
                    "required": ["owner"],
                    "additionalProperties": false
                }
            });
            if i % 4 == 1 {
                properties["target"] = json!({"oneOf": [
                    {"type": "object", "properties": {"kind": {"const": "file"}, "path": {"type": "string"}}, "required": ["kind", "path"], "additionalProperties": false},
                    {"type": "object", "properties": {"kind": {"const": "url"}, "url": {"type": "string"}}, "required": ["kind", "url"], "additionalProperties": false}
                ]});
            }
            if i % 4 == 2 {
                properties["weights"] = json!({"type": "array", "items": {"type": "array", "items": {"type": "number"}}});
            }
            json!({
                "name": format!("tool_{i:04}"),
                "description": format!("Tool number {i}: does one thing well."),
                "inputSchema": {"type": "object", "properties": properties, "required": ["path"], "additionalProperties": i % 4 != 3},
                "outputSchema": {
                    "type": "object",
                    "properties": {
                        "items": {"type": "array", "items": {
                            "type": "object",
                            "properties": {"id": {"type": "integer"}, "name": {"type": "string"}, "score": {"type": ["number", "null"]}},
                            "required": ["id", "name"],
                            "additionalProperties": false
                        }},
                        "total": {"type": "integer"},
                        "truncated": {"type": "boolean"}
                    },
                    "required": ["items", "total"],
                    "additionalProperties": false
                }
            })
        })
        .collect();
    json!({"tools": tools}).to_string()
}

/// The fastest of `runs` runs of `f`.
pub fn fastest(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}
