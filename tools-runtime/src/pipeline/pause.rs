//! Pausing and resuming: a call whose approval service answers
//! [`Approval::Deferred`] is written to the runtime's store and returns at once
//! (`APPROVAL_PENDING`, with its handle); [`ToolRuntime::resume`] completes it later, in this
//! process or any other with the same tools, store and key. See [`crate::approvals`] for the
//! rules.

use std::borrow::Cow;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{Draft, Run};
use serde_json::Value;

use crate::call::decision::Approval;
use crate::call::pending::{Pending, PendingHandle};
use crate::call::result::ToolExecutionResult;
use crate::call::result::codes;
use crate::call::tool_call::CallOrigin as Origin;
use crate::call::tool_call::{CallOrigin, ToolCall};
use crate::durable::approvals::{
    ApprovalError, CallStatus, DurableApprovals, MAX_HANDLE_BYTES, MacFields, PausedCall,
    ResumedRun, RunPause, fresh_id, mac_hex, principal_text, sha256_hex,
};
use crate::durable::store::{
    CallFilter, CallQuery, CallState, Claim, PendingRecord, Settle, Settled, StoreError,
    StoredCall, Transition, now_ms,
};
use crate::errors::ExecutionError;
use crate::runtime::handle::ToolRuntime;

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
            Ok(handle) => {
                tracing::info!(
                    parent: &self.span,
                    agent_tools.pending_id = handle.id.as_str(),
                    "the call waits for a decision"
                );
                Draft::Paused(Box::new(Pending {
                    handle: Some(handle),
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
    ) -> Result<PendingHandle, ApprovalError> {
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
                principal: self.exec.principal().map(principal_text),
            },
        )?;
        let handle = record.handle(&durable.key);
        // A handle whose text could not be read back would leave a call nobody can resume.
        let len = handle.text_len();
        if len > MAX_HANDLE_BYTES {
            return Err(ApprovalError::HandleInvalid {
                why: format!(
                    "the call's handle would be {len} bytes long, over the {MAX_HANDLE_BYTES} a \
                     handle may have: its arguments are too large to pause"
                ),
            });
        }
        durable.store.insert(&record).await?;
        Ok(handle)
    }

    /// The result of a paused call: `APPROVAL_PENDING` with its handle. No post-execute
    /// listener, `finalize_content` or observer sees it: the call has not produced its one
    /// result yet; they see that when it is resumed.
    pub(crate) fn paused(
        &self,
        pending: Box<Pending>,
        contexts: Vec<crate::call::content::AdditionalContext>,
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
    principal: Option<String>,
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
            principal: call.principal.as_deref(),
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
        principal: call.principal,
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
    /// The call is claimed in the store (`pending` -> `resuming`, with this replica's name and
    /// the time) before anything runs, and marked `done` after: that write is retried
    /// ([`DurableApprovals::record_retries`]) when the store fails, and when it still fails the
    /// resume answers [`ApprovalError::NotRecorded`] with the result inside.
    ///
    /// # Errors
    ///
    /// Nothing runs, and the call stays as it was, when the handle does not match the paused
    /// call (`APPROVAL_MISMATCH`), no call has its id, the call expired, was resumed or
    /// cancelled before (`APPROVAL_ALREADY_RESUMED` says the state it found), its agent scope
    /// has no live scope of its name here (it stays pending), `decision` is
    /// [`Approval::Deferred`], or the store fails. After the body ran, only
    /// [`ApprovalError::NotRecorded`]. See [`ApprovalError`].
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
        self.resumed(handle, decision, None, cancel).await
    }

    /// Approves a paused call with arguments a reviewer edited, and runs it with those: a
    /// [`resume`](Self::resume) with [`Approval::Approved`] whose call is made with
    /// `arguments` instead of the reviewed ones.
    ///
    /// The edited arguments are validated against the tool's input schema before anything is
    /// claimed (a raw definition, such as an imported MCP tool, validates its own in its
    /// body); the store keeps both the reviewed arguments and the edited ones (with the
    /// claim); the call's listeners see the edited ones as
    /// [`ToolExecution::arguments`](crate::ToolExecution::arguments) and the reviewed
    /// ones as
    /// [`ToolExecution::reviewed_arguments`](crate::ToolExecution::reviewed_arguments);
    /// the call's span has an event saying the arguments were edited.
    ///
    /// # Errors
    ///
    /// As [`resume`](Self::resume), and, with nothing claimed and the call still pending:
    /// [`ApprovalError::EditRefused`] for a Code Mode program's call (its replay would make
    /// the reviewed call), [`ApprovalError::EditInvalid`] for arguments the schema refuses.
    pub async fn resume_edited(
        &self,
        handle: &PendingHandle,
        arguments: Value,
        cancel: CancellationToken,
    ) -> Result<ToolExecutionResult, ApprovalError> {
        self.resumed(handle, Approval::Approved, Some(arguments), cancel)
            .await
    }

    async fn resumed(
        &self,
        handle: &PendingHandle,
        decision: Approval,
        edited: Option<Value>,
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
        let edited_text = match &edited {
            None => None,
            Some(arguments) => Some(self.edit_checked(&stored, agent, arguments)?),
        };
        let claim = Claim {
            at_ms: now_ms(),
            by: durable.replica.to_string(),
            edited_arguments: edited_text,
        };
        let record = match durable.store.claim(&handle.id, &claim).await? {
            Transition::Moved(record) => record,
            other => return Err(self.refusal(durable, &handle.id, other).await),
        };
        // The claimed record is the one checked above (records do not change); read the
        // arguments back from its canonical text.
        let reviewed = match tools_schema::deep::from_str(&record.arguments) {
            Ok(arguments) => arguments,
            Err(e) => {
                durable.store.release(&record.id).await?;
                return Err(StoreError::Corrupt {
                    store: durable.store.name(),
                    id: record.id.clone(),
                    what: format!("its arguments are not JSON: {e}"),
                }
                .into());
            }
        };
        let (arguments, reviewed) = match edited {
            Some(edited) => (edited, Some(reviewed)),
            None => (reviewed, None),
        };
        let mut call = ToolCall::new(record.call_id.clone(), record.tool.clone(), arguments)
            .with_cancel(cancel);
        call.agent = agent;
        // The resumed call is made for whom the paused one was (the handle checked equal).
        call.principal = handle.principal.clone().map(Arc::new);
        let mut run = Run::enter(self, call);
        let edited = reviewed.is_some();
        if let Some(reviewed) = reviewed {
            let _ = run.exec.0.reviewed.set(Arc::new(reviewed));
        }
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
        if edited {
            tracing::info!(
                parent: &run.span,
                agent_tools.pending_id = record.id.as_str(),
                agent_tools.approval.edited = true,
                "the call resumes with a decision, with arguments the reviewer edited"
            );
        } else {
            tracing::info!(
                parent: &run.span,
                agent_tools.pending_id = record.id.as_str(),
                "the call resumes with a decision"
            );
        }
        let result = if run.span.is_disabled() {
            run.run().await
        } else {
            let span = run.span.clone();
            super::in_span::InSpan::new(span, run.run()).await
        };
        let outcome = result.code().unwrap_or("ok").to_owned();
        match record_end(durable, &record.id, &outcome).await {
            Ok(()) => Ok(result),
            Err((attempts, source)) => {
                tracing::error!(
                    id = %record.id,
                    error = %source,
                    attempts,
                    "a resumed call ran, and its store could not record its end: it stays \
                     `resuming` (in doubt) until settled by hand"
                );
                Err(ApprovalError::NotRecorded {
                    id: record.id.clone(),
                    result: Box::new(result),
                    attempts,
                    source,
                })
            }
        }
    }

    /// The canonical text of a reviewer's edited `arguments` for `stored`, once they may be
    /// used: not for a program's call, and valid against the tool's input schema as the call's
    /// scope resolves it now.
    fn edit_checked(
        &self,
        stored: &StoredCall,
        agent: Option<crate::call::tool_call::ScopeKey>,
        arguments: &Value,
    ) -> Result<String, ApprovalError> {
        let record = &stored.record;
        if let Some(awaiting) = &record.awaiting {
            return Err(ApprovalError::EditRefused {
                id: record.id.clone(),
                tool: awaiting.tool.clone(),
            });
        }
        let snapshot = self.snapshot(&record.tool, agent, Origin::Direct);
        if let Some(def) = &snapshot.def
            && let Some(Err(violations)) = def.check_input(arguments)
        {
            return Err(ApprovalError::EditInvalid {
                tool: record.tool.clone(),
                violations,
            });
        }
        Ok(tools_schema::deep::to_canonical_string(arguments))
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
        match durable.store.cancel(&handle.id, now_ms()).await? {
            Transition::Moved(_) => Ok(()),
            other => Err(self.refusal(durable, &handle.id, other).await),
        }
    }

    /// Reads a handle's text ([`PendingHandle`]'s [`Display`](std::fmt::Display) form) with
    /// this runtime's key: the tag over the raw bytes is checked before anything is parsed
    /// ([`PendingHandle::parse`]).
    ///
    /// # Errors
    ///
    /// [`ApprovalError::NotDurable`] without durable approvals;
    /// [`ApprovalError::HandleInvalid`] or [`ApprovalError::Mismatch`] for a text this
    /// runtime's key did not make.
    pub fn parse_handle(&self, text: &str) -> Result<PendingHandle, ApprovalError> {
        let durable = self.0.durable.as_ref().ok_or(ApprovalError::NotDurable)?;
        PendingHandle::parse(text, &durable.key)
    }

    /// The calls waiting for a decision, oldest first, at most `limit`: a review queue. Each
    /// handle is checked against the key, so a row written into the store by anything but a
    /// runtime with this key is left out (and logged). [`paused_calls`](Self::paused_calls)
    /// lists the calls in every other state too.
    ///
    /// # Errors
    ///
    /// [`ApprovalError::NotDurable`] or the store's failure.
    pub async fn pending_calls(&self, limit: usize) -> Result<Vec<PendingHandle>, ApprovalError> {
        let calls = self
            .paused_calls(CallQuery::new(CallFilter::Pending, limit))
            .await?;
        Ok(calls.into_iter().map(|call| call.handle).collect())
    }

    /// The paused calls `query` asks for, in any state (pending, expired, resuming since when
    /// and by whom, done, failed, cancelled), oldest first: what an operator reads to find the
    /// calls in doubt ([`CallFilter::Resuming`]) and settle them
    /// ([`settle_pending`](Self::settle_pending)). A row that fails its MAC is left out (and
    /// logged), as in [`pending_calls`](Self::pending_calls).
    ///
    /// # Errors
    ///
    /// [`ApprovalError::NotDurable`] or the store's failure.
    pub async fn paused_calls(&self, query: CallQuery) -> Result<Vec<PausedCall>, ApprovalError> {
        let durable = self.0.durable.as_ref().ok_or(ApprovalError::NotDurable)?;
        let calls = durable.store.calls(&query).await?;
        Ok(calls
            .into_iter()
            .filter_map(|call| verified(durable, call, query.now_ms))
            .collect())
    }

    /// One paused call by its id, in whatever state; `None` when the store has no call of
    /// that id, or its row fails the MAC.
    ///
    /// # Errors
    ///
    /// [`ApprovalError::NotDurable`] or the store's failure.
    pub async fn paused_call(&self, id: &str) -> Result<Option<PausedCall>, ApprovalError> {
        let durable = self.0.durable.as_ref().ok_or(ApprovalError::NotDurable)?;
        Ok(durable
            .store
            .get(id)
            .await?
            .and_then(|call| verified(durable, call, now_ms())))
    }

    /// Settles by hand a call in doubt: one `resuming` whose resume never recorded its end
    /// (its process was killed, or the store failed after the body ran). `Settle::Done` when
    /// you checked that its effect happened, `Settle::Failed` when it did not; `note` says
    /// what you checked (it is kept with the call). The call is never run: this only writes
    /// its end, and a resume that does record its end later leaves the settlement as it is.
    ///
    /// Only settle a call whose claiming process is gone ([`CallStatus::Resuming`] says who
    /// claimed it and when): one still running would finish without recording its end.
    ///
    /// # Errors
    ///
    /// [`ApprovalError::NotInDoubt`] for an empty note or a call that is not `resuming`,
    /// [`ApprovalError::Unknown`], [`ApprovalError::NotDurable`], or the store's failure.
    pub async fn settle_pending(
        &self,
        id: &str,
        settle: Settle,
        note: &str,
    ) -> Result<PausedCall, ApprovalError> {
        let durable = self.0.durable.as_ref().ok_or(ApprovalError::NotDurable)?;
        let note = note.trim();
        if note.is_empty() {
            return Err(ApprovalError::NotInDoubt {
                id: id.to_owned(),
                why: "a note is required: say what was checked".to_owned(),
            });
        }
        match durable.store.settle(id, settle, note, now_ms()).await? {
            Settled::Moved => {}
            Settled::Unknown => return Err(ApprovalError::Unknown { id: id.to_owned() }),
            Settled::NotResuming(state) => {
                let status = self.status_of(durable, id, state).await;
                return Err(ApprovalError::NotInDoubt {
                    id: id.to_owned(),
                    why: format!("it is {status}, not resuming"),
                });
            }
        }
        tracing::info!(%id, settled = settle.state().as_str(), %note, "a call in doubt was settled by hand");
        self.paused_call(id)
            .await?
            .ok_or_else(|| ApprovalError::Unknown { id: id.to_owned() })
    }

    /// Deletes from the store the paused calls that expired (they never ran) and those done,
    /// failed or cancelled; returns how many. A call `resuming` (running, or in doubt) is never
    /// deleted: settle it first.
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
    ) -> Result<(&DurableApprovals, StoredCall), ApprovalError> {
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

    /// Why a store did not move a call on, with the state the call is in (read again, for
    /// what it says beyond its state: since when and by whom, its outcome).
    async fn refusal(
        &self,
        durable: &DurableApprovals,
        id: &str,
        transition: Transition,
    ) -> ApprovalError {
        let id = id.to_owned();
        match transition {
            Transition::Unknown => ApprovalError::Unknown { id },
            Transition::Expired => ApprovalError::Expired { id },
            Transition::NotPending(CallState::Cancelled) => ApprovalError::Cancelled { id },
            Transition::NotPending(state) => {
                let status = self.status_of(durable, &id, state).await;
                ApprovalError::AlreadyResumed { id, status }
            }
            Transition::Moved(_) => ApprovalError::AlreadyResumed {
                id,
                status: CallStatus::Resuming {
                    since_ms: None,
                    by: None,
                },
            },
        }
    }

    /// The status of call `id`, read from the store; from `state` alone when it cannot be
    /// read.
    async fn status_of(
        &self,
        durable: &DurableApprovals,
        id: &str,
        state: CallState,
    ) -> CallStatus {
        let now = now_ms();
        match durable.store.get(id).await {
            Ok(Some(call)) => CallStatus::of(&call, now),
            _ => match state {
                CallState::Pending => CallStatus::Pending,
                CallState::Resuming => CallStatus::Resuming {
                    since_ms: None,
                    by: None,
                },
                CallState::Done => CallStatus::Done {
                    outcome: None,
                    note: None,
                },
                CallState::Failed => CallStatus::Failed { note: None },
                CallState::Cancelled => CallStatus::Cancelled,
            },
        }
    }
}

/// `call` as an operator sees it, when its row passes the MAC check (logged and left out
/// otherwise).
fn verified(durable: &DurableApprovals, call: StoredCall, now_ms: u64) -> Option<PausedCall> {
    let handle = call.record.handle(&durable.key);
    match handle.check(&durable.key, &call.record) {
        Ok(()) => Some(PausedCall::of(call, handle, now_ms)),
        Err(error) => {
            tracing::warn!(id = %call.record.id, %error, "a stored paused call fails its MAC; left out");
            None
        }
    }
}

/// Writes a resumed call's end (`done` with `outcome`), retried as
/// [`DurableApprovals::record_retries`] says; the attempts made and the last failure when none
/// succeeded.
async fn record_end(
    durable: &DurableApprovals,
    id: &str,
    outcome: &str,
) -> Result<(), (u32, StoreError)> {
    let mut wait = durable.record_backoff;
    let mut attempt = 1;
    loop {
        match durable.store.finish(id, outcome, now_ms()).await {
            Ok(()) => return Ok(()),
            Err(error) if attempt >= durable.record_attempts => return Err((attempt, error)),
            Err(error) => {
                tracing::warn!(
                    %id,
                    %error,
                    attempt,
                    "a resumed call ran, and its store could not record its end; trying again"
                );
                tokio::time::sleep(wait).await;
                wait = wait.saturating_mul(2);
                attempt += 1;
            }
        }
    }
}
