//! Saved fuzz inputs, replayed through the fuzz targets' own checks
//! (`tests/common/fuzz_checks.rs`): every input in
//! `tests/fixtures/fuzz/<target>/`, one test each. A crash that
//! `scripts/fuzz` finds is copied here (from `fuzz/artifacts/<target>/`)
//! before it is fixed; hand-made hostile inputs live here too.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "common/fuzz_checks.rs"]
mod checks;

use libtest_mimic::{Arguments, Trial};

fn main() {
    let args = Arguments::from_args();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz");
    let mut trials = Vec::new();
    for (target, check) in [
        ("sse", checks::sse as fn(&[u8])),
        ("stream", checks::stream),
        ("response", checks::response),
        ("request", checks::request),
        ("partial", checks::partial),
        ("eventstream", checks::eventstream),
    ] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(target))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for file in files {
            let name = format!("{target}/{}", file.file_name().unwrap().to_string_lossy());
            trials.push(Trial::test(name, move || {
                check(&std::fs::read(&file).unwrap());
                Ok(())
            }));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
