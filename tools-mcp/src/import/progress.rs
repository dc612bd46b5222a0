//! A server's progress reports as reports of the local call.

use rmcp::model::ProgressNotificationParam;
use tools_runtime::ToolRunContext;
use tools_runtime::progress::Progress;

/// A server's progress report as a report of the local call; whether it was taken (see
/// [`take_progress`]).
pub(super) fn forward_progress(ctx: &ToolRunContext, report: &ProgressNotificationParam) -> bool {
    let mut progress = Progress::new(report.progress);
    if let Some(total) = report.total {
        progress = progress.with_total(total);
    }
    if let Some(message) = &report.message {
        progress = progress.with_message(message.clone());
    }
    take_progress(ctx, progress)
}

/// `progress` as a report of the local call; whether it was taken. One the pipeline refuses
/// (not finite, not increasing, after the call ended) is dropped with a warning.
pub(super) fn take_progress(ctx: &ToolRunContext, progress: Progress) -> bool {
    match ctx.progress(progress) {
        Ok(()) => true,
        Err(refused) => {
            tracing::warn!(
                tool = ctx.name(),
                code = refused.code(),
                error = %refused,
                "an MCP server's progress report was dropped"
            );
            false
        }
    }
}
