//! Boxes an async tool function's future with the conversion of its result.
//!
//! This is the one piece of generated-code support that is generic over a function's future,
//! so editing a tool body recompiles its instance. rustc compiles a generic function's
//! instances with the function's module, so this module of its own keeps them in a small unit
//! apart from the rest of `__private`, which an edit then leaves as it is.
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::Value;

use super::BoxBody;
use crate::errors::ToolError;

/// `future`, converting its output with `convert` when it completes, as a [`BoxBody`].
pub fn convert_later<F>(future: F, convert: fn(F::Output) -> Result<Value, ToolError>) -> BoxBody
where
    F: Future + Send + 'static,
{
    Box::pin(Converting { future, convert })
}

pin_project_lite::pin_project! {
    /// The future [`convert_later`] boxes. Not a closure or `async` block: those would be
    /// compiled with the module that writes them, beside the user's code.
    struct Converting<F: Future> {
        #[pin]
        future: F,
        convert: fn(F::Output) -> Result<Value, ToolError>,
    }
}

impl<F: Future> Future for Converting<F> {
    type Output = Result<Value, ToolError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        match this.future.poll(cx) {
            Poll::Ready(output) => Poll::Ready((this.convert)(output)),
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::convert_later;
    use crate::errors::ToolError;

    /// Pending on the first poll (waking its task), then ready with `value`.
    struct YieldOnce {
        polled: bool,
        value: String,
    }

    impl std::future::Future for YieldOnce {
        type Output = String;
        fn poll(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<String> {
            if self.polled {
                std::task::Poll::Ready(std::mem::take(&mut self.value))
            } else {
                self.polled = true;
                cx.waker().wake_by_ref();
                std::task::Poll::Pending
            }
        }
    }

    #[tokio::test]
    async fn convert_later_waits_for_the_future_then_converts_its_output() {
        fn to_json(text: String) -> Result<Value, ToolError> {
            Ok(Value::String(text.to_uppercase()))
        }
        let body = convert_later(
            YieldOnce {
                polled: false,
                value: "done".to_owned(),
            },
            to_json,
        );
        assert_eq!(body.await.unwrap(), Value::String("DONE".to_owned()));

        // An async block that awaits a pending step, as a tool body does.
        let body = convert_later(
            async {
                tokio::task::yield_now().await;
                "later".to_owned()
            },
            to_json,
        );
        assert_eq!(body.await.unwrap(), Value::String("LATER".to_owned()));
    }
}
