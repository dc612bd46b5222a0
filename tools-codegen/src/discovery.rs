//! Discovery for large catalogs: a compact index of the tools in place of the whole SDK, the
//! exact SDK declarations of chosen tools, and the ranking of tools against a query.
//!
//! When a catalog's SDK is too large to put in every prompt, Code Mode shows
//! [`render_index`] instead: each tool's name, grouped by the first part of the name
//! ([`name_prefix`]), one line per group, beside the few declarations every program needs
//! (`JsonValue`, `ToolCallError`). The model then asks the `describe_tools` tool for the tools it
//! wants, by name or by a query ranked with [`rank_tools`], and reads their declarations from
//! [`render_declarations`]: the same types, in the same layout, as the full SDK prints them
//! (for Python, `TypedDict` names are made unique within the declarations, so they may differ
//! from the full SDK's where names collide there). Everything here is deterministic: the same
//! tools and the same request give the same bytes.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::parsed::Tools;
use crate::parsed::sealed;
use crate::render::{self, ToolIn};
use crate::renderer::with_embedded;
use crate::{Language, Renderer, ToolList, templates};

/// The most query words [`rank_tools`] reads; the rest of a query is ignored.
pub const MAX_QUERY_WORDS: usize = 32;

/// The longest query word [`rank_tools`] reads, in bytes; longer words are cut.
pub const MAX_QUERY_WORD_BYTES: usize = 64;

/// The group a tool name falls in, in the index: the name up to its first `_`, `.`, `-`, `/` or
/// `:` after the first character, or the whole name when it has none. `github_list_issues`,
/// `github.search` and `github` all fall in `github`.
pub fn name_prefix(name: &str) -> &str {
    let cut = name
        .char_indices()
        .skip(1)
        .find(|(_, c)| matches!(c, '_' | '.' | '-' | '/' | ':'))
        .map_or(name.len(), |(i, _)| i);
    &name[..cut]
}

/// One group of the index template.
#[derive(Debug, Serialize)]
struct IndexGroup {
    prefix: String,
    count: usize,
    names: Vec<String>,
}

/// The index template's context.
#[derive(Debug, Serialize)]
struct IndexContext {
    count: usize,
    groups: Vec<IndexGroup>,
}

/// A name as the index prints it: as it is when it follows MCP's rule (such a name cannot end
/// a comment or a line), else as a string literal of the language.
fn index_name(name: &str, language: Language) -> String {
    if tools_schema::validate_tool_name(name).is_ok() {
        name.to_owned()
    } else {
        match language {
            Language::TypeScript => crate::text::ts_string(name),
            Language::Python => crate::text::py_string(name),
        }
    }
}

fn index_context<'a>(names: impl Iterator<Item = &'a str>, language: Language) -> IndexContext {
    let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut count = 0;
    for name in names {
        count += 1;
        groups.entry(name_prefix(name)).or_default().push(name);
    }
    IndexContext {
        count,
        groups: groups
            .into_iter()
            .map(|(prefix, names)| IndexGroup {
                prefix: index_name(prefix, language),
                count: names.len(),
                names: names.iter().map(|n| index_name(n, language)).collect(),
            })
            .collect(),
    }
}

/// The tools of `tools` named in `order`, in that order; names not among them are skipped,
/// and a name given twice is taken once.
fn pick<'a, J>(tools: &[ToolIn<'a, J>], order: &[&str]) -> Vec<ToolIn<'a, J>> {
    let mut seen = std::collections::BTreeSet::new();
    order
        .iter()
        .filter(|name| seen.insert(**name))
        .filter_map(|name| {
            // The tools are in name order.
            let at = tools.binary_search_by(|t| t.name.cmp(name)).ok()?;
            let t = &tools[at];
            Some(ToolIn {
                name: t.name,
                description: t.description,
                input: t.input,
                output: t.output,
            })
        })
        .collect()
}

impl Renderer {
    /// The index of `catalog` in `language` (see [`render_index`]).
    pub fn index(
        &self,
        catalog: &impl ToolList,
        language: Language,
    ) -> Result<String, crate::CodegenError> {
        let context = match sealed::Sealed::tools(catalog).0 {
            Tools::Values(tools) => index_context(tools.iter().map(|t| t.name), language),
            Tools::Nodes(tools) => index_context(tools.iter().map(|t| t.name), language),
        };
        let name = match language {
            Language::TypeScript => templates::TYPESCRIPT_INDEX,
            Language::Python => templates::PYTHON_INDEX,
        };
        self.render(name, context)
    }

    /// The declarations of the tools of `catalog` named in `order` (see
    /// [`render_declarations`]).
    pub fn declarations(
        &self,
        catalog: &impl ToolList,
        order: &[&str],
        language: Language,
    ) -> Result<String, crate::CodegenError> {
        match language {
            Language::TypeScript => {
                let context = match sealed::Sealed::tools(catalog).0 {
                    Tools::Values(tools) => render::typescript_context(&pick(&tools, order)),
                    Tools::Nodes(tools) => render::typescript_context(&pick(&tools, order)),
                };
                self.render(templates::TYPESCRIPT_DECLARATIONS, context)
            }
            Language::Python => {
                let context = match sealed::Sealed::tools(catalog).0 {
                    Tools::Values(tools) => render::python_context(&pick(&tools, order)),
                    Tools::Nodes(tools) => render::python_context(&pick(&tools, order)),
                };
                self.render(templates::PYTHON_DECLARATIONS, context)
            }
        }
    }

    /// The Code Mode usage text for a prompt whose SDK is an index (see
    /// [`discovery_usage_text`]).
    pub fn discovery_usage(&self, language: Language) -> Result<String, crate::CodegenError> {
        self.usage_with(language, true)
    }
}

/// The index of `catalog`: a header saying how many tools there are and that their types come
/// from `describe_tools`; the declarations every program needs (`JsonValue` and
/// `ToolCallError` in TypeScript, `ToolCallError` in Python); then one comment line per group
/// of tools ([`name_prefix`]), groups and names in byte order, each line
/// `<prefix> (<count>): <name>, <name>, ...`. Names outside MCP's rule are written as string
/// literals. The index followed by the declarations of every tool type-checks.
pub fn render_index(catalog: &impl ToolList, language: Language) -> String {
    let comment = match language {
        Language::TypeScript => "//",
        Language::Python => "#",
    };
    with_embedded(comment, |r| r.index(catalog, language))
}

/// The exact SDK declarations of the tools of `catalog` named in `order`, in that order (names
/// not in the catalog are skipped, repeats taken once): for TypeScript, their entries of
/// `ToolArgsMap` and `ToolOutputMap`, their members of `tools` and `callTool`, typed as the
/// full SDK types them; for Python, the `TypedDict`s they use, a `Tools` protocol with their
/// methods, and `tools`.
pub fn render_declarations(catalog: &impl ToolList, order: &[&str], language: Language) -> String {
    let comment = match language {
        Language::TypeScript => "//",
        Language::Python => "#",
    };
    with_embedded(comment, |r| r.declarations(catalog, order, language))
}

/// The Code Mode instructions for a prompt whose SDK section is an index: the same as
/// [`usage_text`](crate::usage_text), with how to get declarations from `describe_tools` first.
pub fn discovery_usage_text(language: Language) -> String {
    with_embedded("<!--", |r| r.discovery_usage(language))
}

/// The words of `text` for matching: lower-case runs of letters and digits, a camel-case name
/// split at its humps, and a plural `s` dropped from words longer than three letters.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && prev_lower && !word.is_empty() {
                out.push(normal(std::mem::take(&mut word)));
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            word.extend(c.to_lowercase());
        } else {
            prev_lower = false;
            if !word.is_empty() {
                out.push(normal(std::mem::take(&mut word)));
            }
        }
    }
    if !word.is_empty() {
        out.push(normal(word));
    }
    out
}

fn normal(mut word: String) -> String {
    if word.chars().count() > 3 && word.ends_with('s') && !word.ends_with("ss") {
        word.pop();
    }
    word
}

/// Query words that say nothing about a tool.
const STOP_WORDS: &[&str] = &[
    "an", "and", "by", "for", "from", "in", "into", "is", "it", "me", "my", "of", "on", "or",
    "the", "to", "with",
];

/// The tools that match `query`, best first: `tools` gives each tool's name and description.
///
/// The query is read as words (letters and digits, lower-cased, at most [`MAX_QUERY_WORDS`]
/// words of at most [`MAX_QUERY_WORD_BYTES`] bytes); one-letter words and a few words that say
/// nothing about a tool (`the`, `of`, `for`, ...) are dropped. Each word scores for a tool: 8 when it is
/// the whole name, 5 when it is a word of the name, 3 when it begins a word of the name (at
/// least two letters), 2 when it is a word of the description, 1 when it begins one (at least
/// three letters). A tool's score is the sum; tools that score nothing are left out; ties go
/// by name, so the order is total and the same for the same input.
pub fn rank_tools<'a>(
    tools: impl IntoIterator<Item = (&'a str, &'a str)>,
    query: &str,
) -> Vec<&'a str> {
    let mut query_words: Vec<String> = Vec::new();
    for mut word in words(query) {
        if query_words.len() == MAX_QUERY_WORDS {
            break;
        }
        if word.len() > MAX_QUERY_WORD_BYTES {
            let mut end = MAX_QUERY_WORD_BYTES;
            while !word.is_char_boundary(end) {
                end -= 1;
            }
            word.truncate(end);
        }
        if !query_words.contains(&word) {
            query_words.push(word);
        }
    }
    query_words.retain(|w| w.chars().count() > 1 && !STOP_WORDS.contains(&w.as_str()));
    if query_words.is_empty() {
        return Vec::new();
    }
    let whole: String = query_words.join("");
    let mut scored: Vec<(u32, &str)> = tools
        .into_iter()
        .filter_map(|(name, description)| {
            let name_words = words(name);
            let description_words = words(description);
            let mut score = 0u32;
            let joined: String = name_words.concat();
            if joined == whole {
                score += 8;
            }
            for q in &query_words {
                if name_words.iter().any(|w| w == q) {
                    score += 5;
                } else if q.chars().count() >= 2
                    && name_words.iter().any(|w| w.starts_with(q.as_str()))
                {
                    score += 3;
                }
                if description_words.iter().any(|w| w == q) {
                    score += 2;
                } else if q.chars().count() >= 3
                    && description_words.iter().any(|w| w.starts_with(q.as_str()))
                {
                    score += 1;
                }
            }
            (score > 0).then_some((score, name))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().map(|(_, name)| name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        assert_eq!(name_prefix("github_list_issues"), "github");
        assert_eq!(name_prefix("fs.read-file"), "fs");
        assert_eq!(name_prefix("search"), "search");
        assert_eq!(name_prefix("_private"), "_private");
        assert_eq!(name_prefix("a:b"), "a");
        assert_eq!(name_prefix("é-x"), "é");
        assert_eq!(name_prefix(""), "");
    }

    #[test]
    fn words_split_names_and_text() {
        assert_eq!(words("readFile"), ["read", "file"]);
        assert_eq!(words("fs.read-file"), ["fs", "read", "file"]);
        assert_eq!(words("Lists the issues!"), ["list", "the", "issue"]);
        assert_eq!(words("class"), ["class"]);
        assert_eq!(words("HTTPServer"), ["httpserver"]);
    }

    #[test]
    fn ranking_is_by_score_then_name() {
        let tools = [
            ("github_list_issues", "List the issues of a repository."),
            ("github_create_issue", "Open an issue."),
            ("fs_read", "Read a file."),
            ("weather", "The forecast for a city."),
        ];
        assert_eq!(
            rank_tools(tools, "issues"),
            ["github_create_issue", "github_list_issues"]
        );
        assert_eq!(
            rank_tools(tools, "list issues"),
            ["github_list_issues", "github_create_issue"]
        );
        assert_eq!(rank_tools(tools, "read a file"), ["fs_read"]);
        assert_eq!(rank_tools(tools, "weather"), ["weather"]);
        assert!(rank_tools(tools, "  !!  ").is_empty());
        assert!(rank_tools(tools, "nothing matches").is_empty());
    }

    #[test]
    fn long_queries_are_bounded() {
        let long = "x".repeat(10_000);
        let many = (0..1_000)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        let tools = [("xy", "")];
        assert!(rank_tools(tools, &long).is_empty());
        assert!(rank_tools(tools, &many).is_empty());
        // The first words count; those past the limit do not.
        assert_eq!(rank_tools(tools, &format!("xy {many}")), ["xy"]);
        assert!(rank_tools(tools, &format!("{many} xy")).is_empty());
        // One-letter words and stop words are dropped.
        assert!(rank_tools([("a_of", "")], "a of").is_empty());
    }
}
