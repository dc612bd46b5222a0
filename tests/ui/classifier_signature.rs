use tools_runtime::tool;

fn is_read_only(path: &str) -> bool {
    path.starts_with("/tmp")
}

/// Touch a file.
#[tool(concurrency_safe = is_read_only)]
async fn touch(path: String) -> bool {
    !path.is_empty()
}

fn main() {}
