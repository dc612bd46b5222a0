//! The client side's handler of a connection: who the client says it is, what the
//! `initialize` handshake asks for, and the server's list changes followed
//! (`notifications/tools/list_changed`, or a `subscriptions/listen` stream on a 2026-07-28
//! connection), each of which makes the import list again.

use std::sync::Weak;

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProtocolVersion, SubscriptionFilter,
};
use rmcp::service::{MaybeSendFuture, NotificationContext, Peer, RoleClient, RunningService};

use super::Inner;
use super::list::refresh;
use crate::error::report;
use crate::lock;

pub(super) type Client = RunningService<RoleClient, Handler>;

/// The client side's handler: follows `list_changed`.
pub(super) struct Handler {
    pub(super) inner: Weak<Inner>,
}

/// Who this client says it is.
pub(super) fn client_implementation() -> Implementation {
    let mut implementation = Implementation::default();
    implementation.name = "tools-mcp".to_owned();
    implementation.version = env!("CARGO_PKG_VERSION").to_owned();
    implementation
}

impl ClientHandler for Handler {
    /// What the `initialize` handshake sends: it is the 2025-11-25 handshake, so it asks for
    /// 2025-11-25 (rmcp's default would be the newest version, which `initialize` cannot give).
    fn get_info(&self) -> ClientConfig {
        // The tasks extension: a long-running tool may answer with a task, which the call awaits.
        let capabilities = ClientCapabilities::builder().enable_tasks().build();
        ClientConfig::new(capabilities, client_implementation())
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        spawn_refresh(self.inner.clone());
        std::future::ready(())
    }
}

fn spawn_refresh(weak: Weak<Inner>) {
    tokio::spawn(async move {
        let Some(inner) = weak.upgrade() else {
            return;
        };
        let outcome = refresh(&inner).await;
        *lock(&inner.last_error) = outcome.err().map(|e| {
            let report = report(&e);
            tracing::warn!(error = %report, "MCP tool list refresh failed");
            report
        });
    });
}

/// On a 2026-07-28 connection, list changes come on a `subscriptions/listen` stream.
pub(super) fn listen_for_changes(weak: Weak<Inner>, peer: Peer<RoleClient>) {
    tokio::spawn(async move {
        let filter = SubscriptionFilter::builder().tools_list_changed().build();
        let mut subscription = match peer.listen(filter).await {
            Ok(s) => s,
            Err(e) => {
                tracing::debug!(error = %e, "MCP server offers no list_changed subscription");
                return;
            }
        };
        while let Ok(Some(_)) = subscription.next().await {
            if weak.strong_count() == 0 {
                return;
            }
            spawn_refresh(weak.clone());
        }
    });
}
