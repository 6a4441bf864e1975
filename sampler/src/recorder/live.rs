//! A recording's live samples, as a stream.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use stepmon_model::sample::StepSample;

use crate::sampler::SampleStream;
use crate::schedule::Timed;

/// Live samples of a [`Recorder`](super::Recorder); see
/// [`Recorder::stream`](super::Recorder::stream).
#[derive(Debug)]
pub struct LiveSamples {
    inner: Option<SampleStream<StepSample>>,
}

impl From<Option<SampleStream<StepSample>>> for LiveSamples {
    fn from(inner: Option<SampleStream<StepSample>>) -> Self {
        LiveSamples { inner }
    }
}

impl Stream for LiveSamples {
    type Item = Timed<StepSample>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.inner.as_mut() {
            Some(stream) => Pin::new(stream).poll_next(cx),
            None => Poll::Ready(None),
        }
    }
}
