//! Code Mode runtimes: the [`CodeRuntime`](self) seam and the embedded TypeScript and Python
//! runtimes that run a model's program against the tools it may call.
