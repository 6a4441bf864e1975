//! What a placed step offers its watch ([`crate::watch`]): its recorder's
//! samples and the memory cgroup that holds it alone.

use jiff::Timestamp;
use stepmon_model::SampleOf;

use super::Prepared;
use crate::watch::Target;

impl Prepared {
    /// The watch's view of this step, started at `start`: the step's own
    /// samples (else the enclosing cgroup's), and its memory cgroup — the
    /// v2 leaf where the memory controller is enabled there, else its v1
    /// memory directory (hybrid and v1-only hosts).
    pub(super) fn watch_target(&self, start: Timestamp) -> Target {
        let samples = match (&self.step_recorder, &self.enclosing_recorder) {
            (Some(recorder), _) => Some((recorder.view(), SampleOf::Step)),
            (None, Some(recorder)) => Some((recorder.view(), SampleOf::Enclosing)),
            (None, None) => None,
        };
        let v2 = self.cgroups.as_ref().map(|c| c.get()).filter(|c| c.enabled.contains(&"memory"));
        let memory_dir = match v2 {
            Some(cgroups) => Some((cgroups.leaf.clone(), false)),
            None => self.v1.as_ref().and_then(|v| v.get().dir_of("memory")).map(|dir| (dir.to_path_buf(), true)),
        };
        Target { start, samples, memory_dir }
    }
}
