//! Suggestions for a mistyped name: the closest names a caller could have meant, as the
//! registry's `UNKNOWN_TOOL` failure and Code Mode's analysis and `describe_tools` give them.
//! It imports nothing from the other rooms.

/// The score at which the registry suggests a name (Jaro-Winkler similarity, 0 to 1).
pub const SUGGEST_AT: f64 = 0.75;

/// Up to three of `candidates` scoring at least `min_score` against `name` (Jaro-Winkler
/// similarity), best first; ties by name.
///
/// ```
/// use tools_runtime::suggest::{SUGGEST_AT, closest};
///
/// let names = ["read_file", "write_file", "list_dir"];
/// assert_eq!(closest("read_fiel", names, SUGGEST_AT), vec!["read_file"]);
/// assert!(closest("zzz", names, SUGGEST_AT).is_empty());
/// ```
pub fn closest<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    min_score: f64,
) -> Vec<&'a str> {
    let mut scored: Vec<(f64, &str)> = candidates
        .into_iter()
        .map(|n| (strsim::jaro_winkler(name, n), n))
        .filter(|(s, _)| *s >= min_score)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().take(3).map(|(_, n)| n).collect()
}
