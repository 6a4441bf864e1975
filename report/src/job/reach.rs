//! The steps whose reach (where their readings can count) meets a span of
//! time, found without looking at every step: a job of 10,000 compiler
//! actions asks once per step, and a look at every step each time was a
//! third of its report's time.

/// Steps' reaches `(start, end)`, ordered by start, with the latest end of
/// each range of that order in a tree (a segment tree of maxima), so that
/// the ranges that end too early are skipped whole.
pub(super) struct Reaches {
    /// Step indices, by the start of their reach.
    order: Vec<usize>,
    /// Their starts, in that order.
    starts: Vec<f64>,
    /// The latest end of each node's range of `order`: the root at 1, a
    /// node's children at 2n and 2n + 1, the leaves from `leaves` on.
    latest: Vec<f64>,
    /// How many leaves: `order`'s length rounded up to a power of two.
    leaves: usize,
}

impl Reaches {
    /// `reaches`, the `(start, end)` of each step, indexed. A start is a
    /// number (never NaN); an end may be anything (`-inf`: it reaches
    /// nowhere).
    pub(super) fn new(reaches: &[(f64, f64)]) -> Reaches {
        let mut order: Vec<usize> = (0..reaches.len()).collect();
        order.sort_by(|&a, &b| reaches[a].0.total_cmp(&reaches[b].0));
        let starts = order.iter().map(|&i| reaches[i].0).collect();
        let leaves = order.len().next_power_of_two();
        let mut latest = vec![f64::NEG_INFINITY; 2 * leaves];
        for (at, &i) in order.iter().enumerate() {
            latest[leaves + at] = reaches[i].1;
        }
        for node in (1..leaves).rev() {
            latest[node] = latest[2 * node].max(latest[2 * node + 1]);
        }
        Reaches { order, starts, latest, leaves }
    }

    /// Adds to `out` every step whose reach starts at `to` or before and
    /// ends at `from` or after, in no particular order.
    pub(super) fn meeting(&self, from: f64, to: f64, out: &mut Vec<usize>) {
        let started = self.starts.partition_point(|s| *s <= to);
        self.collect(1, 0, self.leaves, started, from, out);
    }

    /// The steps of node `node` (the range `lo..hi` of `order`) among the
    /// first `started` that end at `from` or after.
    fn collect(&self, node: usize, lo: usize, hi: usize, started: usize, from: f64, out: &mut Vec<usize>) {
        // A NaN end reaches nowhere (it is not `>= from`), and a node's
        // maximum is NaN only when all its ends are.
        let reaches = self.latest[node] >= from;
        if lo >= started || !reaches {
            return;
        }
        if hi - lo == 1 {
            out.push(self.order[lo]);
            return;
        }
        let middle = lo + (hi - lo) / 2;
        self.collect(2 * node, lo, middle, started, from, out);
        self.collect(2 * node + 1, middle, hi, started, from, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_steps_found_are_those_a_look_at_every_step_finds() {
        // Reaches of every shape: sequential, nested in a long one,
        // overlapping, empty (-inf end), shared starts; pseudo-random.
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % 1000) as f64 / 10.0
        };
        for n in [0usize, 1, 2, 3, 7, 64, 100] {
            let mut reaches: Vec<(f64, f64)> = (0..n)
                .map(|i| match i % 5 {
                    0 => (0.0, 100.0),
                    1 => (next(), f64::NEG_INFINITY),
                    _ => {
                        let start = next();
                        (start, start + next() / 10.0)
                    }
                })
                .collect();
            if n > 3 {
                reaches[3] = reaches[2];
            }
            let index = Reaches::new(&reaches);
            for _ in 0..200 {
                let (a, b) = (next(), next());
                let (from, to) = (a.min(b), a.max(b));
                let mut found = Vec::new();
                index.meeting(from, to, &mut found);
                found.sort_unstable();
                let every: Vec<usize> = (0..n).filter(|&i| reaches[i].0 <= to && reaches[i].1 >= from).collect();
                assert_eq!(found, every, "n {n}, [{from}, {to}]");
            }
            let mut none = Vec::new();
            index.meeting(f64::INFINITY, f64::NEG_INFINITY, &mut none);
            assert!(none.is_empty());
        }
    }
}
