//! A minimal OTLP/HTTP receiver on loopback, for tests: it answers every `POST /v1/traces`
//! (protobuf) with 200 and keeps the spans, so a test can read what a process exported. Built
//! from the `opentelemetry-proto` types the exporter itself uses.
//!
//! ```
//! let receiver = tools_otel::receiver::Receiver::start().unwrap();
//! assert!(receiver.url().ends_with("/v1/traces"));
//! assert!(receiver.spans().is_empty());
//! ```

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex, PoisonError};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
pub use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;

/// The largest request body the receiver reads.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// One exported span with the service that exported it.
#[derive(Debug, Clone)]
pub struct Received {
    /// The `service.name` of the span's resource.
    pub service: String,
    /// The span.
    pub span: Span,
}

impl Received {
    /// The span's attributes as text (strings as they are, numbers and booleans written out).
    pub fn attributes(&self) -> HashMap<String, String> {
        texts(&self.span.attributes)
    }

    /// The attribute `key` when it was exported as an integer (`None` when absent, or of
    /// another type: a number written as a string is not one).
    pub fn int_attribute(&self, key: &str) -> Option<i64> {
        self.span
            .attributes
            .iter()
            .find(|a| a.key == key)
            .and_then(|a| match a.value.as_ref()?.value.as_ref()? {
                AnyValue::IntValue(i) => Some(*i),
                _ => None,
            })
    }
}

fn texts(attributes: &[KeyValue]) -> HashMap<String, String> {
    attributes
        .iter()
        .map(|a| {
            let value = match a.value.as_ref().and_then(|v| v.value.clone()) {
                Some(AnyValue::StringValue(s)) => s,
                Some(AnyValue::IntValue(i)) => i.to_string(),
                Some(AnyValue::BoolValue(b)) => b.to_string(),
                Some(AnyValue::DoubleValue(d)) => d.to_string(),
                other => format!("{other:?}"),
            };
            (a.key.clone(), value)
        })
        .collect()
}

/// The receiver: a thread accepting connections on `127.0.0.1`, one thread per connection.
#[derive(Debug, Clone)]
pub struct Receiver {
    url: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    /// Starts a receiver on a free loopback port.
    pub fn start() -> std::io::Result<Receiver> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let url = format!("http://{}/v1/traces", listener.local_addr()?);
        let received: Arc<Mutex<Vec<Received>>> = Arc::default();
        let kept = received.clone();
        std::thread::Builder::new()
            .name("otlp-receiver".to_owned())
            .spawn(move || {
                for stream in listener.incoming() {
                    let Ok(stream) = stream else { return };
                    let kept = kept.clone();
                    let _ = std::thread::Builder::new()
                        .name("otlp-connection".to_owned())
                        .spawn(move || serve(stream, &kept));
                }
            })?;
        Ok(Receiver { url, received })
    }

    /// Where to export: `http://127.0.0.1:<port>/v1/traces`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Every span received so far, in the order received.
    pub fn spans(&self) -> Vec<Received> {
        self.received
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Serves one connection: HTTP/1.1 requests one after another until it closes.
fn serve(stream: std::net::TcpStream, kept: &Mutex<Vec<Received>>) {
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut stream = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let status = if !line.starts_with("POST /v1/traces ") || length > MAX_BODY {
            "400 Bad Request"
        } else {
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).is_err() {
                return;
            }
            match ExportTraceServiceRequest::decode(body.as_slice()) {
                Ok(request) => {
                    keep(request, kept);
                    "200 OK"
                }
                Err(_) => "400 Bad Request",
            }
        };
        let answer = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n"
        );
        if stream.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

fn keep(request: ExportTraceServiceRequest, kept: &Mutex<Vec<Received>>) {
    let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
    for resource_spans in request.resource_spans {
        let service = resource_spans
            .resource
            .as_ref()
            .and_then(|r| texts(&r.attributes).remove("service.name"))
            .unwrap_or_default();
        for scope_spans in resource_spans.scope_spans {
            for span in scope_spans.spans {
                kept.push(Received {
                    service: service.clone(),
                    span,
                });
            }
        }
    }
}
