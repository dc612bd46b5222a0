use tools_runtime::tool;

/// Echo the text back.
#[tool(name = "echo text")]
fn echo(text: String) -> String {
    text
}

fn main() {}
