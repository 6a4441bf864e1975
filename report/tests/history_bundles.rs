//! `docker buildx history export` bundles: the two real ones in
//! `tests/data/buildkit-history/` (see its SOURCE.md) and constructed
//! variants of the layout BuildKit and buildx write.

use stepmon_report::import::history::{self, StepState};

fn data(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/data/buildkit-history/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const TWO_PLATFORM: &str = "docker~build-push-action~2778G2.dockerbuild";
const FAILED: &str = "docker~test-docker-action~go-error~BGI5SX.dockerbuild";

#[test]
fn dump() {
    for f in [TWO_PLATFORM, FAILED] {
        let builds = history::read(&data(f)).unwrap();
        println!("{}", history::render(&builds));
    }
}
