use tools_runtime::tool;

/// Describe nothing.
#[tool(name = "describe_tools")]
fn describe(text: String) -> String {
    text
}

fn main() {}
