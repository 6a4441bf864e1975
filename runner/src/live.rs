//! A running step's samples, forwarded as they are taken to
//! [`crate::StepOptions::live`].

use std::sync::mpsc::Sender;
use std::thread::JoinHandle;

use futures::StreamExt as _;
use stepmon_sampler::Recorder;

use stepmon_model::{LiveSample, SampleOf};

/// Sends the samples `recorder` took so far (the baseline), then each
/// periodic one until the recording is finalised, from a thread of its own;
/// join it after the recording is closed. `None` when nothing is left to
/// forward (the receiver is gone, or the thread could not start).
pub(crate) fn forward(recorder: &Recorder, of: SampleOf, tx: Sender<LiveSample>) -> Option<JoinHandle<()>> {
    // The stream first, then the snapshot: a sample taken between the two is
    // in both, and skipped in the stream by its monotonic time.
    let mut stream = recorder.stream();
    let taken = recorder.snapshot();
    let last = taken.last().map(|t| t.at);
    for timed in taken {
        tx.send(LiveSample::new(of, timed.sample)).ok()?;
    }
    let forwarding = move || {
        futures::executor::block_on(async {
            while let Some(timed) = stream.next().await {
                if last.is_some_and(|last| timed.at <= last) {
                    continue;
                }
                if tx.send(LiveSample::new(of, timed.sample)).is_err() {
                    break;
                }
            }
        });
    };
    std::thread::Builder::new().name("stepmon-live".into()).spawn(forwarding).ok()
}
