use tools_runtime::tool;

/// Echo the text back.
#[tool(callers = "program")]
fn echo(text: String) -> String {
    text
}

fn main() {}
