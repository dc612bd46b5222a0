//! A call's future run inside its span, entering the span once per poll.
//!
//! [`tracing::Instrument`] enters the span around each poll and once more when the future is
//! dropped, so that what the future holds is dropped inside the span. A call that completes pays
//! for that last enter and exit too: two for each call where one would do, and with an
//! OpenTelemetry layer each is an OpenTelemetry context attached and detached. The futures the
//! pipeline runs in a span are `async` blocks and functions, which hold nothing once they have
//! completed (their locals are dropped as they return, inside the poll, inside the span), so
//! [`InSpan`] enters the span in its drop only for a future dropped before it completed.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

pin_project_lite::pin_project! {
    /// `future`, an `async` block or function, polled inside `span`, and dropped inside it when
    /// dropped before it completed.
    pub(crate) struct InSpan<F> {
        span: tracing::Span,
        #[pin]
        future: Option<F>,
        completed: bool,
    }

    impl<F> PinnedDrop for InSpan<F> {
        fn drop(this: Pin<&mut Self>) {
            let mut this = this.project();
            if !*this.completed {
                // Dropped before it completed: what it holds is dropped inside the span.
                let _entered = this.span.enter();
                this.future.set(None);
            }
        }
    }
}

impl<F> InSpan<F> {
    pub(crate) fn new(span: tracing::Span, future: F) -> Self {
        InSpan {
            span,
            future: Some(future),
            completed: false,
        }
    }
}

impl<F: Future> Future for InSpan<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let _entered = this.span.enter();
        let Some(future) = this.future.as_pin_mut() else {
            unreachable!("InSpan's future is only taken when it is dropped");
        };
        let poll = future.poll(cx);
        *this.completed = poll.is_ready();
        poll
    }
}
