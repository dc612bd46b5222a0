//! The architecture of the workspace, read from its source and manifests (see ARCHITECTURE.md):
//! the crates depend one way ([`crates_depend_one_way`]); in every crate no two modules import
//! each other ([`no_two_modules_import_each_other`]); and the rooms of `tools-runtime` and
//! `tools-code` import one way ([`rooms_import_one_way`]).
//!
//! The rooms of `tools-runtime/src` import one way (see ARCHITECTURE.md at the repository root
//! and [`ALLOWED`]): the call and its result at the bottom, then approvals and the store,
//! errors, the execution, the policy hooks, presentation's vocabulary, the runtime handle with
//! the definitions it holds, and on top the registry, the pipeline, presentation and the
//! macros' support; `cc_names` and `suggest` stand alone. The crate root is the façade: it
//! re-exports from every room, and no room imports from it. This test reads the source and fails
//! on any import against that order.

#![allow(clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The rooms of `tools-runtime/src` and what each may import from (besides itself), from the
/// ground floor up. A room names only rooms earlier in this table
/// ([`the_runtime_rooms_are_ordered`]), so no two rooms import each other, directly or in a
/// circle.
///
/// - `call`: the call and its result: `ToolCall` and the identities it names (token, scope
///   key, principal, origin), progress reports, the decision on a call (`Approval`,
///   `GivenDecision`), the result with its content and `codes`, and the paused call's note and
///   handle a result carries.
/// - `durable`: approvals and the store: `DurableApprovals`, the key and MAC, the handle's
///   text, the paused run, the status an operator reads, `ApprovalError`; `ApprovalStore` and
///   `MemoryStore`.
/// - `errors`: `ToolError`, `ExecutionError` (whose `PauseFailed` carries an `ApprovalError`),
///   `DefinitionError`, `RegistryError`, panic sites.
/// - `extensions`: the type-keyed map a prepare hook fills and the shared state is.
/// - `execution`: `ToolExecution`, the read-only view of a call in flight, and its progress.
/// - `policy`: what the hooks decide and the services they call (the public `hooks`).
/// - `mode`, `assembly`: presentation's vocabulary (`PresentationMode`; `Assembly` and its
///   errors).
/// - `runtime`: the runtime handle and the data it shares, the definitions it holds (builder,
///   output, validation, cards) and the run context a body receives: one room, because they are
///   defined through each other (the handle holds definitions, a body receives the context,
///   the context carries the handle).
/// - `registry`, `pipeline`, `presentation` (with the extension seam), `private` (the macros'
///   support): the behaviour, over the handle.
/// - `cc_names` and `suggest` stand alone.
const ALLOWED: &[(&str, &[&str])] = &[
    ("cc_names", &[]),
    ("suggest", &[]),
    ("call", &[]),
    ("durable", &["call"]),
    ("errors", &["call", "durable"]),
    ("extensions", &[]),
    ("execution", &["call", "durable", "extensions"]),
    ("policy", &["call", "execution"]),
    ("mode", &[]),
    ("assembly", &["call", "mode"]),
    (
        "runtime",
        &[
            "call",
            "durable",
            "errors",
            "extensions",
            "execution",
            "policy",
            "mode",
            "assembly",
        ],
    ),
    (
        "registry",
        &["call", "errors", "execution", "policy", "mode", "runtime"],
    ),
    (
        "pipeline",
        &[
            "call",
            "durable",
            "errors",
            "execution",
            "policy",
            "mode",
            "runtime",
            "suggest",
        ],
    ),
    ("private", &["call", "errors", "execution", "runtime"]),
    (
        "presentation",
        &["call", "durable", "errors", "mode", "assembly", "runtime"],
    ),
];

#[test]
fn the_runtime_rooms_are_ordered() {
    for (at, (room, allowed)) in ALLOWED.iter().enumerate() {
        for target in *allowed {
            assert!(
                ALLOWED[..at].iter().any(|(earlier, _)| earlier == target),
                "room `{room}` may import `{target}`, which is not below it in the table"
            );
        }
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The room a source file belongs to: its first folder under `src`, or `root` for `lib.rs`.
fn room_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap_or(file);
    let mut parts = rel.components();
    let first = parts
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    if parts.next().is_none() {
        // A file directly under src: lib.rs (the root) or a single-file room.
        first.trim_end_matches(".rs").replace("lib", "root")
    } else {
        first
    }
}

/// The room a `crate::` path names: its first segment, `root` for an item of the façade.
fn room_named(segment: &str) -> String {
    match segment {
        "__private" | "private" => "private".to_owned(),
        _ if ALLOWED.iter().any(|(room, _)| *room == segment) => segment.to_owned(),
        _ => "root".to_owned(),
    }
}

/// Every room a file's code (not its comments) names through a `crate::` path.
fn imports(text: &str, named: &dyn Fn(&str) -> String) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let before = &rest[..at];
            let after = &rest[at + "crate::".len()..];
            // `$crate::`, `tools_runtime::` and similar are not this crate's paths.
            let is_path = !before.ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$');
            if is_path {
                let segment: String = after
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !segment.is_empty() {
                    out.insert(named(&segment));
                }
                // `use crate::{a, b}`: a group names the root's items.
                if after.starts_with('{') {
                    out.insert("root".to_owned());
                }
            }
            rest = after;
        }
    }
    out
}

/// The workspace's root folder.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap_or_else(|| panic!("the test crate has no parent folder"))
        .to_path_buf()
}

/// Every workspace crate's folder (one with a `Cargo.toml` and a `src`).
fn crate_folders() -> Vec<PathBuf> {
    let root = workspace();
    let mut out: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("Cargo.toml").is_file() && p.join("src").is_dir())
        .collect();
    out.sort();
    out
}

#[test]
fn rooms_import_one_way() {
    check_rooms("tools-runtime", ALLOWED, &room_named, false);
    check_rooms("tools-code", CODE_ALLOWED, &code_room_named, true);
}

/// The rooms of `tools-code/src`, and what each may import (besides itself and the crate
/// root, which holds the vocabulary every room speaks: the `CodeRuntime` trait, the limits and
/// failures, `PreparedProgram`). The runtimes and the analysis are below Code Mode's
/// registry-facing side (`mode`, `bridge`, `assembly`, `discovery`, `sdk`), which they never
/// import (the analysis reads `mode`'s settings and the bridge's failure text); `output`,
/// `events`, `may_call`, `host` and `sdk` stand alone.
const CODE_ALLOWED: &[(&str, &[&str])] = &[
    ("output", &[]),
    ("events", &[]),
    ("may_call", &[]),
    ("host", &[]),
    ("typescript", &["output"]),
    ("python", &["output", "analysis"]),
    ("analysis", &["typescript", "may_call", "mode", "bridge"]),
    ("sdk", &[]),
    ("discovery", &["sdk"]),
    ("assembly", &["sdk"]),
    (
        "bridge",
        &["analysis", "events", "host", "mode", "may_call"],
    ),
    (
        "mode",
        &[
            "analysis",
            "assembly",
            "bridge",
            "discovery",
            "sdk",
            "events",
        ],
    ),
];

/// The room a `crate::` path of tools-code names.
fn code_room_named(segment: &str) -> String {
    if CODE_ALLOWED.iter().any(|(room, _)| *room == segment) {
        segment.to_owned()
    } else {
        "root".to_owned()
    }
}

/// Checks the rooms of `krate` against `table`; with `root_is_vocabulary`, every room may
/// import the crate root's own items (tools-code's vocabulary lives there), otherwise none may
/// (tools-runtime's root is a façade only).
fn check_rooms(
    krate: &str,
    table: &[(&str, &[&str])],
    named: &dyn Fn(&str) -> String,
    root_is_vocabulary: bool,
) {
    let src = workspace().join(krate).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(
        files.len() > 10,
        "found only {} source files in {krate}",
        files.len()
    );

    let allowed: BTreeMap<&str, &[&str]> = table.iter().copied().collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut wrong = Vec::new();
    for file in &files {
        let room = room_of(&src, file);
        let text = fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        for target in imports(&text, named) {
            if target == room {
                continue;
            }
            graph
                .entry(room.clone())
                .or_default()
                .insert(target.clone());
            if room == "root" {
                continue;
            }
            let ok = (root_is_vocabulary && target == "root")
                || allowed
                    .get(room.as_str())
                    .is_some_and(|rooms| rooms.contains(&target.as_str()));
            if !ok {
                wrong.push(format!(
                    "{} (room `{room}`) imports from `{target}`",
                    file.strip_prefix(&src).unwrap_or(file).display()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the room order of {krate}:\n{}",
        wrong.join("\n")
    );
    // Every room is known to the table, so a new room must be placed in the order on purpose.
    for room in graph.keys().filter(|r| *r != "root") {
        assert!(
            allowed.contains_key(room.as_str()),
            "room `{room}` of {krate} is not in the table of this test; place it in the order"
        );
    }
}

/// The module path of a source file: `call/result.rs` -> `call::result`, `pipeline/mod.rs` ->
/// `pipeline`, `lib.rs` -> `` (the root).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap_or(file);
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        match last.as_str() {
            "mod.rs" | "lib.rs" => {}
            other => parts.push(other.trim_end_matches(".rs").to_owned()),
        }
    }
    if parts.first().is_some_and(|p| p == "private") {
        parts[0] = "__private".to_owned();
    }
    parts
}

/// The modules a file's `use` items name (`crate::a::b::Item` -> `a::b` or `a`, whichever is a
/// module of the crate; `super::x` resolved against the file's own module).
fn used_modules(
    text: &str,
    here: &[String],
    modules: &BTreeSet<Vec<String>>,
) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = line.trim_start();
        if !(code.starts_with("use ")
            || code.starts_with("pub use ")
            || code.starts_with("pub(crate) use "))
        {
            continue;
        }
        let path = code.split("use ").nth(1).unwrap_or_default();
        let mut segments: Vec<String> = Vec::new();
        for seg in path.split("::") {
            let seg = seg.trim();
            if seg.is_empty()
                || seg.starts_with('{')
                || !seg.chars().all(|c| c.is_alphanumeric() || c == '_')
            {
                break;
            }
            segments.push(seg.to_owned());
        }
        let mut base: Vec<String> = match segments.first().map(String::as_str) {
            Some("crate") => Vec::new(),
            Some("super") => here[..here.len().saturating_sub(1)].to_vec(),
            Some("self") => here.to_vec(),
            _ => continue,
        };
        for seg in segments.iter().skip(1) {
            let mut next = base.clone();
            next.push(seg.clone());
            if modules.contains(&next) {
                base = next;
            } else {
                break;
            }
        }
        out.insert(base);
    }
    out
}

#[test]
fn no_two_modules_import_each_other() {
    let mut scanned = 0;
    for folder in crate_folders() {
        scanned += mutual_imports(&folder.join("src"));
    }
    assert!(
        scanned > 100,
        "the scan found only {scanned} imports in the workspace"
    );
}

/// Fails on two modules of the crate at `src` that import each other; the number of imports
/// seen.
fn mutual_imports(src: &Path) -> usize {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(src, f)).collect();
    let mut edges: BTreeSet<(Vec<String>, Vec<String>)> = BTreeSet::new();
    for file in &files {
        let here = module_of(src, file);
        let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for target in used_modules(&text, &here, &modules) {
            // A module re-exporting its own children is a facade, not a dependency on them.
            let child_of_here = target.len() > here.len() && target.starts_with(&here);
            if target != here && !child_of_here {
                edges.insert((here.clone(), target));
            }
        }
    }
    let mutual: Vec<String> = edges
        .iter()
        .filter(|(a, b)| a < b && edges.contains(&(b.clone(), a.clone())))
        .map(|(a, b)| format!("`{}` <-> `{}`", a.join("::"), b.join("::")))
        .collect();
    assert!(
        mutual.is_empty(),
        "modules of {} that import each other:\n{}",
        src.display(),
        mutual.join("\n")
    );
    edges.len()
}

#[test]
fn the_checker_sees_a_backward_import() {
    // A call file naming the registry, a comment that must be ignored, and `$crate::` paths.
    let text = "use crate::registry::Scope;\n// see crate::pipeline\nlet _ = $crate::x;";
    assert_eq!(
        imports(text, &room_named),
        BTreeSet::from(["registry".to_owned()]),
        "the scan must find real imports and only those"
    );
    assert_eq!(
        imports("use crate::{ToolError, codes};", &room_named),
        BTreeSet::from(["root".to_owned()])
    );
}

/// The workspace crates each crate may depend on (normal dependencies; dev-dependencies may
/// reach further, for tests). `tools-runtime` names no Code Mode crate: Code Mode is
/// `tools-code`, which plugs into the runtime's extension seam.
const CRATES: &[(&str, &[&str])] = &[
    ("tools-schema", &[]),
    ("tools-macros", &[]),
    ("tools-dialects", &["tools-schema"]),
    (
        "tools-codegen",
        &[
            "tools-schema",
            "tools-dialects",
            "tools-mcp",
            "tools-runtime",
        ],
    ),
    ("tools-runtime", &["tools-schema", "tools-macros"]),
    (
        "tools-code",
        &[
            "tools-runtime",
            "tools-schema",
            "tools-codegen",
            "tools-approvals",
        ],
    ),
    (
        "tools-mcp",
        &["tools-runtime", "tools-schema", "tools-otel"],
    ),
    ("tools-otel", &[]),
    ("tools-approvals", &["tools-runtime"]),
    (
        "tools-demo",
        &[
            "tools-runtime",
            "tools-approvals",
            "tools-code",
            "tools-codegen",
            "tools-mcp",
            "tools-schema",
            "tools-otel",
        ],
    ),
    (
        "tools-tests",
        &[
            "tools-runtime",
            "tools-code",
            "tools-codegen",
            "tools-schema",
            "tools-dialects",
            "tools-mcp",
            "tools-macros",
        ],
    ),
];

/// Crates no crate of the runtime's core may build: the engines of Code Mode.
const ENGINES: &[&str] = &["rquickjs", "swc_", "libc", "tools-codegen", "tools-code"];

/// The `[dependencies]` table of a manifest: the names of its entries.
fn dependencies(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == "[dependencies]";
            continue;
        }
        if inside
            && !line.starts_with('#')
            && let Some((name, _)) = line.split_once('=')
        {
            let name = name.trim().trim_end_matches(".workspace").trim();
            if !name.is_empty() {
                out.push(name.to_owned());
            }
        }
    }
    out
}

#[test]
fn crates_depend_one_way() {
    let root = workspace();
    let allowed: BTreeMap<&str, &[&str]> = CRATES.iter().copied().collect();
    let mut seen = BTreeSet::new();
    let mut wrong = Vec::new();
    for entry in fs::read_dir(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display())) {
        let manifest = entry
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", root.display()))
            .path()
            .join("Cargo.toml");
        let Ok(text) = fs::read_to_string(&manifest) else {
            continue;
        };
        let Some(name) = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("name = "))
            .map(|n| n.trim_matches('"').to_owned())
        else {
            continue;
        };
        if name == "tools-benches" || !text.contains("[package]") {
            continue;
        }
        seen.insert(name.clone());
        let Some(ok) = allowed.get(name.as_str()) else {
            wrong.push(format!(
                "crate `{name}` is not in the table of this test; place it"
            ));
            continue;
        };
        for dep in dependencies(&text) {
            if dep.starts_with("tools-") && !ok.contains(&dep.as_str()) {
                wrong.push(format!("`{name}` depends on `{dep}`"));
            }
            if name == "tools-runtime" && ENGINES.iter().any(|e| dep.starts_with(e)) {
                wrong.push(format!(
                    "`tools-runtime` builds `{dep}`, which is Code Mode's"
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "crates against the order:\n{}",
        wrong.join("\n")
    );
    for crate_name in ["tools-runtime", "tools-code", "tools-mcp", "tools-codegen"] {
        assert!(
            seen.contains(crate_name),
            "the scan did not find `{crate_name}`"
        );
    }
}
