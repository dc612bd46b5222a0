use tools_runtime::tool;

/// Sum a pair.
#[tool]
fn sum(pair: (u8, u8)) -> u16 {
    u16::from(pair.0) + u16::from(pair.1)
}

fn main() {}
