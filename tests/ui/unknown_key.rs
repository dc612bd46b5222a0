use tools_runtime::tool;

/// Echo the text back.
#[tool(nmae = "echo")]
fn echo(text: String) -> String {
    text
}

fn main() {}
