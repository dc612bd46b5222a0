//! The `tools-codegen` command-line tool: see `tools-codegen --help` and
//! [`tools_codegen::cli`].

// Rendering a large catalog is dominated by many small allocations; mimalloc serves them with
// fewer page faults than the system allocator (see benches/codegen/compare.py).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    tools_codegen::cli::main()
}
