//! Claude Code tool names: translating the names a Claude Code configuration is written with
//! (`Read`, `Bash`, `WebFetch`) into the registry's own (`read`, `read_image`, `bash`,
//! `web_fetch`), and back.
//!
//! [`ToolFilter`](crate::ToolFilter)s and [`Scope::restrict`](crate::Scope::restrict) check names
//! strictly, so a permission list written with Claude Code names is translated where it enters
//! the program, never compared or restricted as it is. A [`NameTable`] maps each Claude Code name
//! to one or more registry names (one-to-many: `Read` covers `read` and `read_image`):
//!
//! - [`translate`](NameTable::translate) turns an allow or deny list into registry names for
//!   `restrict`. Arg-specs are stripped (`Bash(git status)` gates all of `bash`, a deliberate
//!   widening to a name-level gate). Under [`Policy::Strict`] (configuration loaded at start)
//!   unknown names pass through unchanged so `restrict` refuses them loudly; under
//!   [`Policy::Lenient`] (data a user or a model supplies) they are dropped with a
//!   [`Diagnostic`], and a list with nothing left is `None`: a dropped name never ends a session.
//! - [`aliases`](NameTable::aliases) and [`matches`](NameTable::matches) are for comparisons
//!   (permission rules, hook matchers): a rule written `Bash(...)` or `bash(...)` matches a call
//!   of `bash`. Aliases are for matching only; never write them into a restriction.
//! - [`canonical`](NameTable::canonical) gives the Claude Code name for payloads that must carry
//!   it (a hook's `tool_name`), or the name itself when it has none.
//!
//! ```
//! use tools_runtime::cc_names::{NameTable, Policy};
//!
//! let table = NameTable::claude_code();
//! let mut notes = Vec::new();
//! let allow = table.translate(&["Read", "Bash(git status)", "Frobnicate"], Policy::Lenient, |d| {
//!     notes.push(d.to_string())
//! });
//! assert_eq!(allow, Some(vec!["read".to_owned(), "read_image".to_owned(), "bash".to_owned()]));
//! assert_eq!(notes.len(), 2); // the stripped arg-spec and the unknown name
//! assert!(table.matches("Bash(rm -rf /)", "bash"));
//! assert_eq!(table.canonical("read_image"), "Read");
//! ```

use std::collections::BTreeMap;
use std::fmt;

/// How [`NameTable::translate`] treats a name it does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Policy {
    /// Pass it through unchanged, so `restrict` refuses it with its own error (for
    /// configuration read at start, where a typo must be loud).
    Strict,
    /// Drop it with a diagnostic (for lists a user or a model supplies at run time).
    Lenient,
}

/// What [`NameTable::translate`] reports about a name it changed or dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Diagnostic {
    /// An arg-spec was stripped: the rule now gates the whole tool.
    ArgSpecStripped {
        /// The name as written, with its arg-spec.
        written: String,
        /// The bare name kept.
        name: String,
    },
    /// A name neither table side knows was dropped (lenient).
    UnknownDropped {
        /// The name.
        name: String,
    },
    /// A name neither table side knows was kept as it is (strict); `restrict` will refuse it
    /// unless the registry has a tool of that name.
    UnknownKept {
        /// The name.
        name: String,
    },
    /// Nothing was left of the list (lenient); the translation is `None`.
    NothingLeft,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Diagnostic::ArgSpecStripped { written, name } => write!(
                f,
                "`{written}`: the argument pattern is ignored; the rule applies to all of `{name}`"
            ),
            Diagnostic::UnknownDropped { name } => {
                write!(f, "`{name}` is not a known tool name; it was dropped")
            }
            Diagnostic::UnknownKept { name } => write!(
                f,
                "`{name}` is not a known Claude Code or registry tool name; it was kept as it is"
            ),
            Diagnostic::NothingLeft => f.write_str("no tool name of the list is known"),
        }
    }
}

/// A translation table from Claude Code tool names to registry tool names.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NameTable {
    /// Claude Code name and its registry names, in the order the entries were added.
    entries: Vec<(String, Vec<String>)>,
    /// Claude Code name -> its index in `entries`.
    forward: BTreeMap<String, usize>,
    /// Registry name -> the Claude Code name that maps to it (the first one given).
    back: BTreeMap<String, String>,
}

/// The default table: Claude Code's usual tool set and the registry names this toolkit's
/// conventions give them.
pub const CLAUDE_CODE_TOOLS: &[(&str, &[&str])] = &[
    ("Bash", &["bash"]),
    ("BashOutput", &["bash_output"]),
    ("Edit", &["edit"]),
    ("Glob", &["glob"]),
    ("Grep", &["grep"]),
    ("KillShell", &["kill_shell"]),
    ("LS", &["ls"]),
    ("MultiEdit", &["multi_edit"]),
    ("NotebookEdit", &["NotebookEdit"]),
    ("Read", &["read", "read_image"]),
    ("Sleep", &["Sleep"]),
    ("Task", &["task"]),
    ("TodoWrite", &["todo_write"]),
    ("WebFetch", &["web_fetch"]),
    ("WebSearch", &["web_search"]),
    ("Write", &["write"]),
];

impl NameTable {
    /// An empty table (every name unknown); add entries with [`with`](Self::with).
    pub fn new() -> Self {
        Self::default()
    }

    /// The default table ([`CLAUDE_CODE_TOOLS`]).
    pub fn claude_code() -> Self {
        CLAUDE_CODE_TOOLS
            .iter()
            .fold(NameTable::new(), |t, (cc, ours)| {
                t.with(*cc, ours.iter().copied())
            })
    }

    /// The same table with `claude_code` mapped to `registry_names` (replacing an earlier entry
    /// of that name). A registry name mapped from two Claude Code names translates back to the
    /// first.
    #[must_use]
    pub fn with<I, S>(mut self, claude_code: impl Into<String>, registry_names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let cc = claude_code.into();
        let mut names: Vec<String> = Vec::new();
        for n in registry_names {
            let n = n.into();
            if !names.contains(&n) {
                names.push(n);
            }
        }
        match self.entries.iter_mut().find(|(c, _)| *c == cc) {
            Some(entry) => entry.1 = names,
            None => self.entries.push((cc, names)),
        }
        // Rebuilt whole, so a registry name always maps back to the first entry naming it.
        self.forward = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, (c, _))| (c.clone(), i))
            .collect();
        self.back.clear();
        for (c, ours) in &self.entries {
            for n in ours {
                self.back.entry(n.clone()).or_insert_with(|| c.clone());
            }
        }
        self
    }

    /// The registry names `claude_code` maps to, if it is in the table.
    pub fn registry_names(&self, claude_code: &str) -> Option<&[String]> {
        self.lookup(claude_code)
    }

    fn lookup(&self, claude_code: &str) -> Option<&[String]> {
        let i = *self.forward.get(claude_code)?;
        self.entries.get(i).map(|(_, ours)| ours.as_slice())
    }

    /// Translates an allow or deny list for [`ToolFilter`](crate::ToolFilter). Each name is
    /// stripped of an arg-spec, then: a Claude Code name becomes its registry names; a registry
    /// name the table knows stays; any other name follows `policy`. The result keeps the first
    /// occurrence of each name, in order. `None` only under [`Policy::Lenient`], when nothing is
    /// left.
    pub fn translate<S: AsRef<str>>(
        &self,
        names: &[S],
        policy: Policy,
        mut on_diagnostic: impl FnMut(Diagnostic),
    ) -> Option<Vec<String>> {
        let mut out: Vec<String> = Vec::new();
        let push = |n: &str, out: &mut Vec<String>| {
            if !out.iter().any(|o| o == n) {
                out.push(n.to_owned());
            }
        };
        for written in names {
            let written = written.as_ref();
            let name = bare(written);
            if name != written.trim() {
                on_diagnostic(Diagnostic::ArgSpecStripped {
                    written: written.to_owned(),
                    name: name.to_owned(),
                });
            }
            if let Some(ours) = self.lookup(name) {
                for n in ours {
                    push(n, &mut out);
                }
            } else if self.back.contains_key(name) {
                push(name, &mut out);
            } else {
                match policy {
                    Policy::Strict => {
                        on_diagnostic(Diagnostic::UnknownKept {
                            name: name.to_owned(),
                        });
                        push(name, &mut out);
                    }
                    Policy::Lenient => on_diagnostic(Diagnostic::UnknownDropped {
                        name: name.to_owned(),
                    }),
                }
            }
        }
        if out.is_empty() && policy == Policy::Lenient {
            on_diagnostic(Diagnostic::NothingLeft);
            return None;
        }
        Some(out)
    }

    /// Every name that denotes the same tool as `name` (arg-spec stripped): the name itself, its
    /// registry names when it is a Claude Code name, and its Claude Code name when it is a
    /// registry name. For matching only.
    pub fn aliases(&self, name: &str) -> Vec<String> {
        let name = bare(name);
        let mut out = vec![name.to_owned()];
        let mut add = |n: &str| {
            if !out.iter().any(|o| o == n) {
                out.push(n.to_owned());
            }
        };
        if let Some(ours) = self.lookup(name) {
            ours.iter().for_each(|n| add(n));
        }
        if let Some(cc) = self.back.get(name) {
            add(cc);
        }
        out
    }

    /// Whether a rule written with `rule_name` (a Claude Code or registry name, with or without
    /// an arg-spec) matches a call of the registry tool `tool_name`.
    pub fn matches(&self, rule_name: &str, tool_name: &str) -> bool {
        let rule = bare(rule_name);
        self.aliases(tool_name).iter().any(|a| a == rule)
    }

    /// The Claude Code name of `name` for payloads that must carry it, or `name` itself (arg-spec
    /// stripped) when it has none.
    pub fn canonical<'a>(&'a self, name: &'a str) -> &'a str {
        let name = bare(name);
        if self.forward.contains_key(name) {
            return name;
        }
        self.back.get(name).map_or(name, String::as_str)
    }
}

/// `name` without a parenthesised arg-spec: `Bash(git status)` -> `Bash`.
fn bare(name: &str) -> &str {
    let name = name.trim();
    match name.find('(') {
        Some(at) if name.ends_with(')') => name[..at].trim_end(),
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arg_specs_are_stripped_only_when_closed() {
        assert_eq!(bare("Bash(git status)"), "Bash");
        assert_eq!(bare("  Read  "), "Read");
        assert_eq!(bare("Odd(name"), "Odd(name");
    }
}
