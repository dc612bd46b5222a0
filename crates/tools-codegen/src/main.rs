//! The `tools-codegen` command-line tool.

fn main() {
    eprintln!("tools-codegen: the command-line interface is not built yet");
    std::process::exit(2);
}
