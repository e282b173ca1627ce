//! Test hooks, built only with the `test-hooks` feature (the debug addon CI tests): a
//! function that panics, so the Node tests prove a panic becomes a thrown `ACP_INTERNAL`
//! error and the host goes on.

use napi_derive::napi;

use crate::failure::{Result, guard};

/// Panics inside the binding's guard; JS sees an error with code `ACP_INTERNAL`.
#[napi]
pub fn test_panic() -> Result<()> {
    guard(|| panic!("a test hook panicked on purpose"))
}
