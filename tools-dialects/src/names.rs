//! Tool names every provider accepts.
//!
//! The portable rule is `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`: OpenAI and Anthropic take
//! `^[a-zA-Z0-9_-]{1,64}$`, Gemini wants a letter or underscore first and at most 64
//! characters. A name that follows the rule is sent as it is. Any other name is sent as its
//! characters outside the rule replaced by `_` (an `_` put first when it does not start with a
//! letter or `_`), cut so that `_` and eight hex digits of a hash of the whole original name fit
//! within 64 characters. The projection is reversible through the table: [`NameMap::original`]
//! maps the name a model called back to the tool's name. Two tools that would be sent under the
//! same name are a [`NameCollision`].
//!
//! ```
//! use tools_dialects::names::{NameMap, portable_name};
//!
//! assert_eq!(portable_name("read_file"), "read_file");
//! assert_eq!(portable_name("fs.read"), "fs_read_d154e2a4");
//! let map = NameMap::new(["fs.read", "read_file"]).unwrap();
//! assert_eq!(map.original("fs_read_d154e2a4"), Some("fs.read"));
//! assert_eq!(map.original("fs.read"), None);
//! ```

use std::collections::HashMap;

use tools_schema::excerpt;

/// The longest portable name, in characters.
pub const MAX_NAME: usize = 64;

/// Whether `name` follows the portable rule `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`.
pub fn is_portable(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.len() <= MAX_NAME
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
}

/// FNV-1a, 32 bits: a stable hash that needs no dependency.
fn fnv1a(text: &str) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in text.bytes() {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

/// The name `name` is sent under (see the [module docs](self)).
pub fn portable_name(name: &str) -> String {
    if is_portable(name) {
        return name.to_owned();
    }
    let mut base: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !base.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        base.insert(0, '_');
    }
    let suffix = format!("_{:08x}", fnv1a(name));
    base.truncate(MAX_NAME - suffix.len());
    base.push_str(&suffix);
    base
}

/// Two tools would be sent under one name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tools {first} and {second} would both be sent as {sent}; rename one of them")]
pub struct NameCollision {
    /// The first tool, quoted.
    pub first: String,
    /// The second tool, quoted.
    pub second: String,
    /// The shared name.
    pub sent: String,
}

impl NameCollision {
    /// The stable error code: `NAME_COLLISION`.
    pub fn code(&self) -> &'static str {
        "NAME_COLLISION"
    }
}

/// The names of a request's tools and the names they are sent under, both ways.
#[derive(Debug, Clone, Default)]
pub struct NameMap {
    sent: Vec<String>,
    originals: Vec<String>,
    by_sent: HashMap<String, usize>,
}

impl NameMap {
    /// Projects each name (see [`portable_name`]).
    ///
    /// # Errors
    ///
    /// [`NameCollision`] when two names are sent alike (the same name twice included).
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<NameMap, NameCollision> {
        let mut map = NameMap::default();
        for name in names {
            let sent = portable_name(name);
            if let Some(&index) = map.by_sent.get(&sent) {
                return Err(NameCollision {
                    first: excerpt::quoted(&map.originals[index]),
                    second: excerpt::quoted(name),
                    sent,
                });
            }
            map.by_sent.insert(sent.clone(), map.sent.len());
            map.sent.push(sent);
            map.originals.push(name.to_owned());
        }
        Ok(map)
    }

    /// The sent names, in the order given.
    pub fn sent_names(&self) -> impl Iterator<Item = &str> {
        self.sent.iter().map(String::as_str)
    }

    /// The tool name behind a name the model called.
    pub fn original(&self, sent: &str) -> Option<&str> {
        self.index(sent)
            .and_then(|i| self.originals.get(i))
            .map(String::as_str)
    }

    /// The name a tool is sent under.
    pub fn sent(&self, original: &str) -> Option<&str> {
        self.originals
            .iter()
            .position(|o| o == original)
            .and_then(|i| self.sent.get(i))
            .map(String::as_str)
    }

    /// The position of a sent name among the names given.
    pub fn index(&self, sent: &str) -> Option<usize> {
        self.by_sent.get(sent).copied()
    }
}
