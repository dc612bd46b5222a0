//! An operator's view of the paused calls in a store: list them by state (the calls in doubt
//! among them), show one, and settle one in doubt by hand.
//!
//! ```text
//! APPROVAL_KEY=... cargo run -p tools-approvals --example calls -- --sqlite approvals.db list
//! APPROVAL_KEY=... cargo run -p tools-approvals --example calls -- --sqlite approvals.db list --state resuming
//! APPROVAL_KEY=... cargo run -p tools-approvals --example calls -- --sqlite approvals.db show <id>
//! APPROVAL_KEY=... cargo run -p tools-approvals --example calls -- --sqlite approvals.db settle <id> done "the row is in the ledger"
//! APPROVAL_KEY=... cargo run -p tools-approvals --features postgres --example calls -- --postgres "host=... dbname=..." list
//! ```
//!
//! It goes through the runtime's API (`ToolRuntime::paused_calls`, `paused_call`,
//! `settle_pending`) with the service's key (`APPROVAL_KEY`), so a row that fails its MAC is
//! left out, as the service itself would leave it out. Settling never runs a call: it writes
//! the end of one whose resume never recorded it.

use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand, ValueEnum};
use tools_runtime::ToolRuntime;
use tools_runtime::approvals::{
    ApprovalKey, ApprovalStore, CallFilter, CallQuery, DurableApprovals, PausedCall, Settle,
};

/// Paused calls in an approval store, as an operator sees them.
#[derive(Parser)]
struct Args {
    /// The SQLite file of the store.
    #[arg(long, conflicts_with = "postgres")]
    sqlite: Option<std::path::PathBuf>,
    /// The PostgreSQL connection settings of the store (feature `postgres`).
    #[arg(long)]
    postgres: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Lists the calls, oldest first.
    List {
        /// Only the calls in this state.
        #[arg(long, value_enum, default_value = "all")]
        state: State,
        /// At most this many.
        #[arg(long, default_value_t = 100)]
        limit: usize,
    },
    /// Shows one call, whatever its state.
    Show {
        /// The call's id.
        id: String,
    },
    /// Settles a call in doubt (`resuming`, its process gone) as done or failed, with a note.
    Settle {
        /// The call's id.
        id: String,
        /// What to settle it as.
        #[arg(value_enum)]
        to: To,
        /// What was checked.
        note: String,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum State {
    All,
    Pending,
    Expired,
    Resuming,
    Done,
    Failed,
    Cancelled,
}

#[derive(Clone, Copy, ValueEnum)]
enum To {
    Done,
    Failed,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match run(Args::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("error: {why}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), String> {
    let key = std::env::var("APPROVAL_KEY")
        .map_err(|_| "set APPROVAL_KEY to the service's approval key".to_owned())?;
    let key = ApprovalKey::new(key).map_err(|e| e.to_string())?;
    let store = open(&args).await?;
    let runtime = ToolRuntime::builder()
        .durable_approvals(
            DurableApprovals::with_store(store.clone(), key).replica("calls example"),
        )
        .build()
        .map_err(|e| e.to_string())?;
    let fail = |e: tools_runtime::approvals::ApprovalError| format!("{e} ({})", e.code());
    match args.command {
        Command::List { state, limit } => {
            let query = CallQuery::new(filter(state), limit);
            let calls = runtime.paused_calls(query.clone()).await.map_err(fail)?;
            for call in &calls {
                println!("{}", line(call));
            }
            println!("{} call(s)", calls.len());
            // The runtime leaves out a row that fails its MAC; say how many it left out.
            let rows = store
                .calls(&query)
                .await
                .map_err(|e| format!("the store failed: {e}"))?;
            if rows.len() > calls.len() {
                eprintln!(
                    "warning: {} row(s) fail their MAC and are left out: APPROVAL_KEY is not \
                     the service's key, or the rows were edited behind its back",
                    rows.len() - calls.len()
                );
            }
        }
        Command::Show { id } => {
            let call = runtime
                .paused_call(&id)
                .await
                .map_err(fail)?
                .ok_or_else(|| format!("no paused call has the id `{id}`"))?;
            println!("{}", line(&call));
            println!("arguments: {}", call.handle.arguments);
            if let Some(edited) = &call.edited_arguments {
                println!("edited to: {edited}");
            }
            if let Some(awaiting) = &call.handle.awaiting {
                println!("awaiting: {} {}", awaiting.tool, awaiting.arguments);
            }
            if let Some(reason) = &call.handle.reason {
                println!("reason: {reason}");
            }
        }
        Command::Settle { id, to, note } => {
            let settle = match to {
                To::Done => Settle::Done,
                To::Failed => Settle::Failed,
            };
            let call = runtime
                .settle_pending(&id, settle, &note)
                .await
                .map_err(fail)?;
            println!("{}", line(&call));
        }
    }
    Ok(())
}

/// One line of a listing: id, tool, agent, when it paused, where it stands.
fn line(call: &PausedCall) -> String {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(call.handle.created_ms);
    format!(
        "{}  {}  agent={}  paused={}  {}",
        call.handle.id,
        call.handle.tool,
        call.handle.agent.as_deref().unwrap_or("-"),
        humantime::format_rfc3339_seconds(at),
        call.status
    )
}

fn filter(state: State) -> CallFilter {
    match state {
        State::All => CallFilter::All,
        State::Pending => CallFilter::Pending,
        State::Expired => CallFilter::Expired,
        State::Resuming => CallFilter::Resuming,
        State::Done => CallFilter::Done,
        State::Failed => CallFilter::Failed,
        State::Cancelled => CallFilter::Cancelled,
    }
}

async fn open(args: &Args) -> Result<Arc<dyn ApprovalStore>, String> {
    if let Some(path) = &args.sqlite {
        let store = tools_approvals::SqliteStore::open(path).map_err(|e| e.to_string())?;
        return Ok(Arc::new(store));
    }
    if let Some(conninfo) = &args.postgres {
        return postgres(conninfo).await;
    }
    Err("name the store: --sqlite FILE or --postgres CONNINFO".to_owned())
}

#[cfg(feature = "postgres")]
async fn postgres(conninfo: &str) -> Result<Arc<dyn ApprovalStore>, String> {
    let store = tools_approvals::PostgresStore::connect(conninfo)
        .await
        .map_err(|e| e.to_string())?;
    Ok(Arc::new(store))
}

#[cfg(not(feature = "postgres"))]
async fn postgres(_conninfo: &str) -> Result<Arc<dyn ApprovalStore>, String> {
    Err("this build has no PostgreSQL store: build the example with `--features postgres`".into())
}
