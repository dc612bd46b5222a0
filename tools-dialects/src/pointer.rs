//! JSON pointers (RFC 6901), as findings, violations and decoding errors name places.

/// `path` with one more reference token, `key` escaped.
pub(crate) fn push(path: &str, key: &str) -> String {
    format!("{path}/{}", key.replace('~', "~0").replace('/', "~1"))
}
