//! A step's whole life: placement (its own cgroup, or the ladder below it),
//! network, sampling, the process, its orphans and leftovers, the final
//! samples, cleanup, and the run document.

mod document;
pub(crate) mod host_view;
mod limits;
mod notices;
mod output;
mod owned;
mod prepare;
mod run;
mod scope;
mod v1_placement;
mod watch_target;

pub(crate) use crate::finished::Finished;
pub(crate) use prepare::prepare;
pub(crate) use prepare::prepare_with;
pub(crate) use run::Step;

use std::time::Duration;

use stepmon_sampler::cgroup::discover;
use stepmon_sampler::{Monitor, Recorder};

use crate::cgroup::enclosing::Enclosing;
use crate::netns::HeldNamespace;
use crate::options::StepOptions;
use crate::signals::Caught;

use owned::{OwnedCgroups, OwnedV1};

use crate::notice::Notice;

/// A step placed and ready to start; see [`prepare()`].
#[derive(Debug)]
pub(crate) struct Prepared {
    options: StepOptions,
    caught: Option<Caught>,
    location: Option<discover::Cgroup2>,
    cgroups: Option<OwnedCgroups>,
    /// Why the step has no cgroup of its own.
    no_cgroup: Option<String>,
    /// The step's cgroups in the v1 hierarchies (hybrid and v1-only hosts).
    v1: Option<OwnedV1>,
    enclosing: Option<Enclosing>,
    namespace: Option<HeldNamespace>,
    monitor: Monitor,
    /// Whether the monitor is this step's alone (shut down at its end).
    own_monitor: bool,
    step_recorder: Option<Recorder>,
    /// How long [`prepare()`] took (the placement before the start call).
    placing: Duration,
    enclosing_recorder: Option<Recorder>,
    notices: Vec<Notice>,
    /// Notices made when asked for (each needs a slow look at the host),
    /// with where each goes among `notices`.
    deferred: Vec<(usize, notices::Deferred)>,
    /// `notices` with those, once asked for.
    all_notices: std::sync::OnceLock<Vec<Notice>>,
    /// The host as placement read it.
    host: std::sync::Arc<host_view::HostView>,
    /// The taskstats listener of the runner (or why there is none); `None`:
    /// the step starts one of its own.
    hub: Option<Result<crate::processes::Hub, String>>,
    /// The runner's thread for periodic procfs readings; `None`: the step
    /// starts one of its own if it needs one.
    ticker: Option<crate::ticker::Ticker>,
    /// What earlier runs may have left that this one cleans up once its
    /// step runs.
    sweeps: Sweeps,
}

/// Where earlier runs' leftovers are looked for: a listing of each
/// hierarchy's directory (some 35 system calls on a hybrid host), made
/// while the step runs rather than on the way to its spawn.
#[derive(Debug, Default)]
struct Sweeps {
    /// The cgroup v2 directory the run's cgroups are made under.
    base: Option<std::path::PathBuf>,
    /// The v1 hierarchies.
    v1: bool,
}

impl Prepared {
    /// What the user should know before the step starts: how it is placed
    /// when it gets no cgroup of its own — typed, each displayed as one
    /// line. (Earlier runs' leftovers are cleaned up once the step runs; a
    /// failure of that is one of [`Finished::messages`](crate::Finished).)
    #[must_use]
    pub(crate) fn notices(&self) -> &[Notice] {
        self.all_notices.get_or_init(|| {
            let mut all = self.notices.clone();
            // From the last: each index is into the eager notices.
            for &(at, notice) in self.deferred.iter().rev() {
                if let Some(notice) = notice.resolve(self) {
                    all.insert(at.min(all.len()), notice);
                }
            }
            all
        })
    }

    /// Whether the step has a cgroup of its own.
    #[must_use]
    pub(crate) fn has_own_cgroup(&self) -> bool {
        self.cgroups.is_some()
    }

    /// Whether a memory cgroup covers the step alone (v2 or v1).
    fn memory_cgroup(&self) -> bool {
        self.cgroups.as_ref().is_some_and(|c| c.get().enabled.contains(&"memory"))
            || self.v1.as_ref().is_some_and(|v| v.get().has("memory"))
    }
}
