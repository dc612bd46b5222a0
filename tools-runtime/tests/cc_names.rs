//! Claude Code tool-name translation, clause by clause (the spec's "CC tool-name translation").

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::json;
use tools_runtime::cc_names::{Diagnostic, NameTable, Policy};
use tools_runtime::error::RegistryError;
use tools_runtime::{Output, ToolDefinition, ToolFilter, ToolRuntime};

fn tool(name: &str) -> ToolDefinition {
    ToolDefinition::builder(name)
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "null"})))
        .execute(|_a, _c| async { Ok(serde_json::Value::Null) })
        .build()
        .unwrap()
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn the_default_table_maps_one_to_many() {
    let t = NameTable::claude_code();
    assert_eq!(
        t.registry_names("Read").unwrap(),
        &strings(&["read", "read_image"])[..]
    );
    assert_eq!(
        t.registry_names("WebFetch").unwrap(),
        &strings(&["web_fetch"])[..]
    );
    assert_eq!(
        t.registry_names("NotebookEdit").unwrap(),
        &strings(&["NotebookEdit"])[..]
    );
    assert!(
        t.registry_names("read").is_none(),
        "keys are Claude Code names"
    );
}

#[test]
fn a_team_builds_its_own_table() {
    let t = NameTable::new()
        .with("Read", ["fs_read"])
        .with("Deploy", ["deploy", "deploy_status", "deploy"]);
    assert_eq!(
        t.registry_names("Deploy").unwrap(),
        &strings(&["deploy", "deploy_status"])[..]
    );
    // Replacing an entry replaces its reverse mapping too.
    let t = t.with("Read", ["read_v2"]);
    assert_eq!(t.canonical("read_v2"), "Read");
    assert_eq!(t.canonical("fs_read"), "fs_read");
    // A registry name shared by two entries maps back to the first.
    let t = NameTable::new().with("A", ["x"]).with("B", ["x", "y"]);
    assert_eq!(t.canonical("x"), "A");
    assert_eq!(t.canonical("y"), "B");
}

#[test]
fn strict_translation_passes_unknown_names_through_so_restrict_fails_loudly() {
    let t = NameTable::claude_code();
    let mut diags = Vec::new();
    let names = t
        .translate(
            &["Read", "Bash", "Frobnicate", "read"],
            Policy::Strict,
            |d| diags.push(d),
        )
        .unwrap();
    assert_eq!(
        names,
        strings(&["read", "read_image", "bash", "Frobnicate"])
    );
    assert_eq!(
        diags,
        vec![Diagnostic::UnknownKept {
            name: "Frobnicate".into()
        }]
    );
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    for n in ["read", "read_image", "bash"] {
        let _ = plugin.register(tool(n)).unwrap();
    }
    let agent = rt.agent_scope();
    let err = agent.restrict(ToolFilter::allow(names)).unwrap_err();
    assert_eq!(
        err,
        RegistryError::UnknownNames {
            names: vec!["Frobnicate".into()]
        }
    );
}

#[test]
fn lenient_translation_drops_unknown_names_and_yields_none_when_nothing_survives() {
    let t = NameTable::claude_code();
    let mut diags = Vec::new();
    let names = t.translate(&["Grep", "Nope"], Policy::Lenient, |d| diags.push(d));
    assert_eq!(names, Some(strings(&["grep"])));
    assert_eq!(
        diags,
        vec![Diagnostic::UnknownDropped {
            name: "Nope".into()
        }]
    );

    let mut diags = Vec::new();
    let none = t.translate(&["Nope", "Neither(x)"], Policy::Lenient, |d| diags.push(d));
    assert_eq!(none, None);
    assert_eq!(diags.last(), Some(&Diagnostic::NothingLeft));
    // An empty list stays an empty list when strict.
    assert_eq!(
        t.translate::<&str>(&[], Policy::Strict, |_| {}),
        Some(Vec::new())
    );

    // What survives feeds restrict directly.
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let _g = plugin.register(tool("grep")).unwrap();
    let _b = plugin.register(tool("bash")).unwrap();
    let agent = rt.agent_scope();
    let allow = t
        .translate(&["Grep", "Nope"], Policy::Lenient, |_| {})
        .unwrap();
    let _m = agent.restrict(ToolFilter::allow(allow)).unwrap();
    assert_eq!(rt.visible_names(agent.key()), vec!["grep"]);
}

#[test]
fn arg_specs_are_stripped_to_the_bare_name_widening_the_gate() {
    let t = NameTable::claude_code();
    let mut diags = Vec::new();
    let names = t
        .translate(&["Bash(git status)", "Bash(ls:*)"], Policy::Strict, |d| {
            diags.push(d)
        })
        .unwrap();
    assert_eq!(names, strings(&["bash"]));
    assert_eq!(
        diags[0],
        Diagnostic::ArgSpecStripped {
            written: "Bash(git status)".into(),
            name: "Bash".into()
        }
    );
    assert!(diags[0].to_string().contains("all of `Bash`"));
}

#[test]
fn aliases_match_both_spellings_and_are_for_matching_only() {
    let t = NameTable::claude_code();
    assert_eq!(t.aliases("bash"), strings(&["bash", "Bash"]));
    assert_eq!(t.aliases("Read"), strings(&["Read", "read", "read_image"]));
    assert_eq!(t.aliases("read_image"), strings(&["read_image", "Read"]));
    assert_eq!(t.aliases("custom"), strings(&["custom"]));
    assert!(t.matches("Bash(rm -rf /)", "bash"));
    assert!(t.matches("bash(git push)", "bash"));
    assert!(t.matches("Read", "read_image"));
    assert!(!t.matches("Write", "read"));
    assert!(!t.matches("Bash", "bash_output"));
}

#[test]
fn canonical_gives_the_claude_code_name_or_the_input() {
    let t = NameTable::claude_code();
    assert_eq!(t.canonical("bash"), "Bash");
    assert_eq!(t.canonical("read_image"), "Read");
    assert_eq!(t.canonical("Read"), "Read");
    assert_eq!(t.canonical("my_tool"), "my_tool");
    assert_eq!(t.canonical("Bash(git status)"), "Bash");
}
