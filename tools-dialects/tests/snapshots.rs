//! Snapshots of every dialect's definitions and findings over the macro gallery, the codegen
//! fixtures and the example catalog (the adversarial fixture's findings only: its definitions
//! are large and the corpus test checks them).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support;

use serde_json::{Value, json};
use support::corpora;
use tools_dialects::{Dialect, Policy, project_request};

fn entry(tool: &tools_schema::CatalogEntry, dialect: Dialect, with_definition: bool) -> Value {
    match project_request(std::slice::from_ref(tool), dialect, Policy::Warn) {
        Ok(request) => {
            let projection = &request.tools[0];
            let findings: Vec<String> = projection
                .findings
                .iter()
                .map(ToString::to_string)
                .collect();
            let mut out =
                json!({"tool": tool.name, "sent": projection.sent.name(), "findings": findings});
            if with_definition {
                out["definition"] = projection.definition.clone();
            }
            out
        }
        Err(error) => json!({"tool": tool.name, "error": format!("[{}] {error}", error.code())}),
    }
}

#[test]
fn snapshots_per_dialect() {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| {
        for (corpus, tools) in corpora() {
            let with_definitions = corpus != "adversarial";
            for dialect in Dialect::ALL {
                let entries: Vec<Value> = tools
                    .iter()
                    .map(|t| entry(t, dialect, with_definitions))
                    .collect();
                insta::assert_json_snapshot!(format!("{corpus}__{}", dialect.name()), entries);
            }
        }
    });
}
