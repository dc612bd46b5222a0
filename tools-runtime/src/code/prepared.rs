//! Work done on a program ahead of its run, kept for the run.
//!
//! The pre-run analysis parses a `run_code` program on the caller's side before policy
//! decides; the run then needs the same work again. So the analysis leaves what it made here,
//! by language and the program's exact text, and the run takes it: TypeScript's stripped
//! JavaScript (the run's own wrapper check already passed on it), Python's code object
//! compiled by the zygote from the tree it analysed (marshalled, as base64 text). What is kept
//! is a pure function of the program's text, so an entry is right for any run of the same
//! text and language, whoever made it; a run that finds nothing does the work itself.
//!
//! Bounded: at most [`ENTRIES`] entries (the oldest go first), none for a program longer than
//! [`MAX_PROGRAM_BYTES`] or work larger than [`MAX_PREPARED_BYTES`]; an entry is taken once.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use super::CodeLanguage;

/// The most entries kept.
pub(crate) const ENTRIES: usize = 16;
/// The longest program whose work is kept.
pub(crate) const MAX_PROGRAM_BYTES: usize = 256 * 1024;
/// The largest work kept for one program.
pub(crate) const MAX_PREPARED_BYTES: usize = 4 * 1024 * 1024;

/// (language, program, work), most recent last.
static PREPARED: Mutex<VecDeque<(CodeLanguage, String, String)>> = Mutex::new(VecDeque::new());

/// Keeps `work` done on `program` for its run (see [`take`]).
pub(crate) fn remember(language: CodeLanguage, program: &str, work: String) {
    if program.len() > MAX_PROGRAM_BYTES || work.len() > MAX_PREPARED_BYTES {
        return;
    }
    let mut prepared = PREPARED.lock().unwrap_or_else(PoisonError::into_inner);
    if prepared.len() >= ENTRIES {
        prepared.pop_front();
    }
    prepared.push_back((language, program.to_owned(), work));
}

/// The work done on `program` ahead of its run in `language`, when there is some (taken: a
/// second run of the same text does the work again).
pub(crate) fn take(language: CodeLanguage, program: &str) -> Option<String> {
    let mut prepared = PREPARED.lock().unwrap_or_else(PoisonError::into_inner);
    let at = prepared
        .iter()
        .rposition(|(lang, text, _)| *lang == language && text == program)?;
    prepared.remove(at).map(|(_, _, work)| work)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_is_taken_once_by_language_and_exact_text() {
        // Texts of this test's own, so that tests running at the same time cannot take them.
        let program = "return 'prepared once';";
        remember(CodeLanguage::TypeScript, program, "JS".to_owned());
        assert_eq!(
            take(CodeLanguage::TypeScript, "return 'prepared once'; "),
            None
        );
        assert_eq!(take(CodeLanguage::Python, program), None);
        assert_eq!(
            take(CodeLanguage::TypeScript, program).as_deref(),
            Some("JS")
        );
        assert_eq!(take(CodeLanguage::TypeScript, program), None);

        // Bounded: the oldest entries go first, and long programs or work are not kept.
        let texts: Vec<String> = (0..=ENTRIES)
            .map(|i| format!("return 'bounded {i}';"))
            .collect();
        for text in &texts {
            remember(CodeLanguage::Python, text, text.clone());
        }
        assert_eq!(take(CodeLanguage::Python, &texts[0]), None);
        assert_eq!(
            take(CodeLanguage::Python, &texts[ENTRIES]).as_ref(),
            Some(&texts[ENTRIES])
        );
        let long = format!("return '{}';", "x".repeat(MAX_PROGRAM_BYTES));
        remember(CodeLanguage::TypeScript, &long, String::new());
        assert_eq!(take(CodeLanguage::TypeScript, &long), None);
        let program = "return 'large work';";
        remember(
            CodeLanguage::Python,
            program,
            "x".repeat(MAX_PREPARED_BYTES + 1),
        );
        assert_eq!(take(CodeLanguage::Python, program), None);
    }
}
