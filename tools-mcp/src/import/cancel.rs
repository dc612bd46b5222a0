//! Telling the server that a call left before its end ([`Abandoned`]): a request gets
//! `notifications/cancelled`, a task (or an answer that turns out to be one) `tasks/cancel`.

use std::time::Duration;

use rmcp::model::{CancelledNotificationParam, ClientRequest, RequestId, ServerResult};
use rmcp::service::{Peer, RoleClient, ServiceError};

use crate::tasks_draft::TaskState;

/// How long a request the call left is still awaited, before `notifications/cancelled`, when the
/// server declares the tasks extension: its answer may be a task made before it heard, which
/// then gets `tasks/cancel` (once told, a 2026-07-28 HTTP server's answer is lost with the closed
/// stream, and the task would run on).
const TASK_GRACE: Duration = Duration::from_secs(1);

/// The answer to a request in flight.
type Answer = std::pin::Pin<Box<dyn Future<Output = Result<ServerResult, ServiceError>> + Send>>;

/// Tells the server a request or a task was abandoned when dropped armed: the call was
/// cancelled, ran past its limits, or its future was dropped. A request gets
/// `notifications/cancelled` (from a server that declares tasks, only when no answer came within
/// [`TASK_GRACE`]; an answer that is a task gets `tasks/cancel` instead); a task gets
/// `tasks/cancel`.
pub(super) struct Abandoned {
    peer: Peer<RoleClient>,
    left: Option<Left>,
}

/// What a call leaves behind when it goes early.
enum Left {
    Request {
        id: RequestId,
        answer: Answer,
        /// How long to wait for the answer before telling the server (a server with tasks).
        grace: Option<Duration>,
    },
    Task(String),
}

impl Abandoned {
    /// A request in flight: armed until [`answer`](Self::answer) gives its answer. A
    /// task-augmented request (the draft's) waits for its answer as a request to a server that
    /// declares the tasks extension does.
    pub(super) fn request(
        peer: Peer<RoleClient>,
        handle: rmcp::service::RequestHandle<RoleClient>,
        task_augmented: bool,
    ) -> Abandoned {
        let id = handle.id.clone();
        let grace = (task_augmented
            || peer
                .peer_info()
                .is_some_and(|info| info.capabilities.supports_tasks()))
        .then_some(TASK_GRACE);
        Abandoned {
            peer,
            left: Some(Left::Request {
                id,
                answer: Box::pin(handle.await_response()),
                grace,
            }),
        }
    }

    /// The request's answer (never, for a task); once it came, nothing is left to tell.
    pub(super) async fn answer(&mut self) -> Result<ServerResult, ServiceError> {
        let outcome = match &mut self.left {
            Some(Left::Request { answer, .. }) => answer.await,
            _ => return std::future::pending().await,
        };
        self.left = None;
        outcome
    }

    pub(super) fn task(peer: Peer<RoleClient>, id: String) -> Abandoned {
        Abandoned {
            peer,
            left: Some(Left::Task(id)),
        }
    }

    /// The answer came: nothing to tell.
    pub(super) fn disarm(&mut self) {
        self.left = None;
    }
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some(left) = self.left.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            match left {
                Left::Request {
                    id,
                    mut answer,
                    grace,
                } => {
                    // A server with tasks may have answered with a task already: it outlives
                    // its request, so it is cancelled on its own.
                    if let Some(grace) = grace {
                        match tokio::time::timeout(grace, &mut answer).await {
                            Ok(Ok(answer)) => {
                                if let Some((_, task)) = TaskState::created(&answer) {
                                    cancel_task(&peer, task.id).await;
                                }
                                // Otherwise answered: nothing runs on.
                                return;
                            }
                            Ok(Err(_)) => return,
                            Err(_) => {}
                        }
                    }
                    let cancelled = CancelledNotificationParam::new(
                        Some(id),
                        Some("the call was abandoned by its caller".to_owned()),
                    );
                    let _ = peer.notify_cancelled(cancelled).await;
                }
                Left::Task(id) => cancel_task(&peer, id).await,
            }
        });
    }
}

/// Sends `tasks/cancel` for the task `id`, whatever the answer's shape (an empty one under
/// SEP-2663, the cancelled task in the draft); a failure is only logged.
async fn cancel_task(peer: &Peer<RoleClient>, id: String) {
    use rmcp::model::{CancelTaskParams, CancelTaskRequest};
    let request = CancelTaskRequest::new(CancelTaskParams::new(id));
    if let Err(error) = peer
        .send_request(ClientRequest::CancelTaskRequest(request))
        .await
    {
        tracing::debug!(%error, "tasks/cancel failed");
    }
}
