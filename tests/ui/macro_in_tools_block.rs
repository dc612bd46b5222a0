use tools_runtime::tools;

macro_rules! getter {
    () => {
        fn get(&self) -> u8 {
            self.0
        }
    };
}

struct Plugin(u8);

#[tools]
impl Plugin {
    getter!();

    /// Read the value.
    #[tool]
    fn value(&self) -> u8 {
        self.0
    }
}

fn main() {}
