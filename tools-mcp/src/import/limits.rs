//! The bounds of reading a server's tool list, which the listing holds to and its errors name
//! ([`RequestError::TooManyPages`](crate::error::RequestError::TooManyPages),
//! [`RequestError::TooManyTools`](crate::error::RequestError::TooManyTools)).

/// At most this many `tools/list` pages are read (a server that never stops paging is an error).
pub const MAX_PAGES: usize = 1_000;

/// At most this many tools are imported from one server.
pub const MAX_TOOLS: usize = 10_000;
