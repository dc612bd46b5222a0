//! The `server/discover` probe of [`Protocol::Auto`](super::Protocol::Auto) on a stdio
//! transport: whether the server offers 2026-07-28, within the probe's own bound.

use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ClientJsonRpcMessage, ClientRequest, DiscoverRequest,
    DiscoverRequestParams, JsonRpcMessage, ProtocolVersion, RequestId, RequestMetaObject,
    ServerResult,
};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;

use super::handler::client_implementation;
use crate::error::ConnectError;
use crate::wire::LineTransport;

/// What the `server/discover` probe found.
pub(super) enum Probe {
    /// The server offers 2026-07-28.
    Modern,
    /// It refused the probe, offers no 2026-07-28, or did not answer in time.
    Legacy,
}

/// The id of the probe: a string, which rmcp's own numeric ids never are.
const PROBE_ID: &str = "tools-mcp-probe";

/// Sends `server/discover` on a stdio transport and waits up to `bound` for the answer. A server
/// that does not answer in time is taken as legacy, and a late answer is dropped.
pub(super) async fn probe(
    transport: &mut LineTransport<RoleClient>,
    bound: Duration,
) -> Result<Probe, ConnectError> {
    let id = RequestId::String(PROBE_ID.into());
    let meta = RequestMetaObject::with_client_context(
        ProtocolVersion::V_2026_07_28,
        client_implementation(),
        ClientCapabilities::default(),
    );
    let mut discover = DiscoverRequest::new(DiscoverRequestParams {});
    discover.extensions.insert(meta);
    transport
        .send(ClientJsonRpcMessage::request(
            ClientRequest::DiscoverRequest(discover),
            id.clone(),
        ))
        .await
        .map_err(ConnectError::ProbeSend)?;
    let answer = async {
        loop {
            match transport.receive().await {
                None => {
                    return Err(ConnectError::ProbeClosed);
                }
                Some(JsonRpcMessage::Response(r)) if r.id == id => {
                    let modern = matches!(
                        &r.result,
                        ServerResult::DiscoverResult(d)
                            if d.supported_versions.contains(&ProtocolVersion::V_2026_07_28)
                    );
                    return Ok(if modern { Probe::Modern } else { Probe::Legacy });
                }
                Some(JsonRpcMessage::Error(e)) if e.id.as_ref().is_none_or(|e| *e == id) => {
                    return Ok(Probe::Legacy);
                }
                // Logging and other traffic before an answer.
                Some(_) => {}
            }
        }
    };
    match tokio::time::timeout(bound, answer).await {
        Ok(outcome) => outcome,
        Err(_) => {
            tracing::debug!(?bound, "no answer to server/discover; using initialize");
            transport.ignore_answers_to(id);
            Ok(Probe::Legacy)
        }
    }
}
