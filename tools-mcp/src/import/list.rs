//! Listing a server's tools (every page of `tools/list`) and bringing the scope up to date with
//! them: each listed tool becomes a raw definition whose body calls the server.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::Tool;
use rmcp::service::{Peer, RoleClient};
use serde_json::Value;
use tools_runtime::{Output, ToolDefinition, ToolRunContext};
use tools_schema::excerpt::cut;

use super::answer::text_output_schema;
use super::call::RemoteCall;
use super::limits::{MAX_PAGES, MAX_TOOLS};
use super::{Imported, Inner, Skipped, current_peer};
use crate::annotations::Hints;
use crate::error::{McpError, RequestError};
use crate::lock;
use crate::schema::FullSchema;
use crate::tasks_draft::TaskSupport;

/// Every page of `tools/list`, bounded by [`MAX_PAGES`] and [`MAX_TOOLS`], each page by
/// `timeout`.
pub(super) async fn list_pages(
    peer: &Peer<RoleClient>,
    timeout: Duration,
) -> Result<Vec<Tool>, RequestError> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let params = cursor
            .take()
            .map(|c| rmcp::model::PaginatedRequestParams::default().with_cursor(Some(c)));
        let page = tokio::time::timeout(timeout, peer.list_tools(params))
            .await
            .map_err(|_| RequestError::Timeout { timeout })?
            .map_err(|e| RequestError::Service(Box::new(e)))?;
        tools.extend(page.tools);
        if tools.len() > MAX_TOOLS {
            return Err(RequestError::TooManyTools);
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(tools),
        }
    }
    Err(RequestError::TooManyPages)
}

pub(super) async fn refresh(inner: &Arc<Inner>) -> Result<(), McpError> {
    let _one_at_a_time = inner.refresh.lock().await;
    let server = inner.source.describe();
    let Some(peer) = current_peer(inner) else {
        return Err(McpError::Request {
            server,
            method: "tools/list",
            source: RequestError::NotConnected,
        });
    };
    let listed = list_pages(&peer, inner.options.call_timeout)
        .await
        .map_err(|source| {
            inner.source.auth_or(McpError::Request {
                server: server.clone(),
                method: "tools/list",
                source,
            })
        })?;

    // The wanted state: remote name -> (local name, tool).
    let mut wanted: BTreeMap<String, (String, Tool)> = BTreeMap::new();
    let mut by_local: HashMap<String, String> = HashMap::new();
    for tool in listed {
        let remote = tool.name.to_string();
        let Some(local) = (inner.options.naming)(&remote) else {
            continue;
        };
        if let Err(source) = tools_runtime::schema::validate_tool_name(&local) {
            return Err(McpError::InvalidName {
                remote: cut(&remote).into_owned(),
                local: cut(&local).into_owned(),
                source,
            });
        }
        if let Some(other) = by_local.insert(local.clone(), remote.clone()) {
            return Err(McpError::NameCollision {
                details: format!(
                    "the server's tools `{}` and `{}` both map to `{}`",
                    cut(&other),
                    cut(&remote),
                    cut(&local)
                ),
            });
        }
        if wanted.insert(remote.clone(), (local, tool)).is_some() {
            return Err(McpError::NameCollision {
                details: format!("the server lists `{}` twice", cut(&remote)),
            });
        }
    }

    // Remove what vanished or changed.
    let mut removed = Vec::new();
    {
        let mut tools = lock(&inner.tools);
        let stale: Vec<String> = tools
            .iter()
            .filter(|(remote, have)| match wanted.get(*remote) {
                None => true,
                Some((local, tool)) => *local != have.local || *tool != have.tool,
            })
            .map(|(remote, _)| remote.clone())
            .collect();
        for remote in stale {
            if let Some(t) = tools.remove(&remote) {
                lock(&inner.asking).remove(&t.local);
                removed.push(t);
            }
        }
    }
    for t in removed {
        t.registration.dispose();
    }

    // Register what is new (or changed).
    let mut skipped = Vec::new();
    let mut first_error = None;
    for (remote, (local, tool)) in wanted {
        if lock(&inner.tools).contains_key(&remote) {
            continue;
        }
        let definition = match definition(inner, &remote, &local, &tool) {
            Ok((d, asks)) => {
                if asks {
                    lock(&inner.asking).insert(local.clone());
                }
                d
            }
            Err(reason) => {
                tracing::warn!(tool = %remote, %reason, "MCP tool not imported");
                skipped.push(Skipped {
                    name: remote,
                    reason,
                });
                continue;
            }
        };
        match inner.scope.register(definition) {
            Ok(registration) => {
                lock(&inner.tools).insert(
                    remote,
                    Imported {
                        local,
                        tool,
                        registration,
                    },
                );
            }
            Err(tools_runtime::error::RegistryError::Duplicate { name, .. }) => {
                first_error.get_or_insert(McpError::NameCollision {
                    details: format!(
                        "`{}` (the server's `{}`) is already registered in the scope",
                        cut(&name),
                        cut(&remote)
                    ),
                });
            }
            Err(source) => {
                first_error.get_or_insert(McpError::Register {
                    name: local,
                    source,
                });
            }
        }
    }
    *lock(&inner.skipped) = skipped;
    match first_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn definition(
    inner: &Arc<Inner>,
    remote: &str,
    local: &str,
    tool: &Tool,
) -> Result<(ToolDefinition, bool), String> {
    let input_schema = Value::Object((*tool.input_schema).clone());
    let input = FullSchema::compile(&input_schema)
        .map_err(|e| format!("its input schema cannot be used: {e}"))?;
    let (output, output_check) = match &tool.output_schema {
        Some(schema) => {
            let schema = Value::Object((**schema).clone());
            let check = FullSchema::compile(&schema)
                .map_err(|e| format!("its output schema cannot be used: {e}"))?;
            (Output::json(schema).tool_validated(), Some(Arc::new(check)))
        }
        None => (Output::json(text_output_schema()), None),
    };
    let description = tool
        .description
        .as_deref()
        .map(str::to_owned)
        .or_else(|| tool.title.clone())
        .unwrap_or_default();
    let limits = inner.options.limits(remote);
    let as_task = match crate::tasks_draft::task_support(tool) {
        Some(TaskSupport::Required) => true,
        Some(TaskSupport::Optional) => inner.options.optional_task(remote),
        Some(TaskSupport::Forbidden) | None => false,
    };
    let annotations = tool
        .annotations
        .as_ref()
        .and_then(|a| crate::annotations::imported(remote, a));
    let treatment = inner
        .options
        .annotations
        .treatment(&Hints::of(annotations.as_ref()));
    let call = Arc::new(RemoteCall {
        inner: Arc::downgrade(inner),
        remote: remote.to_owned(),
        input,
        output: output_check,
        limits,
        as_task,
        retry: treatment.retry,
    });
    let mut builder = ToolDefinition::raw(local)
        .description(description)
        .input_schema(input_schema)
        .output(output);
    if let Some(annotations) = annotations {
        builder = builder.annotations(annotations);
    }
    if treatment.concurrency_safe {
        builder = builder.concurrency_safe(|_| true);
    }
    if as_task {
        // Its calls run as tasks: a server of ours offers it as one too.
        builder = builder.long_running();
    }
    if !limits.timeout.is_zero() {
        builder = builder.timeout(limits.timeout);
        if let Some(max_total) = limits.max_total {
            builder = builder.timeout_resets_on_progress(max_total);
        }
    }
    builder
        .execute(move |args: Arc<Value>, ctx: ToolRunContext| {
            let call = call.clone();
            async move { call.run(&args, &ctx).await }
        })
        .build()
        .map(|d| (d, treatment.ask))
        .map_err(|e| e.to_string())
}
