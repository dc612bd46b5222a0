//! Finding the real MCP peers the tests start. `./scripts/test` installs them into `.tools`
//! and passes their paths; a missing peer fails the test (it never skips).

#![allow(dead_code, clippy::panic)]

use std::path::{Path, PathBuf};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn find(var: &str, local: &str, what: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(var) {
        return PathBuf::from(path);
    }
    let local = repo_root().join(local);
    if local.exists() {
        return local;
    }
    panic!(
        "{what} was not found (set {var}, or run ./scripts/test, which installs it into .tools)"
    );
}

/// `dist/index.js` of npm's `@modelcontextprotocol/server-everything`.
pub fn everything() -> PathBuf {
    find(
        "TOOLS_MCP_EVERYTHING",
        ".tools/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        "npm's @modelcontextprotocol/server-everything",
    )
}

/// The folder of npm's `@modelcontextprotocol/sdk` (the TypeScript SDK), with its OAuth
/// extensions.
pub fn ts_sdk() -> PathBuf {
    let dir = find(
        "TOOLS_MCP_TS_SDK",
        ".tools/node_modules/@modelcontextprotocol/sdk",
        "npm's @modelcontextprotocol/sdk",
    );
    assert!(
        dir.join("dist/esm/client/auth-extensions.js").exists(),
        "{} has no dist/esm/client/auth-extensions.js (an SDK without ClientCredentialsProvider); \
         run ./scripts/test, which installs @modelcontextprotocol/sdk into .tools",
        dir.display()
    );
    dir
}

/// A Python with PyPI's `mcp` installed.
pub fn python() -> PathBuf {
    find(
        "TOOLS_MCP_PYTHON",
        ".tools/mcpvenv/bin/python",
        "a Python with PyPI's `mcp`",
    )
}

/// The folder of the Python peers of these tests.
pub fn peers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers")
}

/// `node <server-everything>` as an import source.
pub fn everything_source() -> tools_mcp::McpSource {
    tools_mcp::McpSource::stdio(
        "node",
        [
            everything().to_string_lossy().into_owned(),
            "stdio".to_owned(),
        ],
    )
}

/// `node <server-everything>` behind `tests/peers/record.mjs`, which appends every line both
/// ways to `log` (and asks the server `tasks/get` after each `tasks/cancel`), as an import source.
pub fn everything_recorded(log: &Path) -> tools_mcp::McpSource {
    tools_mcp::McpSource::stdio(
        "node",
        [
            peers().join("record.mjs").to_string_lossy().into_owned(),
            log.to_string_lossy().into_owned(),
            "node".to_owned(),
            everything().to_string_lossy().into_owned(),
            "stdio".to_owned(),
        ],
    )
}

/// `tests/peers/draft_tasks.mjs`, a small server of the 2025-11-25 draft's tasks, as an import
/// source.
pub fn draft_tasks_source() -> tools_mcp::McpSource {
    tools_mcp::McpSource::stdio(
        "node",
        [peers()
            .join("draft_tasks.mjs")
            .to_string_lossy()
            .into_owned()],
    )
}

/// The `tools-mcp` binary of this crate.
pub const SERVER: &str = env!("CARGO_BIN_EXE_tools-mcp");

/// Runs a Python peer script of `tests/peers` with `args`; its last line of output, as JSON.
pub fn python_json(script: &str, args: &[&str]) -> serde_json::Value {
    let output = std::process::Command::new(python())
        .arg(peers().join(script))
        .args(args)
        .output()
        .expect("the Python peer runs");
    assert!(
        output.status.success(),
        "{script} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().last().expect("the peer prints its findings");
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"))
}

/// A child process killed when dropped.
pub struct Child(pub std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `tools-mcp serve --http 127.0.0.1:0` with `extra` arguments: the process, its URL and its
/// startup line.
pub fn serve_http(extra: &[&str]) -> (Child, String, String) {
    let mut command = std::process::Command::new(SERVER);
    command.arg("serve").args(extra);
    serve_http_command(command)
}

/// `command` (a `tools-mcp serve` with its arguments and environment) with `--http
/// 127.0.0.1:0` added: the process, its URL and its startup line.
pub fn serve_http_command(mut command: std::process::Command) -> (Child, String, String) {
    use std::io::BufRead;
    let mut child = command
        .args(["--http", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("tools-mcp serve starts");
    let stdout = child.stdout.take().expect("piped");
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the startup line");
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    (Child(child), format!("http://{addr}/mcp"), line)
}

/// A Python peer of `tests/peers` serving streamable HTTP (`script http`, which prints
/// `port N`): the process and its URL.
pub fn python_http(script: &str) -> (Child, String) {
    python_http_mode(script, "http")
}

/// [`python_http`] answering each request with a plain JSON body rather than an SSE stream
/// (`script http-json`).
pub fn python_http_json(script: &str) -> (Child, String) {
    python_http_mode(script, "http-json")
}

fn python_http_mode(script: &str, mode: &str) -> (Child, String) {
    let mut command = std::process::Command::new(python());
    command.arg(peers().join(script)).arg(mode);
    http_peer(command)
}

/// npm's server-everything behind `tests/peers/everything_json.mjs`, serving streamable HTTP
/// with plain JSON answers: the process and its URL.
pub fn everything_json() -> (Child, String) {
    let mut command = std::process::Command::new("node");
    command
        .arg(peers().join("everything_json.mjs"))
        .arg(everything());
    http_peer(command)
}

/// A peer serving streamable HTTP that prints `port N` first: the process and its URL, once the
/// port takes connections (a Python peer prints it before it listens).
fn http_peer(mut command: std::process::Command) -> (Child, String) {
    use std::io::BufRead;
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the HTTP peer starts");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("piped"))
        .read_line(&mut line)
        .expect("the port line");
    let port = line
        .trim()
        .strip_prefix("port ")
        .unwrap_or_else(|| panic!("no port in {line:?}"))
        .to_owned();
    let addr = format!("127.0.0.1:{port}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::net::TcpStream::connect(&addr).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the peer does not listen on {addr}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    (Child(child), format!("http://{addr}/mcp"))
}

/// A Python peer of `tests/peers` as a stdio import source (`script stdio`).
pub fn python_stdio(script: &str) -> tools_mcp::McpSource {
    tools_mcp::McpSource::stdio(
        python().to_string_lossy().into_owned(),
        [
            peers().join(script).to_string_lossy().into_owned(),
            "stdio".to_owned(),
        ],
    )
}

/// A raw client of a stdio server (`tools-mcp serve`): JSON-RPC messages written and read one
/// per line. The server is killed when this drops, unless [`close`](Self::close) ended it.
pub struct RawStdio {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
    /// Answers read while waiting for another id.
    early: std::collections::HashMap<u64, serde_json::Value>,
}

impl RawStdio {
    /// Starts `command` (a `tools-mcp serve` with its arguments and environment) with piped
    /// stdin and stdout.
    pub fn start(mut command: std::process::Command) -> RawStdio {
        use std::io::BufRead;
        let mut child = command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("tools-mcp serve starts");
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        RawStdio {
            child: Child(child),
            stdin: Some(stdin),
            lines: std::io::BufReader::new(stdout).lines(),
            early: std::collections::HashMap::new(),
        }
    }

    /// Sends one message.
    pub fn send(&mut self, message: &serde_json::Value) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().expect("stdin is open");
        let mut line = serde_json::to_vec(message).expect("a message serializes");
        line.push(b'\n');
        stdin.write_all(&line).expect("the server reads");
        stdin.flush().expect("the server reads");
    }

    /// Sends request `id` and waits for its answer.
    pub fn request(
        &mut self,
        id: u64,
        method: &str,
        params: serde_json::Value,
    ) -> serde_json::Value {
        self.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        self.answer(id)
    }

    /// The answer to request `id` (reading past notifications and other answers, which are kept).
    pub fn answer(&mut self, id: u64) -> serde_json::Value {
        loop {
            if let Some(answer) = self.early.remove(&id) {
                return answer;
            }
            let line = self
                .lines
                .next()
                .unwrap_or_else(|| panic!("the server closed stdout before answering {id}"))
                .expect("stdout reads");
            let message: serde_json::Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not JSON from the server ({e}): {line}"));
            if message.get("method").is_none()
                && let Some(n) = message["id"].as_u64()
            {
                self.early.insert(n, message);
            }
        }
    }

    /// The 2025-11-25 handshake with `capabilities` (request id 0): the `initialize` answer.
    pub fn initialize(&mut self, capabilities: serde_json::Value) -> serde_json::Value {
        let answer = self.request(
            0,
            "initialize",
            serde_json::json!({
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "clientInfo": {"name": "raw", "version": "0"}
            }),
        );
        self.send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.0.id()
    }

    /// Waits for the server to exit with stdin still open (10 s at most; then it is killed and
    /// this panics).
    pub fn exited(mut self) -> std::process::ExitStatus {
        for _ in 0..200 {
            if let Some(status) = self.child.0.try_wait().expect("the server is ours") {
                return status;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the server did not exit");
    }

    /// Closes stdin and waits for the server to exit.
    pub fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        self.child.0.wait().expect("the server exits")
    }
}

/// The tool `add` (`{a, b}` integers to `{sum}`), answering at once: what the tests of served
/// endpoints serve when the tool itself does not matter.
pub fn add_tool() -> tools_runtime::ToolDefinition {
    use serde_json::json;
    use tools_runtime::{Output, ToolDefinition};
    ToolDefinition::builder("add")
        .input_schema(json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}))
        .output(Output::json(json!({"type": "object", "properties": {"sum": {"type": "integer"}}})))
        .execute(|args, _| async move {
            Ok(json!({"sum": args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0)}))
        })
        .build()
        .unwrap()
}
