//! How often to sample and how many samples to keep.

use core::time::Duration;

/// A sampling policy, shared by every subscriber of one [`crate::Sampler`].
///
/// The defaults follow BuildKit's rules
/// (`executor/resources/sampler.go`; summarised in `docs/data-model.md`,
/// "When samples are taken"): ticks every `min_interval`; a subscriber's
/// interval doubles whenever `interval × max_samples ≤ last − first`; on close
/// its samples are thinned to its final interval. Beyond BuildKit: an optional
/// [`FastStart`] so steps shorter than `min_interval` get data, and an optional
/// baseline sample taken when a subscriber joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Policy {
    /// The shortest interval between two samples of one subscriber (BuildKit: 2 s).
    pub min_interval: Duration,
    /// Target number of periodic samples per subscriber (BuildKit: 10 per step, 20 for the system).
    pub max_samples: u32,
    /// Sample faster during the first moments of a subscription.
    pub fast_start: Option<FastStart>,
    /// Take a sample as soon as a subscriber joins.
    pub baseline: bool,
}

/// Faster sampling during the first `duration` of each subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FastStart {
    /// Interval while fast (e.g. 250 ms).
    pub interval: Duration,
    /// How long after subscribing the fast interval applies (e.g. 2 s).
    pub duration: Duration,
}

/// A policy that cannot work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// An interval is zero.
    #[error("sampling intervals must be greater than zero")]
    ZeroInterval,
    /// `max_samples` is zero.
    #[error("max_samples must be at least 1")]
    ZeroSamples,
    /// The fast-start interval is not shorter than `min_interval`.
    #[error("the fast-start interval must be shorter than min_interval")]
    FastNotFaster,
}

impl Policy {
    /// BuildKit's per-step policy: 2 s, 10 samples, no fast start, no baseline.
    #[must_use]
    pub const fn buildkit_step() -> Policy {
        Policy { min_interval: Duration::from_secs(2), max_samples: 10, fast_start: None, baseline: false }
    }

    /// BuildKit's system policy: 2 s, 20 samples, no fast start, no baseline.
    #[must_use]
    pub const fn buildkit_system() -> Policy {
        Policy { min_interval: Duration::from_secs(2), max_samples: 20, fast_start: None, baseline: false }
    }

    /// stepmon's per-step default: BuildKit's rules plus a baseline sample and
    /// 250 ms sampling during the first 2 s.
    #[must_use]
    pub const fn step() -> Policy {
        Policy {
            baseline: true,
            fast_start: Some(FastStart { interval: Duration::from_millis(250), duration: Duration::from_secs(2) }),
            ..Policy::buildkit_step()
        }
    }

    /// stepmon's system default: BuildKit's system rules plus a baseline sample.
    #[must_use]
    pub const fn system() -> Policy {
        Policy { baseline: true, ..Policy::buildkit_system() }
    }

    /// Checks the policy can work.
    pub fn validate(&self) -> Result<(), PolicyError> {
        if self.min_interval.is_zero() {
            return Err(PolicyError::ZeroInterval);
        }
        if self.max_samples == 0 {
            return Err(PolicyError::ZeroSamples);
        }
        if let Some(fast) = self.fast_start {
            if fast.interval.is_zero() {
                return Err(PolicyError::ZeroInterval);
            }
            if fast.interval >= self.min_interval {
                return Err(PolicyError::FastNotFaster);
            }
        }
        Ok(())
    }
}

impl Default for Policy {
    /// [`Policy::step`].
    fn default() -> Self {
        Policy::step()
    }
}
