//! The C exchange API, as a consumer: a producer's type publishes a table
//! of C entry points (DLPackExchangeAPI) under a type attribute, and the
//! table's `managed_tensor_from_py_object_no_sync` exports an object
//! without the Python-level `__dlpack__` round trip.
//!
//! The table is a faster road to what `__dlpack__` gives, and is taken only
//! where it cannot answer differently, by the rules the Python modules
//! follow (docs/exchange-api-consumer.md):
//! - a table serves instances of the type that publishes it in its own
//!   `__dict__` only: a subclass may change what `__dlpack__` does or
//!   refuses without publishing a table of its own;
//! - when the entry fails, its error is dropped and `__dlpack__` answers,
//!   with the producer's own refusal;
//! - PyTorch's entry exports what its `__dlpack__` refuses (tensors that
//!   require grad, conjugate views with the bit unapplied): instances of
//!   `torch.Tensor` and its subclasses that require grad (element types
//!   other than integers and bool) or are conjugate views (complex) are
//!   given back and go to `__dlpack__`;
//! - the entry does not synchronise: its tensor is kept on the CPU with no
//!   stream, and on another device only for a consumer asking for no
//!   synchronisation (stream -1) or on the producer's current work stream.

use core::ffi::c_void;
use core::ptr::{self, NonNull};

use pyo3::sync::PyOnceLock;
use pyo3::types::{PyCapsule, PyCapsuleMethods, PyDict, PyInt, PyType};
use pyo3::{intern, prelude::*};

use crate::rules::{self, python::*};
use crate::{
    DLDataTypeCode, DLManagedTensorVersioned, DLPackExchangeAPI, DLPackExchangeAPIHeader,
    ManagedTensor, Raw,
};

/// Exports `obj` through the C exchange API of its type, where that gives
/// what `obj.__dlpack__(stream=stream)` would: `None` where `__dlpack__`
/// must answer instead (no table of this major version on the type itself,
/// an entry that fails, a tensor PyTorch's `__dlpack__` would refuse, or
/// one the consumer's stream would have to wait for). A tensor the checks
/// refuse is an error, its deleter called.
pub fn from_exchange_api(
    obj: &Bound<'_, PyAny>,
    stream: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<ManagedTensor>> {
    let py = obj.py();
    let table = consumer_table(&obj.get_type());
    let Some(api) = table.api else {
        return Ok(None);
    };
    let Some(export) = api.managed_tensor_from_py_object_no_sync else {
        return Ok(None);
    };
    let mut out = ptr::null_mut();
    // SAFETY: obj is an instance of the type the table was found on, as the
    // entry needs.
    let status = unsafe { export(obj.as_ptr().cast(), &mut out) };
    let Some(m) = NonNull::new(out).filter(|_| status == 0) else {
        drop(PyErr::take(py)); // __dlpack__ makes the producer's refusal
        return Ok(None);
    };
    // SAFETY: the entry handed over an owned tensor, read in place.
    let keep =
        unsafe { !(table.check_torch && torch_would_refuse(obj, m)) && fits(py, api, m, stream) };
    if !keep {
        // SAFETY: ours, and not used after.
        unsafe { Raw::Versioned(m).delete() };
        return Ok(None);
    }
    // SAFETY: as above.
    unsafe { ManagedTensor::from_versioned(m.as_ptr()) }
        .map(Some)
        .map_err(PyErr::from)
}

/// The table instances of a type are exported through, and whether they
/// are PyTorch's.
struct Table {
    api: Option<&'static DLPackExchangeAPI>,
    check_torch: bool,
}

/// Tags the address of a PyTorch type's table (tables are pointer-aligned).
const CHECK_TORCH: usize = 1;

/// The table of each type seen, as a Python integer: its address (0 for
/// none) tagged with [`CHECK_TORCH`]. A type's table is looked up once, as
/// the protocol allows.
static TABLES: PyOnceLock<Py<PyDict>> = PyOnceLock::new();

/// The cache holds at most this many types (the Cython module's bound).
const TABLES_KEPT: usize = 1024;

fn consumer_table(ty: &Bound<'_, PyType>) -> Table {
    let py = ty.py();
    let tables = TABLES.get_or_init(py, || PyDict::new(py).unbind()).bind(py);
    let cached = tables.get_item(ty).ok().flatten();
    let tagged = match cached.and_then(|c| c.extract::<usize>().ok()) {
        Some(tagged) => tagged,
        None => {
            let tagged = lookup_table(ty);
            if tables.len() < TABLES_KEPT {
                let _ = tables.set_item(ty, tagged);
            }
            tagged
        }
    };
    let address = tagged & !CHECK_TORCH;
    Table {
        // SAFETY: 0 or a published table, which lives as long as the process.
        api: unsafe { (address as *const DLPackExchangeAPI).as_ref() },
        check_torch: tagged & CHECK_TORCH != 0,
    }
}

/// The tagged table for instances of `ty` (see the module's rules), 0 for
/// none.
fn lookup_table(ty: &Bound<'_, PyType>) -> usize {
    let py = ty.py();
    let names = [
        Some(EXCHANGE_API_ATTRIBUTE),
        PREVIOUS_EXCHANGE_API_ATTRIBUTE,
    ];
    let Ok(own) = ty.getattr(intern!(py, "__dict__")) else {
        return 0;
    };
    if !names
        .iter()
        .flatten()
        .any(|n| own.contains(*n).unwrap_or(false))
    {
        return 0;
    }
    let mut header = names
        .iter()
        .flatten()
        .filter_map(|n| ty.getattr(*n).ok())
        .map(|attr| table_of(&attr))
        .find(|h| !h.is_null())
        .unwrap_or(ptr::null());
    // SAFETY: a published table lives as long as the process, and its
    // header, and each of the chain, starts with the version.
    unsafe {
        while !header.is_null() && (*header).version.major != rules::VERSION.0 {
            header = (*header).prev_api;
        }
    }
    if header.is_null() {
        return 0;
    }
    let torch = ty.mro().iter().any(|base| {
        base.cast::<PyType>().is_ok_and(|b| {
            b.module().is_ok_and(|m| m == "torch") && b.qualname().is_ok_and(|q| q == "Tensor")
        })
    });
    if torch {
        header as usize | CHECK_TORCH
    } else {
        header as usize
    }
}

/// The table an exchange-API attribute points to: a capsule of the
/// release's name, or an integer address (DLPack 1.2); NULL for anything
/// else.
fn table_of(attr: &Bound<'_, PyAny>) -> *const DLPackExchangeAPIHeader {
    if attr.is_exact_instance_of::<PyInt>() {
        return attr.extract::<usize>().unwrap_or(0) as *const _;
    }
    match (EXCHANGE_API_CAPSULE, attr.cast::<PyCapsule>()) {
        (Some(name), Ok(c)) if c.is_valid_checked(Some(name)) => c
            .pointer_checked(Some(name))
            .map_or(ptr::null(), |p| p.as_ptr().cast_const().cast()),
        _ => ptr::null(),
    }
}

/// Whether PyTorch's `__dlpack__` refuses what its table gave: a tensor
/// that requires grad (any element type but integers and bool, which
/// cannot) or a conjugate view (complex). A check that raises (a subclass
/// that allows only DLPack calls) counts as a refusal.
///
/// # Safety
/// `m` is the live tensor the table gave for `x`.
unsafe fn torch_would_refuse(x: &Bound<'_, PyAny>, m: NonNull<DLManagedTensorVersioned>) -> bool {
    // SAFETY: the caller's.
    let code = DLDataTypeCode(unsafe { (*m.as_ptr()).dl_tensor.dtype.code });
    if [
        DLDataTypeCode::kDLInt,
        DLDataTypeCode::kDLUInt,
        DLDataTypeCode::kDLBool,
    ]
    .contains(&code)
    {
        return false; // no gradient, no conjugate bit
    }
    let py = x.py();
    let refused = x
        .getattr(intern!(py, "requires_grad"))
        .and_then(|g| g.is_truthy())
        .and_then(|grad| {
            if grad || code != DLDataTypeCode::kDLComplex {
                return Ok(grad);
            }
            x.call_method0(intern!(py, "is_conj"))?.is_truthy()
        });
    refused.unwrap_or(true)
}

// dlgen:checker rust-exchange-stream (docs/rules.md lists every checker)
/// Whether the tensor the no-sync entry gave is ordered for the consumer's
/// stream, as `__dlpack__(stream=...)` would give it: on a device without
/// streams (the CPU) for a consumer with no stream; on another device for one asking for no
/// synchronisation (-1) or on the producer's current work stream for the
/// device (an integer equal to what `current_work_stream` reports).
///
/// # Safety
/// `m` is the live tensor the table gave.
unsafe fn fits(
    py: Python<'_>,
    api: &DLPackExchangeAPI,
    m: NonNull<DLManagedTensorVersioned>,
    stream: Option<&Bound<'_, PyAny>>,
) -> bool {
    // SAFETY: the caller's.
    let m = unsafe { m.as_ref() };
    if m.version.major != rules::VERSION.0 {
        return true; // the checks refuse it, and say why
    }
    let device = m.dl_tensor.device;
    let stream = stream.filter(|s| !s.is_none());
    if device.device_type.is_streamless() {
        return stream.is_none();
    }
    // None: __dlpack__ synchronises as its producer takes None.
    let Some(stream) = stream.filter(|s| s.is_exact_instance_of::<PyInt>()) else {
        return false;
    };
    if stream.eq(-1).unwrap_or(false) {
        return true;
    }
    let Some(current_work_stream) = api.current_work_stream else {
        return false;
    };
    let mut current: *mut c_void = ptr::null_mut();
    // SAFETY: the entry writes the stream to current.
    if unsafe { current_work_stream(device.device_type, device.device_id, &mut current) } != 0 {
        drop(PyErr::take(py));
        return false;
    }
    stream.eq(current as usize).unwrap_or(false)
}
