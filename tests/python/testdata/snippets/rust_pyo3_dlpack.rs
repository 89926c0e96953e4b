// The harness of docs/rust.md's __dlpack__: a method of a frozen #[pyclass]
// over memory it owns elsewhere (cargo check: an extension links against
// Python only when Python loads it).
use std::ffi::c_void;

use dlpack::python::{DlpackRequest, PyOwner};
use dlpack::{DLDataType, DLDevice, DLDeviceType, Export, Layout};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

const CPU: DLDevice = DLDevice {
    device_type: DLDeviceType::kDLCPU,
    device_id: 0,
};

#[pyclass(frozen)]
struct Array {
    ptr: *mut c_void,
    dtype: DLDataType,
    shape: Vec<i64>,
}

// SAFETY: the memory at ptr is the Array's own, for as long as it lives.
unsafe impl Send for Array {}
unsafe impl Sync for Array {}

#[pymethods]
impl Array {
    // SNIPPET
}

fn main() {}
