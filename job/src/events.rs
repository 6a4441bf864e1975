//! A step's events appended to its job record as they happen
//! ([`stepmon_model::job::StepEventRecord`]), from whatever thread sees them,
//! beside its [`crate::JobWriter`]'s lines.

use std::sync::{Arc, Mutex};

use stepmon_model::event::StepEvent;
use stepmon_model::job::{Record, StepEventRecord};
use stepmon_outfile::Appender;

use crate::error::JobError;
use crate::stop::{Appended, Shared, lock};

/// Said once, with why, when an event's append stops the record.
type OnStop = Box<dyn FnOnce(&JobError) + Send>;

/// Appends a step's events to its job record ([`crate::JobWriter::events`]):
/// each a `stepEvent` line in one `write(2)` on a descriptor of its own.
/// It shares the record's stop with the writer: once any line of the step
/// could not be appended whole, neither appends more (so at most that line
/// is torn), and the writer's [`crate::EndReport::stopped`] says why.
pub struct EventAppender {
    file: Appender,
    step: String,
    shared: Arc<Mutex<Shared>>,
    on_stop: Option<OnStop>,
}

impl std::fmt::Debug for EventAppender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventAppender").field("path", &self.file.path()).field("step", &self.step).finish()
    }
}

impl EventAppender {
    pub(crate) fn new(file: Appender, step: String, shared: Arc<Mutex<Shared>>, on_stop: OnStop) -> EventAppender {
        EventAppender { file, step, shared, on_stop: Some(on_stop) }
    }

    /// Appends `event` as a `stepEvent` line of the step, unless its
    /// record has stopped; the first failure stops it (for the writer too)
    /// and is said through the `on_stop` given to
    /// [`crate::JobWriter::events`].
    pub fn append(&mut self, event: StepEvent) -> Appended {
        let shared = Arc::clone(&self.shared);
        let mut shared = lock(&shared);
        if shared.stopped {
            return Appended::AlreadyStopped;
        }
        let line = Record::StepEvent(StepEventRecord::new(self.step.clone(), event));
        let path = self.file.path().to_owned();
        let written = serde_json::to_vec(&line)
            .map_err(|source| JobError::Encode { path: path.clone(), source })
            .and_then(|mut bytes| {
                bytes.push(b'\n');
                self.file.append(&bytes).map_err(|source| JobError::Append { path, source })
            });
        match written {
            Ok(()) => Appended::Written,
            Err(why) => {
                if let Some(say) = self.on_stop.take() {
                    say(&why);
                }
                shared.stopped = true;
                shared.why = Some(why);
                Appended::Stopped
            }
        }
    }
}
