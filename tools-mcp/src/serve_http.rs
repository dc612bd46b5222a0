//! Streamable HTTP for [`McpServer::serve_http`]: hyper connections, each request read by this
//! crate before rmcp's service sees it.
//!
//! - A POST body is read up to the server's limit of one message
//!   ([`McpServer::max_message_size`]). A larger one is read to its end without being kept
//!   ([`IdScan`]), so the client is never cut off while it sends, and answered `413` with a
//!   JSON-RPC error for its id (`"id": null` when the id cannot be read), naming the size and the
//!   limit.
//! - A body that is not JSON is answered `400` with the JSON-RPC parse error (`-32700`), one that
//!   is JSON but no JSON-RPC message `400` with `-32600`, for its id where it has one (rmcp
//!   answers both `415` with plain text).
//! - With [`McpServer::bearer_auth`], the bearer front answers the protected resource metadata
//!   and refuses a request without a good token (`401`) or scope (`403`) before anything else
//!   reads it, and puts the principal on the request for the handler ([`crate::auth`]).
//! - A `notifications/cancelled` without a session cancels the call it names when that call is
//!   a 2025-11-25 one in flight without a session on this server, came from the same client
//!   address, and is the only such call with that id (rmcp acknowledges it with `202` and drops
//!   it). Two callers behind one address that reuse an id cannot be told apart; neither is
//!   cancelled. A 2026-07-28 call is cancelled by closing its response stream. See
//!   [`HttpOptions::cancellation`].

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use hyper::service::Service as _;
use rmcp::model::{ClientJsonRpcMessage, ErrorData, RequestId};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;

use crate::error::McpError;
use crate::serve::{HttpOptions, McpServer};
use crate::wire::{HttpCaller, SESSION_HEADER};
use crate::wire::{IdScan, Size, error_json, glance, invalid_request, parse_error, too_large};
use tools_schema::excerpt::cut;

type Body = BoxBody<Bytes, Infallible>;
type Rmcp =
    hyper_util::service::TowerToHyperService<StreamableHttpService<McpServer, LocalSessionManager>>;

/// The largest body looked at for a `notifications/cancelled` (it is a few dozen bytes).
const SMALL_BODY: usize = 64 * 1024;

struct Front {
    rmcp: Rmcp,
    server: McpServer,
    limit: usize,
}

pub(crate) async fn serve(
    server: McpServer,
    listener: tokio::net::TcpListener,
    options: HttpOptions,
    shutdown: tokio_util::sync::CancellationToken,
) -> Result<(), McpError> {
    let limit = server.message_limit();
    let mut config = StreamableHttpServerConfig::default();
    config.legacy_session_mode = options.sessions;
    config.cancellation_token = shutdown.child_token();
    // Bodies reach rmcp read and within the limit already.
    config.max_request_body_bytes = limit;
    if let Some(hosts) = options.allowed_hosts {
        config.allowed_hosts = hosts;
    }
    let handler = server.clone();
    let rmcp = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let front = Arc::new(Front {
        rmcp: hyper_util::service::TowerToHyperService::new(rmcp),
        server,
        limit,
    });
    loop {
        let (stream, peer): (tokio::net::TcpStream, SocketAddr) = tokio::select! {
            () = shutdown.cancelled() => return Ok(()),
            accepted = listener.accept() => accepted?,
        };
        let front = front.clone();
        let stop = shutdown.clone();
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                let front = front.clone();
                async move { front.handle(request, peer.ip()).await }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .with_upgrades();
            tokio::select! {
                _ = connection => {}
                () = stop.cancelled() => {}
            }
        });
    }
}

impl Front {
    async fn handle(
        &self,
        mut request: Request<Incoming>,
        ip: IpAddr,
    ) -> Result<Response<Body>, Infallible> {
        request.extensions_mut().insert(HttpCaller { ip });
        // The bearer front (`crate::auth`): nothing below is reached by a refused request.
        let mut caller = None;
        if let Some(auth) = &self.server.auth {
            if let Some(document) =
                crate::serve_auth::metadata(auth, request.method(), request.uri().path())
            {
                return Ok(document);
            }
            let tenants = self.server.tenants.as_deref();
            match crate::serve_auth::admit(auth, tenants, request.headers()).await {
                Ok(admitted) => {
                    request.extensions_mut().insert(admitted.clone());
                    caller = Some((auth.clone(), admitted));
                }
                Err(refusal) => return Ok(refusal),
            }
        }
        if request.method() != Method::POST || !is_json(request.headers()) {
            // rmcp answers GET, DELETE and a POST of another content type.
            return self.rmcp.call(request).await;
        }
        let stateless = !request.headers().contains_key(SESSION_HEADER);
        let (parts, body) = request.into_parts();
        let bytes = match read(body, self.limit).await {
            Ok(Read::Whole(bytes)) => bytes,
            Ok(Read::Oversized(scan)) => {
                let found = scan.finish();
                let what = if found.method {
                    "the request"
                } else {
                    "the message"
                };
                let error = too_large(
                    what,
                    Size::Exact(found.bytes),
                    self.limit,
                    "McpServer::max_message_size",
                );
                let id = found.id.filter(|_| found.method);
                return Ok(json_error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    id.as_ref(),
                    &error,
                ));
            }
            Err(e) => {
                let error = invalid_request(&format!("the request body could not be read: {e}"));
                return Ok(json_error(StatusCode::BAD_REQUEST, None, &error));
            }
        };
        if let Some((auth, caller)) = &caller
            && let Some(refusal) = crate::serve_auth::step_up(auth, caller, &bytes)
        {
            return Ok(refusal);
        }
        if stateless
            && bytes.len() <= SMALL_BODY
            && let Some(id) = cancelled_request(&bytes)
        {
            self.server.cancel_stateless(ip, &id);
        }
        let response = self
            .rmcp
            .call(Request::from_parts(parts, Full::new(bytes.clone())))
            .await?;
        if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE
            && let Some(refusal) = not_a_message(&bytes)
        {
            // The content type was checked above: rmcp could not read the body.
            return Ok(refusal);
        }
        Ok(response)
    }
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            let essence = v.split_once(';').map_or(v, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case("application/json")
        })
}

enum Read {
    Whole(Bytes),
    Oversized(IdScan),
}

/// Reads a body, keeping at most `limit` bytes; a longer one is read to its end through the
/// scanner.
async fn read(mut body: Incoming, limit: usize) -> Result<Read, hyper::Error> {
    let mut kept: Vec<u8> = Vec::new();
    let mut scan: Option<IdScan> = None;
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame?.into_data() else {
            continue;
        };
        if let Some(scan) = &mut scan {
            scan.feed(&data);
        } else if kept.len() + data.len() > limit {
            let mut s = IdScan::default();
            s.feed(&kept);
            s.feed(&data);
            kept = Vec::new();
            scan = Some(s);
        } else {
            kept.extend_from_slice(&data);
        }
    }
    Ok(match scan {
        Some(scan) => Read::Oversized(scan),
        None => Read::Whole(Bytes::from(kept)),
    })
}

/// The id a `notifications/cancelled` names, if `bytes` is one.
fn cancelled_request(bytes: &[u8]) -> Option<RequestId> {
    let value: Value = serde_json::from_slice(bytes).ok()?;
    if value.get("method")?.as_str()? != "notifications/cancelled" || value.get("id").is_some() {
        return None;
    }
    serde_json::from_value(value.get("params")?.get("requestId")?.clone()).ok()
}

/// The JSON-RPC refusal of a body that is not a JSON-RPC message, if it is not one.
fn not_a_message(bytes: &[u8]) -> Option<Response<Body>> {
    let error = serde_json::from_slice::<ClientJsonRpcMessage>(bytes).err()?;
    let look = glance(bytes);
    let detail = cut(&error.to_string()).into_owned();
    Some(if look.json {
        json_error(
            StatusCode::BAD_REQUEST,
            look.id.as_ref(),
            &invalid_request(&detail),
        )
    } else {
        json_error(StatusCode::BAD_REQUEST, None, &parse_error(&detail))
    })
}

fn json_error(status: StatusCode, id: Option<&RequestId>, error: &ErrorData) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(error_json(id, error))).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
