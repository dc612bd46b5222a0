use tools_runtime::tool;

/// Echo the value back.
#[tool]
fn echo<T: Clone>(value: T) -> T {
    value
}

fn main() {}
