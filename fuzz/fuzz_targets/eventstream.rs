//! Fuzz target `eventstream`: see `tests/common/fuzz_checks.rs` for what it checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/common/fuzz_checks.rs"]
mod checks;

fuzz_target!(|data: &[u8]| checks::eventstream(data));
