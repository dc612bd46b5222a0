//! Deterministic renderers from a tool catalog to a TypeScript SDK, a Python SDK, Markdown docs and
//! the Code Mode usage text, and the `tools-codegen` command-line tool.
//!
//! The same catalog always renders to byte-identical text, so a generated SDK can sit in a
//! cacheable prompt prefix and a build can fail when a checked-in file drifts.
