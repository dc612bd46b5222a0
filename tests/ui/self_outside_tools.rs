use tools_runtime::tool;

struct Db;

impl Db {
    /// Look a key up.
    #[tool]
    async fn lookup(&self, key: String) -> String {
        key
    }
}

fn main() {}
