// The harness of docs/rust.md's #[pyfunction]: a module of an extension
// that exports it (cargo check: an extension links against Python only
// when Python loads it).
use pyo3::prelude::*;

// SNIPPET

#[pymodule]
fn snippet(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(total, m)?)
}

fn main() {}
