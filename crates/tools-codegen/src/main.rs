//! The `tools-codegen` command-line tool: see `tools-codegen --help` and
//! [`tools_codegen::cli`].

fn main() {
    tools_codegen::cli::main()
}
