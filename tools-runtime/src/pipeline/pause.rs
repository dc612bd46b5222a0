//! Pausing and resuming: a call whose approval service answers
//! [`Approval::Deferred`] is written to the runtime's store and returns at once
//! (`APPROVAL_PENDING`, with its handle); [`ToolRuntime::resume`] completes it later, in this
//! process or any other with the same tools, store and key. See [`crate::approvals`] for the
//! rules.

use std::borrow::Cow;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{Draft, Run};
use crate::base::approvals::{
    ApprovalError, DurableApprovals, MacFields, Pending, PendingHandle, ResumedRun, RunPause,
    fresh_id, mac_hex, now_ms, sha256_hex,
};
use crate::base::call::{CallOrigin, ToolCall};
use crate::base::error::{ExecutionError, codes};
use crate::base::hooks::Approval;
use crate::base::result::ToolExecutionResult;
use crate::base::runtime::ToolRuntime;
use crate::base::store::{CallState, PendingRecord, Transition};

impl Run {
    /// The call pauses for a decision that comes later: written to the store (a program's call
    /// is not: its run pauses as a whole), or failed when it cannot be.
    pub(crate) async fn pause(&self, reason: Option<String>) -> Draft {
        if matches!(self.exec.origin(), CallOrigin::Program(_)) {
            // The run pauses as a whole when it can be kept: the checks of `write_pending`.
            return match self.pausing_agent() {
                Ok(_) => Draft::Paused(Box::new(Pending {
                    handle: None,
                    reason,
                })),
                Err(error) => self.pause_failed(error),
            };
        }
        self.paused_with(reason, None).await
    }

    fn pause_failed(&self, error: ApprovalError) -> Draft {
        Draft::from_error(ExecutionError::PauseFailed {
            tool: self.exec.name().to_owned(),
            error: Arc::new(error),
        })
    }

    /// The runtime's durable approvals and the name of the call's agent scope (`None` for the
    /// global scope), or why the call cannot pause.
    fn pausing_agent(&self) -> Result<(&DurableApprovals, Option<String>), ApprovalError> {
        let Some(durable) = &self.rt.0.durable else {
            return Err(ApprovalError::NotDurable);
        };
        let agent = match self.exec.agent() {
            Some(key) if !key.is_global() => match self.rt.agent_name(key) {
                Some(name) => Some(name.to_string()),
                None => return Err(ApprovalError::UnnamedScope),
            },
            _ => None,
        };
        Ok((durable, agent))
    }

    /// The call's body left a [`RunPause`]: its program waits for a decision on one of its
    /// calls, and the call pauses with the program's journal. A program's call (a run inside a
    /// run) does not pause: it fails, since only the outermost run can be replayed.
    pub(crate) async fn pause_run(&self, pause: RunPause) -> Draft {
        if matches!(self.exec.origin(), CallOrigin::Program(_)) {
            return Draft::Paused(Box::new(Pending {
                handle: None,
                reason: pause.reason,
            }));
        }
        self.record_policy("deferred");
        let reason = pause.reason.clone();
        self.paused_with(reason, Some(pause)).await
    }

    async fn paused_with(&self, reason: Option<String>, run: Option<RunPause>) -> Draft {
        match self.write_pending(reason.clone(), run).await {
            Ok(record) => {
                tracing::info!(
                    parent: &self.span,
                    agent_tools.pending_id = record.id.as_str(),
                    "the call waits for a decision"
                );
                Draft::Paused(Box::new(Pending {
                    handle: Some(record.handle()),
                    reason,
                }))
            }
            Err(error) => self.pause_failed(error),
        }
    }

    async fn write_pending(
        &self,
        reason: Option<String>,
        run: Option<RunPause>,
    ) -> Result<PendingRecord, ApprovalError> {
        let (durable, agent) = self.pausing_agent()?;
        let record = seal(
            durable,
            Unsealed {
                tool: self.exec.name().to_owned(),
                arguments: tools_schema::deep::to_canonical_string(self.exec.arguments()),
                agent,
                call_id: self.exec.call_id().to_owned(),
                reason,
                run,
            },
        )?;
        durable.store.insert(&record).await?;
        Ok(record)
    }

    /// The result of a paused call: `APPROVAL_PENDING` with its handle. No post-execute
    /// listener, `finalize_content` or observer sees it: the call has not produced its one
    /// result yet; they see that when it is resumed.
    pub(crate) fn paused(
        &self,
        pending: Box<Pending>,
        contexts: Vec<crate::base::content::AdditionalContext>,
        clock: &super::PhaseClock,
    ) -> ToolExecutionResult {
        let tool = self.exec.name();
        let message = match pending.reason() {
            Some(reason) => format!(
                "the call to `{tool}` is waiting for approval ({reason}); it runs when a person \
                 approves it"
            ),
            None => format!(
                "the call to `{tool}` is waiting for approval; it runs when a person approves it"
            ),
        };
        tracing::record_all!(
            self.span,
            agent_tools.outcome = codes::APPROVAL_PENDING,
            agent_tools.admit.duration = clock.admit,
            agent_tools.dispatch.duration = clock.dispatch,
        );
        let mut result =
            ToolExecutionResult::failure(message, Cow::Borrowed(codes::APPROVAL_PENDING), contexts);
        result.pending = Some(*pending);
        result
    }
}

/// A paused call's fields before its id, times and MAC.
struct Unsealed {
    tool: String,
    arguments: String,
    agent: Option<String>,
    call_id: String,
    reason: Option<String>,
    run: Option<RunPause>,
}

/// The record of `call`: a fresh id, the times, and the MAC over all of it.
fn seal(durable: &DurableApprovals, call: Unsealed) -> Result<PendingRecord, ApprovalError> {
    let id = fresh_id()?;
    let created_ms = now_ms();
    let expires_ms =
        created_ms.saturating_add(u64::try_from(durable.expiry.as_millis()).unwrap_or(u64::MAX));
    let (awaiting, journal) = match call.run {
        Some(run) => (Some(run.awaiting), Some(run.journal)),
        None => (None, None),
    };
    let mac = mac_hex(
        &durable.key,
        &MacFields {
            id: &id,
            tool: &call.tool,
            arguments: &call.arguments,
            agent: call.agent.as_deref(),
            call_id: &call.call_id,
            reason: call.reason.as_deref(),
            awaiting: awaiting.as_ref(),
            journal_sha256: journal.as_deref().map(sha256_hex).as_deref(),
            created_ms,
            expires_ms,
        },
    );
    Ok(PendingRecord {
        id,
        tool: call.tool,
        arguments: call.arguments,
        agent: call.agent,
        call_id: call.call_id,
        reason: call.reason,
        awaiting,
        journal,
        created_ms,
        expires_ms,
        mac,
    })
}

impl ToolRuntime {
    /// Completes a paused call with `decision` and returns the one result the call would have
    /// produced had it not paused: observers, `finalize_content` and the call's span as for any
    /// call. Any process with the same tools registered, the same store and the same key can
    /// resume it, after a restart too.
    ///
    /// What runs again and what does not: resolution and the definition's prepare hook run
    /// again (a tool removed meanwhile is `UNKNOWN_TOOL`); argument validation and the
    /// pre-execute listeners that ran before the ask do not; `decision` stands for the
    /// approval service's answer; the guards run, since policy may have changed while the call
    /// waited; then the body, as for any call.
    ///
    /// # Errors
    ///
    /// Nothing runs, and the call stays as it was, when the handle does not match the paused
    /// call (`APPROVAL_MISMATCH`), no call has its id, the call expired, was resumed or
    /// cancelled before, its agent scope has no live scope of its name here (it stays
    /// pending), `decision` is [`Approval::Deferred`], or the store fails. See
    /// [`ApprovalError`].
    pub async fn resume(
        &self,
        handle: &PendingHandle,
        decision: Approval,
    ) -> Result<ToolExecutionResult, ApprovalError> {
        self.resume_with(handle, decision, CancellationToken::new())
            .await
    }

    /// [`resume`](Self::resume) with the caller's cancellation token for the resumed call.
    pub async fn resume_with(
        &self,
        handle: &PendingHandle,
        decision: Approval,
        cancel: CancellationToken,
    ) -> Result<ToolExecutionResult, ApprovalError> {
        if matches!(decision, Approval::Deferred { .. }) {
            return Err(ApprovalError::NoDecision);
        }
        let (durable, stored) = self.checked(handle).await?;
        let agent = match &stored.record.agent {
            None => None,
            Some(name) => {
                Some(
                    self.named_agent(name)
                        .ok_or_else(|| ApprovalError::ScopeMissing {
                            agent: name.clone(),
                        })?,
                )
            }
        };
        let record = match durable.store.claim(&handle.id, now_ms()).await? {
            Transition::Moved(record) => record,
            other => return Err(refusal(&handle.id, other)),
        };
        // The claimed record is the one checked above (records do not change); read the
        // arguments back from its canonical text.
        let arguments = match tools_schema::deep::from_str(&record.arguments) {
            Ok(arguments) => arguments,
            Err(e) => {
                durable.store.release(&record.id).await?;
                return Err(crate::base::store::StoreError::Corrupt {
                    store: durable.store.name(),
                    id: record.id.clone(),
                    what: format!("its arguments are not JSON: {e}"),
                }
                .into());
            }
        };
        let mut call = ToolCall::new(record.call_id.clone(), record.tool.clone(), arguments)
            .with_cancel(cancel);
        call.agent = agent;
        let mut run = Run::enter(self, call);
        match (record.awaiting, record.journal) {
            // A paused program: its own call passed policy before it paused (the person
            // decided on the program's call that waits), and its body replays the journal.
            (Some(awaiting), Some(journal)) => {
                run.resumed = Some(Approval::Approved);
                let _ = run.exec.0.resumed_run.set(Arc::new(ResumedRun {
                    journal,
                    awaiting,
                    decision,
                }));
            }
            _ => run.resumed = Some(decision),
        }
        tracing::info!(
            parent: &run.span,
            agent_tools.pending_id = record.id.as_str(),
            "the call resumes with a decision"
        );
        let result = if run.span.is_disabled() {
            run.run().await
        } else {
            let span = run.span.clone();
            super::in_span::InSpan::new(span, run.run()).await
        };
        let outcome = result.code().unwrap_or("ok");
        if let Err(error) = durable.store.finish(&record.id, outcome).await {
            // The call stays `resuming`, which no resume takes again: it is not run twice.
            tracing::warn!(
                id = %record.id,
                error = %error,
                "a resumed call ran, and its store could not mark it done"
            );
        }
        Ok(result)
    }

    /// Cancels a paused call: it will not run, and resuming it fails with
    /// [`ApprovalError::Cancelled`]. The handle is checked as for a resume.
    ///
    /// # Errors
    ///
    /// As [`resume`](Self::resume), when the handle does not match or the call is no longer
    /// pending.
    pub async fn cancel_pending(&self, handle: &PendingHandle) -> Result<(), ApprovalError> {
        let (durable, _) = self.checked(handle).await?;
        match durable.store.cancel(&handle.id).await? {
            Transition::Moved(_) => Ok(()),
            other => Err(refusal(&handle.id, other)),
        }
    }

    /// The calls waiting for a decision, oldest first, at most `limit`: a review queue. Each
    /// handle is checked against the key, so a row written into the store by anything but a
    /// runtime with this key is left out (and logged).
    ///
    /// # Errors
    ///
    /// [`ApprovalError::NotDurable`] or the store's failure.
    pub async fn pending_calls(&self, limit: usize) -> Result<Vec<PendingHandle>, ApprovalError> {
        let durable = self.0.durable.as_ref().ok_or(ApprovalError::NotDurable)?;
        let records = durable.store.pending(now_ms(), limit).await?;
        Ok(records
            .into_iter()
            .filter_map(|record| {
                let handle = record.handle();
                match handle.check(&durable.key, &record) {
                    Ok(()) => Some(handle),
                    Err(error) => {
                        tracing::warn!(id = %record.id, %error, "a stored paused call fails its MAC; left out");
                        None
                    }
                }
            })
            .collect())
    }

    /// The paused calls that expired, and those done or cancelled, deleted from the store;
    /// returns how many.
    ///
    /// # Errors
    ///
    /// [`ApprovalError::NotDurable`] or the store's failure.
    pub async fn purge_pending(&self) -> Result<u64, ApprovalError> {
        let durable = self.0.durable.as_ref().ok_or(ApprovalError::NotDurable)?;
        Ok(durable.store.purge(now_ms()).await?)
    }
}

impl ToolRuntime {
    /// The runtime's durable approvals and the stored call `handle` names, once the handle
    /// checks against its MAC and that call: what a resume and a cancellation start from.
    async fn checked(
        &self,
        handle: &PendingHandle,
    ) -> Result<(&DurableApprovals, crate::base::store::StoredCall), ApprovalError> {
        let durable = self.0.durable.as_ref().ok_or(ApprovalError::NotDurable)?;
        let stored =
            durable
                .store
                .get(&handle.id)
                .await?
                .ok_or_else(|| ApprovalError::Unknown {
                    id: handle.id.clone(),
                })?;
        handle.check(&durable.key, &stored.record)?;
        Ok((durable, stored))
    }
}

/// Why a store did not move a call on.
fn refusal(id: &str, transition: Transition) -> ApprovalError {
    let id = id.to_owned();
    match transition {
        Transition::Unknown => ApprovalError::Unknown { id },
        Transition::Expired => ApprovalError::Expired { id },
        Transition::NotPending(CallState::Cancelled) => ApprovalError::Cancelled { id },
        Transition::NotPending(_) | Transition::Moved(_) => ApprovalError::AlreadyResumed { id },
    }
}
