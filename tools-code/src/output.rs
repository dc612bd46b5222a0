//! Output accounting shared by the runtimes: log lines, the result and the failure message count
//! against one `max_output_bytes` budget.

use serde_json::Value;

use super::{CodeCompletion, CodeFailure, CodeFailureKind, CodeOutcome};

/// Log lines captured so far and the bytes they use.
#[derive(Debug)]
pub(crate) struct Output {
    limit: usize,
    used: usize,
    logs: Vec<String>,
    exceeded: bool,
}

impl Output {
    pub(crate) fn new(limit: usize) -> Self {
        Output {
            limit,
            used: 0,
            logs: Vec::new(),
            exceeded: false,
        }
    }

    /// Appends a log line; returns `false` (and keeps nothing) once the budget is exceeded.
    pub(crate) fn push(&mut self, line: String) -> bool {
        if self.exceeded {
            return false;
        }
        match self.used.checked_add(line.len()) {
            Some(total) if total <= self.limit => {
                self.used = total;
                self.logs.push(line);
                true
            }
            _ => {
                self.exceeded = true;
                false
            }
        }
    }

    /// Marks the budget as exceeded (something too large for it was refused before copying).
    #[cfg_attr(not(feature = "typescript"), allow(dead_code))]
    pub(crate) fn refuse(&mut self) {
        self.exceeded = true;
    }

    /// The bytes still free.
    #[cfg_attr(not(feature = "typescript"), allow(dead_code))]
    pub(crate) fn room(&self) -> usize {
        self.limit.saturating_sub(self.used)
    }

    /// Whether a log line was refused.
    #[cfg_attr(not(feature = "typescript"), allow(dead_code))]
    pub(crate) fn exceeded(&self) -> bool {
        self.exceeded
    }

    /// Whether `bytes` more still fit.
    pub(crate) fn fits(&self, bytes: usize) -> bool {
        self.used
            .checked_add(bytes)
            .is_some_and(|total| total <= self.limit)
    }

    /// The message of an `output_limit` failure.
    pub(crate) fn limit_message(&self) -> String {
        format!(
            "the program's output (log lines, result and failure message) exceeded max_output_bytes = {} bytes",
            self.limit
        )
    }

    /// Takes the captured lines.
    pub(crate) fn take_logs(&mut self) -> Vec<String> {
        std::mem::take(&mut self.logs)
    }

    /// Finishes a run that returned `result` (given with its compact JSON text length).
    pub(crate) fn complete(&mut self, result: Option<(Value, usize)>) -> CodeOutcome {
        if self.exceeded {
            return Err(self.output_limit());
        }
        match result {
            Some((value, len)) if !self.fits(len) => {
                tools_schema::deep::discard(value);
                Err(self.output_limit())
            }
            Some((value, _)) => Ok(CodeCompletion {
                logs: self.take_logs(),
                result: Some(value),
            }),
            None => Ok(CodeCompletion {
                logs: self.take_logs(),
                result: None,
            }),
        }
    }

    /// Finishes a failed run; an over-long message turns into an `output_limit` failure.
    pub(crate) fn fail(
        &mut self,
        kind: CodeFailureKind,
        message: String,
        line: Option<u32>,
        column: Option<u32>,
    ) -> CodeFailure {
        if self.exceeded || !self.fits(message.len()) {
            return self.output_limit();
        }
        CodeFailure::new(kind, message, self.take_logs()).at(line, column)
    }

    /// An `output_limit` failure keeping the lines that fit.
    pub(crate) fn output_limit(&mut self) -> CodeFailure {
        let message = self.limit_message();
        CodeFailure::new(CodeFailureKind::OutputLimit, message, self.take_logs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_beyond_the_limit_are_refused_and_fail_the_run() {
        let mut out = Output::new(10);
        assert!(out.push("12345".into()));
        assert!(out.push("12345".into()));
        assert!(!out.push("1".into()));
        let failure = out.complete(None).unwrap_err();
        assert_eq!(failure.kind, CodeFailureKind::OutputLimit);
        assert_eq!(failure.logs, vec!["12345", "12345"]);
    }

    #[test]
    fn the_result_counts_against_the_budget() {
        let mut out = Output::new(10);
        assert!(out.push("12345".into()));
        let failure = out.complete(Some((Value::from("x"), 6))).unwrap_err();
        assert_eq!(failure.kind, CodeFailureKind::OutputLimit);
        let mut out = Output::new(10);
        let done = out.complete(Some((Value::from(1), 1))).unwrap();
        assert_eq!(done.result, Some(Value::from(1)));
    }

    #[test]
    fn the_in_engine_cuts_use_the_same_length_as_the_host() {
        // The prelude and the Python runner cut program-controlled text themselves; their
        // length must be the one the host's messages use.
        let limit = format!("CUT_LIMIT = {};", tools_schema::excerpt::LIMIT);
        assert!(include_str!("typescript/prelude_lazy.js").contains(&format!("const {limit}")));
        let limit = format!("CUT_LIMIT = {}", tools_schema::excerpt::LIMIT);
        assert!(include_str!("python/runner/00_channel.py").contains(&limit));
    }

    #[test]
    fn a_long_failure_message_becomes_an_output_limit() {
        let mut out = Output::new(4);
        let failure = out.fail(CodeFailureKind::Runtime, "too long".into(), Some(1), None);
        assert_eq!(failure.kind, CodeFailureKind::OutputLimit);
    }
}
