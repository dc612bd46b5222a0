use tools_runtime::tool;

struct Settings;

/// Echo the text back.
#[tool]
fn echo(text: String, #[context] settings: Settings) -> String {
    let _ = settings;
    text
}

fn main() {}
