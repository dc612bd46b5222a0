//! Progress over MCP, both ways.
//!
//! **Serve.** A `tools/call` whose `_meta` carries a `progressToken` runs with a progress sink
//! ([`ToolCall::with_progress`]); each report the pipeline accepts is sent to the client as
//! `notifications/progress` (`progressToken`, `progress`, `total`, `message`) by
//! [`execute_forwarding`], in the order it was made. The call's result is sent only after every
//! report made before it was handed to the transport, and nothing is sent after it (the pipeline
//! refuses a report once the call has ended). On stdio and in an HTTP session the notification
//! goes on the connection (rmcp routes it to the request's stream by its token); without a session
//! it goes on the request's own response stream. A client that sends no token gets no
//! notification. If the client reads more slowly than the tool reports, at most [`QUEUE`]
//! reports wait; past that the newest replaces the last waiting one (the reports still increase).
//! A client that has gone gets no more notifications; the call goes on as cancellation decides.
//!
//! **Import.** rmcp puts a progress token of its own choosing on every request, and hands each
//! incoming notification to its handler on a task of its own, so two reports can reach the
//! handler out of order, and the last report can reach it after the call's result. To keep the
//! server's order, and every report before the result, the connection's transport is wrapped
//! ([`ProgressTap`]):
//!
//! - when a `tools/call` request goes out, its id and progress token are recorded and a channel
//!   is opened for the token ([`ProgressRoutes`]), unless its call has opened it already;
//! - when a `notifications/progress` comes in, it is put on its token's channel before the
//!   transport hands it on, so it is queued before any later message (the call's result among
//!   them) is read; a token that no call in flight has is ignored;
//! - the call takes its channel by the token of its request ([`ProgressRoutes::claim`]; rmcp
//!   gives the caller the token before the transport sends the request, so the call may open
//!   the channel itself), drains it while it waits, and drains what is left once the result is
//!   in, turning each report into a progress report of the local call.
//!
//! A call's channel holds at most [`QUEUE`] reports the call has not read yet; a report beyond
//! that is dropped with a warning. The routes of a call are removed when its answer arrives, when
//! it is cancelled, or when the call lets go of its channel.
//!
//! A task-augmented `tools/call` (the 2025-11-25 draft's tasks, [`tasks_draft`](crate::tasks_draft))
//! goes on after its answer: when the answer is a draft task, the call's channel stays open (the
//! server may go on reporting for the request's token, as the TypeScript SDK does) and the
//! server's `notifications/tasks/status` for that task come on it too ([`Update::Status`]), in
//! the order they came, until the call lets go of its channel. A status for a task no call has
//! (one the server sent before its answer made the task known) is ignored: the answer carries
//! that state itself.

use crate::lock;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, GetMeta, JsonRpcMessage,
    ProgressNotificationParam, ProgressToken, RequestId, ServerJsonRpcMessage, ServerNotification,
};

use crate::tasks_draft::TaskState;
use rmcp::service::{Peer, RoleClient, RoleServer};
use rmcp::transport::Transport;
use tokio::sync::mpsc;
use tools_runtime::progress::Progress;
use tools_runtime::{ToolCall, ToolExecutionResult, ToolRuntime};

/// The reports of one served call waiting to be sent.
struct Outbox {
    waiting: Mutex<Waiting>,
    ready: tokio::sync::Notify,
}

struct Waiting {
    reports: std::collections::VecDeque<Progress>,
    /// False once the call has ended: what is waiting is the last.
    open: bool,
}

impl Outbox {
    fn push(&self, progress: &Progress) {
        {
            let mut waiting = lock(&self.waiting);
            if !waiting.open {
                return;
            }
            if waiting.reports.len() >= QUEUE {
                // The newest replaces the last waiting one: the reports still increase.
                waiting.reports.pop_back();
            }
            waiting.reports.push_back(progress.clone());
        }
        self.ready.notify_one();
    }

    fn close(&self) {
        lock(&self.waiting).open = false;
        self.ready.notify_one();
    }

    /// The next report to send; `None` once the call has ended and every report was taken.
    async fn next(&self) -> Option<Progress> {
        loop {
            {
                let mut waiting = lock(&self.waiting);
                if let Some(report) = waiting.reports.pop_front() {
                    return Some(report);
                }
                if !waiting.open {
                    return None;
                }
            }
            // A `notify_one` between the check and here leaves a permit: no wake-up is lost.
            self.ready.notified().await;
        }
    }
}

/// Runs `call` through `runtime`, sending each of its progress reports to `peer` as
/// `notifications/progress` for `token` while it runs (see the module doc). Returns once the
/// call has ended and every report it made was handed to the transport.
pub(crate) async fn execute_forwarding(
    runtime: &ToolRuntime,
    call: ToolCall,
    token: ProgressToken,
    peer: Peer<RoleServer>,
) -> ToolExecutionResult {
    let outbox = Arc::new(Outbox {
        waiting: Mutex::new(Waiting {
            reports: std::collections::VecDeque::new(),
            open: true,
        }),
        ready: tokio::sync::Notify::new(),
    });
    let sink = outbox.clone();
    let call = call.with_progress(move |progress| sink.push(progress));
    let run = async {
        let result = runtime.execute(call).await;
        outbox.close();
        result
    };
    let forward = async {
        let mut connected = true;
        while let Some(report) = outbox.next().await {
            if !connected {
                continue;
            }
            let mut params = ProgressNotificationParam::new(token.clone(), report.done());
            if let Some(total) = report.total() {
                params = params.with_total(total);
            }
            if let Some(message) = report.message() {
                params = params.with_message(message);
            }
            if let Err(error) = peer.notify_progress(params).await {
                tracing::debug!(%error, "the client cannot be sent progress any more");
                connected = false;
            }
        }
    };
    let (result, ()) = tokio::join!(run, forward);
    result
}

/// The most reports queued for one call and not yet sent on (serve) or read (import).
pub(crate) const QUEUE: usize = 256;

/// The most channels opened for requests whose call has not taken them yet (a call dropped
/// between sending its request and taking its channel leaves one; the oldest goes first).
const MAX_UNCLAIMED: usize = 1024;

/// The progress routes of one connection. Shared by its transport and its calls.
#[derive(Default)]
pub(crate) struct ProgressRoutes {
    routes: Mutex<Routes>,
}

/// What reaches an imported call from its server while it runs.
#[derive(Debug, Clone)]
pub(crate) enum Update {
    /// A `notifications/progress` for the call's token.
    Progress(ProgressNotificationParam),
    /// A draft `notifications/tasks/status` for the task the call's request made.
    Status(TaskState),
}

#[derive(Default)]
struct Routes {
    /// Where each token's reports go, while its request (or the draft task it made) is in
    /// flight.
    senders: HashMap<ProgressToken, mpsc::Sender<Update>>,
    /// The token of each `tools/call` in flight, by request id.
    tokens: HashMap<RequestId, ProgressToken>,
    /// The token of the request that made each draft task, by task id.
    tasks: HashMap<String, ProgressToken>,
    /// The channels no call has taken yet, with the order they were opened in.
    unclaimed: HashMap<ProgressToken, (u64, mpsc::Receiver<Update>)>,
    opened: u64,
}

/// Whether `request` is a `tools/call` (rmcp's own, or a task-augmented one sent as a custom
/// request).
fn is_call(request: &ClientRequest) -> bool {
    match request {
        ClientRequest::CallToolRequest(_) => true,
        ClientRequest::CustomRequest(custom) => custom.method == "tools/call",
        _ => false,
    }
}

impl ProgressRoutes {
    fn routes(&self) -> std::sync::MutexGuard<'_, Routes> {
        lock(&self.routes)
    }

    /// The channel of the request whose progress token is `token`: the one opened when the
    /// request went out, or a new one the request will use when it goes (rmcp hands a request to
    /// the transport after it gives the caller the token, so either can come first). The
    /// returned guard removes the routes when dropped.
    pub(crate) fn claim(self: &Arc<Self>, token: &ProgressToken) -> Claimed {
        let mut routes = self.routes();
        let receiver = match routes.unclaimed.remove(token) {
            Some((_, receiver)) => receiver,
            None => {
                let (sender, receiver) = mpsc::channel(QUEUE);
                routes.senders.insert(token.clone(), sender);
                receiver
            }
        };
        Claimed {
            routes: self.clone(),
            token: token.clone(),
            receiver,
        }
    }

    /// Looks at a message going to the server.
    fn outgoing(&self, message: &ClientJsonRpcMessage) {
        match message {
            JsonRpcMessage::Request(request) => {
                if !is_call(&request.request) {
                    return;
                }
                let Some(token) = request.request.get_meta().get_progress_token() else {
                    return;
                };
                let mut routes = self.routes();
                routes.tokens.insert(request.id.clone(), token.clone());
                if routes.senders.contains_key(&token) {
                    // Its call has claimed the channel already.
                    return;
                }
                let (sender, receiver) = mpsc::channel(QUEUE);
                routes.opened += 1;
                let opened = routes.opened;
                if routes.unclaimed.len() >= MAX_UNCLAIMED
                    && let Some(oldest) = routes
                        .unclaimed
                        .iter()
                        .min_by_key(|(_, (n, _))| *n)
                        .map(|(token, _)| token.clone())
                {
                    routes.unclaimed.remove(&oldest);
                    routes.senders.remove(&oldest);
                    routes.tokens.retain(|_, token| *token != oldest);
                    routes.tasks.retain(|_, token| *token != oldest);
                }
                routes.senders.insert(token.clone(), sender);
                routes.unclaimed.insert(token, (opened, receiver));
            }
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    let mut routes = self.routes();
                    if let Some(token) = routes.tokens.remove(id) {
                        routes.senders.remove(&token);
                        routes.unclaimed.remove(&token);
                    }
                }
            }
            JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {}
        }
    }

    /// Looks at a message from the server before it is handed on.
    fn incoming(&self, message: &ServerJsonRpcMessage) {
        match message {
            JsonRpcMessage::Notification(notification) => match &notification.notification {
                ServerNotification::ProgressNotification(progress) => {
                    let params = &progress.params;
                    self.deliver(&params.progress_token, Update::Progress(params.clone()));
                }
                ServerNotification::CustomNotification(custom) => {
                    let Some(state) = TaskState::notified(custom) else {
                        return;
                    };
                    let token = self.routes().tasks.get(&state.id).cloned();
                    match token {
                        Some(token) => self.deliver(&token, Update::Status(state)),
                        None => tracing::debug!(
                            task = %tools_schema::excerpt::cut(&state.id),
                            "notifications/tasks/status for no call in flight; ignored"
                        ),
                    }
                }
                _ => {}
            },
            JsonRpcMessage::Response(response) => {
                match TaskState::created_draft_id(&response.result) {
                    Some(task) => self.made_task(&response.id, task),
                    None => self.answered(&response.id),
                }
            }
            JsonRpcMessage::Error(error) => {
                if let Some(id) = &error.id {
                    self.answered(id);
                }
            }
            JsonRpcMessage::Request(_) => {}
        }
    }

    /// Puts `update` on the channel of `token`, if a call in flight has it.
    fn deliver(&self, token: &ProgressToken, update: Update) {
        let sender = self.routes().senders.get(token).cloned();
        let Some(sender) = sender else {
            tracing::debug!(
                ?token,
                "notifications/progress for no call in flight; ignored"
            );
            return;
        };
        match sender.try_send(update) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => tracing::warn!(
                ?token,
                queued = QUEUE,
                "an MCP call's progress reports are not read as fast as the server sends them; \
                 one is dropped"
            ),
            Err(mpsc::error::TrySendError::Closed(_)) => {
                self.routes().senders.remove(token);
            }
        }
    }

    /// The request `id` has its answer: no report for it comes after this one. Its channel
    /// closes once drained; one not taken yet stays for its call.
    fn answered(&self, id: &RequestId) {
        let mut routes = self.routes();
        if let Some(token) = routes.tokens.remove(id) {
            routes.senders.remove(&token);
        }
    }

    /// The `tools/call` request `id` was answered with the draft task `task`: its channel stays
    /// open, and the task's status notifications come on it too.
    fn made_task(&self, id: &RequestId, task: &str) {
        let mut routes = self.routes();
        if let Some(token) = routes.tokens.remove(id) {
            routes.tasks.insert(task.to_owned(), token);
        }
    }
}

/// A call's channel of progress reports (and, for a draft task, status notifications);
/// dropping it removes the call's routes.
pub(crate) struct Claimed {
    routes: Arc<ProgressRoutes>,
    token: ProgressToken,
    receiver: mpsc::Receiver<Update>,
}

impl Claimed {
    /// The next update, waiting for it; `None` once the request is answered (with no draft
    /// task) and every update was read.
    pub(crate) async fn next(&mut self) -> Option<Update> {
        self.receiver.recv().await
    }

    /// The next update already queued, without waiting.
    pub(crate) fn queued(&mut self) -> Option<Update> {
        self.receiver.try_recv().ok()
    }
}

impl Drop for Claimed {
    fn drop(&mut self) {
        let mut routes = self.routes.routes();
        routes.senders.remove(&self.token);
        routes.tokens.retain(|_, token| *token != self.token);
        routes.tasks.retain(|_, token| *token != self.token);
    }
}

/// A client transport that routes `notifications/progress` to the calls in flight (see the
/// module doc). Everything else passes through untouched.
pub(crate) struct ProgressTap<T> {
    inner: T,
    routes: Arc<ProgressRoutes>,
}

impl<T> ProgressTap<T> {
    /// Wraps `inner`, routing through `routes`.
    pub(crate) fn new(inner: T, routes: Arc<ProgressRoutes>) -> ProgressTap<T> {
        ProgressTap { inner, routes }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for ProgressTap<T> {
    type Error = T::Error;

    fn name() -> std::borrow::Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        // Recorded before the request is written, so no report for it can come first.
        self.routes.outgoing(&item);
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        let message = self.inner.receive().await?;
        self.routes.incoming(&message);
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use rmcp::model::{
        CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
        CancelledNotificationParam, NumberOrString, ProgressNotification, RequestMetaObject,
        ServerResult,
    };

    fn token(n: i64) -> ProgressToken {
        ProgressToken(NumberOrString::Number(n))
    }

    fn call(id: i64, progress: i64) -> ClientJsonRpcMessage {
        let mut request = CallToolRequest::new(CallToolRequestParams::new("t"));
        request
            .extensions
            .insert(RequestMetaObject::with_progress_token(token(progress)));
        JsonRpcMessage::request(
            ClientRequest::CallToolRequest(request),
            RequestId::Number(id),
        )
    }

    fn progress(token_: i64, done: f64) -> ServerJsonRpcMessage {
        JsonRpcMessage::notification(ServerNotification::ProgressNotification(
            ProgressNotification::new(ProgressNotificationParam::new(token(token_), done)),
        ))
    }

    fn answer(id: i64) -> ServerJsonRpcMessage {
        JsonRpcMessage::response(
            ServerResult::CallToolResult(CallToolResult::success(vec![])),
            RequestId::Number(id),
        )
    }

    /// The progress of a report; a status is a failure.
    fn done(update: Update) -> f64 {
        match update {
            Update::Progress(p) => p.progress,
            Update::Status(s) => panic!("a status where a report was expected: {s:?}"),
        }
    }

    /// A message as rmcp reads it off the wire.
    fn from_wire(message: serde_json::Value) -> ServerJsonRpcMessage {
        serde_json::from_value(message).unwrap()
    }

    fn status(task: &str, message: &str) -> ServerJsonRpcMessage {
        from_wire(
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/tasks/status",
            "params": {"taskId": task, "status": "working", "statusMessage": message,
                       "ttl": null, "createdAt": "", "lastUpdatedAt": ""}}),
        )
    }

    #[test]
    fn a_draft_task_keeps_its_calls_channel_and_gets_its_status_notifications() {
        let routes = Arc::new(ProgressRoutes::default());
        let mut claimed = routes.claim(&token(7));
        let custom = rmcp::model::CustomRequest::new("tools/call", None);
        let mut request =
            JsonRpcMessage::request(ClientRequest::CustomRequest(custom), RequestId::Number(1));
        if let JsonRpcMessage::Request(r) = &mut request {
            r.request.get_meta_mut().set_progress_token(token(7));
        }
        routes.outgoing(&request);
        routes.incoming(&status("t1", "early")); // before the answer: nobody's yet
        routes.incoming(&from_wire(serde_json::json!({"jsonrpc": "2.0", "id": 1,
            "result": {"task": {"taskId": "t1", "status": "working", "ttl": null,
                                "createdAt": "", "lastUpdatedAt": ""}}})));
        routes.incoming(&progress(7, 1.0));
        routes.incoming(&status("t1", "later"));
        routes.incoming(&status("t2", "another's"));
        assert_eq!(claimed.queued().map(done), Some(1.0));
        match claimed.queued() {
            Some(Update::Status(state)) => assert_eq!(state.message.as_deref(), Some("later")),
            other => panic!("no status: {other:?}"),
        }
        assert!(claimed.queued().is_none());
        drop(claimed);
        let left = routes.routes();
        assert!(left.senders.is_empty() && left.tokens.is_empty() && left.tasks.is_empty());
    }

    #[test]
    fn reports_before_the_claim_and_before_the_answer_all_reach_the_call_in_order() {
        let routes = Arc::new(ProgressRoutes::default());
        routes.outgoing(&call(1, 7));
        routes.incoming(&progress(7, 1.0));
        routes.incoming(&progress(8, 5.0)); // nobody's
        let mut claimed = routes.claim(&token(7));
        routes.incoming(&progress(7, 2.0));
        routes.incoming(&answer(1));
        routes.incoming(&progress(7, 3.0)); // after the answer: no call has the token now
        let seen: Vec<f64> = std::iter::from_fn(|| claimed.queued()).map(done).collect();
        assert_eq!(seen, [1.0, 2.0]);
        drop(claimed);
        let left = routes.routes();
        assert!(left.senders.is_empty() && left.tokens.is_empty() && left.unclaimed.is_empty());
    }

    #[test]
    fn a_cancelled_request_loses_its_routes() {
        let routes = Arc::new(ProgressRoutes::default());
        routes.outgoing(&call(1, 7));
        let cancelled = ClientNotification::CancelledNotification(CancelledNotification::new(
            CancelledNotificationParam::new(Some(RequestId::Number(1)), None),
        ));
        routes.outgoing(&JsonRpcMessage::notification(cancelled));
        routes.incoming(&progress(7, 1.0));
        let left = routes.routes();
        assert!(left.senders.is_empty() && left.tokens.is_empty() && left.unclaimed.is_empty());
    }

    #[test]
    fn a_call_that_claims_before_its_request_goes_out_gets_its_reports() {
        let routes = Arc::new(ProgressRoutes::default());
        let mut claimed = routes.claim(&token(3));
        routes.outgoing(&call(1, 3));
        routes.incoming(&progress(3, 1.0));
        routes.incoming(&answer(1));
        assert_eq!(claimed.queued().map(done), Some(1.0));
        assert!(claimed.queued().is_none());
        drop(claimed);
        let left = routes.routes();
        assert!(left.senders.is_empty() && left.tokens.is_empty() && left.unclaimed.is_empty());
    }

    #[test]
    fn unclaimed_channels_are_bounded() {
        let routes = Arc::new(ProgressRoutes::default());
        for n in 0..(MAX_UNCLAIMED as i64 + 10) {
            routes.outgoing(&call(n, n));
        }
        let left = routes.routes();
        assert_eq!(left.unclaimed.len(), MAX_UNCLAIMED);
        assert_eq!(left.senders.len(), MAX_UNCLAIMED);
        assert_eq!(left.tokens.len(), MAX_UNCLAIMED);
        assert!(
            !left.unclaimed.contains_key(&token(0)),
            "the oldest went first"
        );
    }
}
