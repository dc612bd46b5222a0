//! A stdio MCP server gets the host's standard streams and nothing else: a descriptor the host
//! holds without close-on-exec (inherited from its own parent, or opened by a library without
//! `O_CLOEXEC`) is closed when the server's program starts.
#![cfg(target_os = "linux")]

use crate::support;

use std::ffi::CString;
use std::io::Write;

use tools_mcp::{ImportOptions, McpImport, McpSource};
use tools_runtime::ToolRuntime;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_does_not_inherit_the_hosts_descriptors() {
    let folder = tempfile::tempdir().unwrap();
    let secret = folder.path().join("secret");
    std::fs::File::create(&secret)
        .unwrap()
        .write_all(b"the host's secret")
        .unwrap();
    let path = CString::new(secret.to_string_lossy().as_bytes()).unwrap();
    // SAFETY: a valid C string; the descriptor is closed below. No O_CLOEXEC, on purpose.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY) };
    assert!(fd > 2, "open failed");

    // The server's shell says what it was given, then becomes the real server.
    let report = folder.path().join("report");
    let script = format!(
        "if [ -e /proc/$$/fd/{fd} ]; then echo inherited > '{report}'; else echo closed > '{report}'; fi; exec '{python}' '{server}' stdio",
        report = report.display(),
        python = support::python().display(),
        server = support::peers().join("server.py").display(),
    );
    let runtime = ToolRuntime::new();
    let import = McpImport::connect(
        runtime.scope(),
        McpSource::stdio("sh", ["-c".to_owned(), script]),
        ImportOptions::new().prefix("py_"),
    )
    .await;
    // SAFETY: the descriptor opened above, closed once.
    unsafe { libc::close(fd) };
    let import = import.unwrap();
    assert!(import.tool_names().contains(&"py_greet".to_owned()));
    assert_eq!(
        std::fs::read_to_string(&report).unwrap().trim(),
        "closed",
        "the server's process could use descriptor {fd} of the host"
    );
}
