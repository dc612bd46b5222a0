//! The `tools-codegen` command-line tool: see `tools-codegen --help` and
//! [`tools_codegen::cli`].

#![forbid(unsafe_code)]

// Rendering a large catalog makes many small allocations, which a profile showed dominating
// the run with the system allocator; benches/codegen/compare.py prints the end-to-end time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    tools_codegen::cli::main()
}
