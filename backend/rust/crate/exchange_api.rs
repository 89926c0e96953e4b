//! The C exchange API, as a consumer: a producer's type publishes a table
//! of C entry points (DLPackExchangeAPI) under a type attribute, and the
//! table's `managed_tensor_from_py_object_no_sync` exports an object
//! without the Python-level `__dlpack__` round trip.

use core::ptr;

use pyo3::types::{PyCapsule, PyCapsuleMethods};
use pyo3::{intern, prelude::*};

use super::buffer_error;
use crate::rules::{self, python::*};
use crate::{DLPackExchangeAPI, DLPackExchangeAPIHeader, ManagedTensor};

/// Exports `obj` through the exchange API of its type: `None` when the type
/// publishes none, or none of this major version. Nothing is synchronised:
/// the tensor is ready on the producer's current work stream, which for the
/// CPU means ready.
pub fn from_exchange_api(obj: &Bound<'_, PyAny>) -> PyResult<Option<ManagedTensor>> {
    let py = obj.py();
    let Ok(published) = obj.get_type().getattr(intern!(py, EXCHANGE_API_ATTRIBUTE)) else {
        return Ok(None);
    };
    let mut header: *const DLPackExchangeAPIHeader = match EXCHANGE_API_CAPSULE {
        Some(name) => match published.cast::<PyCapsule>() {
            Ok(c) if c.is_valid_checked(Some(name)) => {
                c.pointer_checked(Some(name))?.as_ptr().cast()
            }
            _ => return Ok(None),
        },
        None => match published.extract::<usize>() {
            Ok(address) => address as *const DLPackExchangeAPIHeader,
            Err(_) => return Ok(None),
        },
    };
    // SAFETY: a published table lives as long as the process, and its
    // header, and each of the chain, starts with the version.
    let api = unsafe {
        while !header.is_null() && (*header).version.major != rules::VERSION.0 {
            header = (*header).prev_api;
        }
        if header.is_null() {
            return Ok(None);
        }
        &*header.cast::<DLPackExchangeAPI>()
    };
    let Some(export) = api.managed_tensor_from_py_object_no_sync else {
        return Ok(None);
    };
    let mut out = ptr::null_mut();
    // SAFETY: obj is of the type the table was found on, as the entry needs.
    if unsafe { export(obj.as_ptr().cast(), &mut out) } != 0 {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: the entry hands over an owned tensor.
    unsafe { ManagedTensor::from_versioned(out) }
        .map(Some)
        .map_err(buffer_error)
}
