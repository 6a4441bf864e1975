//! `docker buildx history export` bundles: `history::read` of any bytes
//! (gzip'd or plain tar, OCI layout, blobs checked against their digests,
//! the record, the status stream, provenance) never panics and never
//! allocates beyond its bounds; every error is one line; and a bundle it
//! reads renders as text and JSON, and as job entries.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stepmon_import::history;

fuzz_target!(|data: &[u8]| {
    match history::read(data) {
        Ok(builds) => {
            let _ = history::render(&builds);
            let json = history::to_json(&builds);
            assert!(json.starts_with('['), "JSON of builds is an array");
            for build in &builds {
                assert_eq!(history::entries(build).len(), build.steps.len());
                assert!(build.critical_path.iter().all(|i| *i < build.steps.len()));
            }
        }
        Err(e) => assert!(!e.to_string().contains('\n'), "a multi-line error: {e}"),
    }
});
