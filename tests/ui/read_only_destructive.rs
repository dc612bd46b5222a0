use tools_runtime::tool;

/// Remove every file.
#[tool(read_only, destructive)]
fn wipe() -> String {
    String::new()
}

fn main() {}
