//! Approvals and the store: what makes a paused call durable. The settings
//! ([`DurableApprovals`](approvals::DurableApprovals)), the key and the MAC that bind a
//! decision to the call a person reviewed, the handle's text, the run a paused program leaves
//! and resumes, the status an operator reads and the errors ([`approvals`]); and where paused
//! calls are kept ([`ApprovalStore`](store::ApprovalStore) and the in-process
//! [`MemoryStore`](store::MemoryStore), [`store`]).
//!
//! It speaks the call room's words only (the handle a result carries is there, so results need
//! nothing of this room); the pipeline pauses and resumes calls with it.

pub(crate) mod approvals;
pub(crate) mod store;
