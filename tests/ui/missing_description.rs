use tools_runtime::tool;

#[tool]
fn echo(text: String) -> String {
    text
}

fn main() {}
