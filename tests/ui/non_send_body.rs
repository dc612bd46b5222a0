use std::rc::Rc;
use tools_runtime::tool;

async fn tick() {}

/// Count to three.
#[tool]
async fn count() -> u32 {
    let shared = Rc::new(3);
    tick().await;
    *shared
}

fn main() {}
