//! DLPack's Python protocol for PyO3 extensions.
//!
//! Consuming: [`from_dlpack`] takes a DLPack capsule (renaming it used, so
//! that it is consumed once), or any object with `__dlpack__`, asked for a
//! versioned capsule first and a legacy one from producers that do not
//! know `max_version`; where the object's type publishes the C exchange
//! API (PyTorch does), the table's entry is called instead when it gives
//! what `__dlpack__` would ([`from_exchange_api`]). [`from_dlpack_with`]
//! passes the consumer's `copy`, `dl_device` and `stream`. The result is a
//! [`ManagedTensor`], validated, whose drop calls the producer's deleter
//! once.
//!
//! Producing: [`DlpackRequest`] applies the keyword rules of `__dlpack__`
//! (`stream`, `max_version`, `dl_device`, `copy`) for a tensor, and wraps an
//! [`Export`] in the capsule asked for; [`to_capsule`] and [`into_capsule`]
//! wrap an export or a managed tensor directly; [`PyOwner`] lets an export
//! keep the Python object whose memory it lends alive. A capsule nobody consumed
//! calls the deleter when it is collected, keeping any exception the
//! consumer has pending.
//!
//! Errors: an [`Error`] or an [`UnknownDataTypeName`] converts into the
//! exception the Python modules raise for the same mistake (`?` does it):
//! the kind its rule names ([`Rule::python`]: `BufferError`, `ValueError`
//! or `TypeError`), `BufferError` for an error no rule states.

use core::ptr::NonNull;
use std::format;
use std::string::{String, ToString};

use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::types::{PyCapsule, PyCapsuleMethods, PyDict, PyTuple};
use pyo3::{ffi, intern, prelude::*};

use crate::rules::{self, python::*, Rule, UnknownDataTypeName};
use crate::{DLDevice, DLDeviceType, Error, Export, ManagedTensor, Raw};

mod exchange;

pub use exchange::from_exchange_api;

/// The exception the Python modules raise for a broken rule.
fn exception(rule: Option<Rule>, message: String) -> PyErr {
    match rule.map(Rule::python) {
        Some("ValueError") => PyValueError::new_err(message),
        Some("TypeError") => PyTypeError::new_err(message),
        _ => PyBufferError::new_err(message),
    }
}

impl From<Error> for PyErr {
    /// The exception of the error's rule, in its words; `BufferError` for
    /// an error no rule states (a slice of the wrong type, a tensor that is
    /// not contiguous).
    fn from(e: Error) -> PyErr {
        exception(e.rule(), e.to_string())
    }
}

impl From<UnknownDataTypeName<'_>> for PyErr {
    /// The exception of [`Rule::DtypeName`] (`ValueError`).
    fn from(e: UnknownDataTypeName<'_>) -> PyErr {
        exception(Some(Rule::DtypeName), e.to_string())
    }
}

/// Takes the tensor `obj` holds or exports: a DLPack capsule, an object
/// whose type has the C exchange API, or any object with `__dlpack__`.
pub fn from_dlpack(obj: &Bound<'_, PyAny>) -> PyResult<ManagedTensor> {
    from_dlpack_with(obj, None, None, None)
}

/// As [`from_dlpack`], with the consumer's keywords for `__dlpack__`:
/// `copy` `Some(true)` asks for a copy made for the consumer (see
/// [`ManagedTensor::is_copied`]), `Some(false)` forbids one; `dl_device`
/// asks for the tensor on that device; `stream` (the array API's: an
/// integer for CUDA and ROCm, a SYCL queue for oneAPI; Python's None is no
/// stream) is the stream the consumer will use, passed to the producer as
/// it is, so that the producer orders its pending work before it.
///
/// The exchange API is used only where it gives what `__dlpack__` would:
/// not with `copy` or `dl_device`, which it has no arguments for, and with
/// a stream only where nothing needs ordering (see [`from_exchange_api`]).
/// A capsule with a stream is a ValueError: its producer has made it
/// already.
pub fn from_dlpack_with(
    obj: &Bound<'_, PyAny>,
    copy: Option<bool>,
    dl_device: Option<DLDevice>,
    stream: Option<&Bound<'_, PyAny>>,
) -> PyResult<ManagedTensor> {
    let stream = stream.filter(|s| !s.is_none());
    if obj.is_exact_instance_of::<PyCapsule>() {
        if stream.is_some() {
            return Err(PyValueError::new_err(
                "a stream cannot go with a capsule, whose producer has made it already: \
                 pass the producer's object",
            ));
        }
        return from_capsule(obj);
    }
    if copy.is_none() && dl_device.is_none() {
        if let Some(t) = from_exchange_api(obj, stream)? {
            return Ok(t);
        }
    }
    from_capsule(&request_capsule(obj, copy, dl_device, stream)?)
}

/// Calls `obj.__dlpack__` once with `max_version` and the consumer's
/// keywords and, if the producer refuses them with a TypeError (one from
/// before DLPack 1.0), once more with the stream alone.
fn request_capsule<'py>(
    obj: &Bound<'py, PyAny>,
    copy: Option<bool>,
    dl_device: Option<DLDevice>,
    stream: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = obj.py();
    let Ok(dlpack) = obj.getattr(intern!(py, "__dlpack__")) else {
        return Err(PyTypeError::new_err(format!(
            "{} does not support the DLPack protocol",
            obj.get_type().name()?
        )));
    };
    let kwargs = PyDict::new(py);
    kwargs.set_item(intern!(py, "max_version"), rules::VERSION)?;
    if let Some(stream) = stream {
        kwargs.set_item(intern!(py, "stream"), stream)?;
    }
    if let Some(copy) = copy {
        kwargs.set_item(intern!(py, "copy"), copy)?;
    }
    if let Some(d) = dl_device {
        kwargs.set_item(intern!(py, "dl_device"), (d.device_type.0, d.device_id))?;
    }
    match dlpack.call((), Some(&kwargs)) {
        Err(e) if e.is_instance_of::<PyTypeError>(py) => {
            let legacy = PyDict::new(py);
            if let Some(stream) = stream {
                legacy.set_item(intern!(py, "stream"), stream)?;
            }
            dlpack.call((), Some(&legacy))
        }
        result => result,
    }
}

/// Consumes a DLPack capsule: renames it used and takes over the tensor.
/// A used capsule is refused with a ValueError; a tensor the checks refuse
/// with a BufferError, its deleter called.
pub fn from_capsule(capsule: &Bound<'_, PyAny>) -> PyResult<ManagedTensor> {
    let Ok(cap) = capsule.cast::<PyCapsule>() else {
        return Err(PyTypeError::new_err(format!(
            "__dlpack__ returned {}, not a capsule",
            capsule.get_type().name()?
        )));
    };
    for (name, used, versioned) in [
        (VERSIONED_CAPSULE, USED_VERSIONED_CAPSULE, true),
        (CAPSULE, USED_CAPSULE, false),
    ] {
        if !cap.is_valid_checked(Some(name)) {
            continue;
        }
        let p = cap.pointer_checked(Some(name))?.as_ptr();
        // SAFETY: a live capsule, and a name that lives forever.
        if unsafe { ffi::PyCapsule_SetName(cap.as_ptr(), used.as_ptr()) } != 0 {
            return Err(PyErr::fetch(capsule.py()));
        }
        // SAFETY: a capsule of this name holds a managed tensor of that
        // form, which the rename has made the caller's.
        let tensor = unsafe {
            if versioned {
                ManagedTensor::from_versioned(p.cast())
            } else {
                ManagedTensor::from_legacy(p.cast())
            }
        };
        return tensor.map_err(PyErr::from);
    }
    if cap.is_valid_checked(Some(USED_VERSIONED_CAPSULE))
        || cap.is_valid_checked(Some(USED_CAPSULE))
    {
        return Err(PyValueError::new_err(
            "this DLPack capsule was already consumed",
        ));
    }
    Err(PyValueError::new_err("not a DLPack capsule"))
}

/// Wraps an export in a capsule: `dltensor_versioned`, or `dltensor` (the
/// legacy form, refused with a BufferError for a read-only tensor).
pub fn to_capsule<'py>(
    py: Python<'py>,
    export: Export,
    versioned: bool,
) -> PyResult<Bound<'py, PyCapsule>> {
    if versioned {
        return capsule(py, Raw::Versioned(NonNull::new(export.into_raw()).unwrap()));
    }
    match export.into_raw_legacy() {
        Ok(m) => capsule(py, Raw::Legacy(NonNull::new(m).unwrap())),
        Err(_) => Err(PyBufferError::new_err(
            "a read-only tensor cannot be exported as an unversioned capsule, \
             which has no read-only flag",
        )),
    }
}

/// Wraps a tensor taken over from a producer in a capsule of its own form,
/// handing it on: the next consumer calls the producer's deleter.
pub fn into_capsule(py: Python<'_>, tensor: ManagedTensor) -> PyResult<Bound<'_, PyCapsule>> {
    capsule(py, tensor.into_raw())
}

fn capsule(py: Python<'_>, raw: Raw) -> PyResult<Bound<'_, PyCapsule>> {
    let (p, name, destructor): (NonNull<core::ffi::c_void>, _, ffi::PyCapsule_Destructor) =
        match raw {
            Raw::Versioned(m) => (m.cast(), VERSIONED_CAPSULE, destroy_versioned),
            Raw::Legacy(m) => (m.cast(), CAPSULE, destroy_legacy),
        };
    // SAFETY: the pointer is the managed tensor the capsule now owns; the
    // destructor calls its deleter unless a consumer renamed the capsule.
    let made = unsafe { PyCapsule::new_with_pointer_and_destructor(py, p, name, Some(destructor)) };
    if made.is_err() {
        // SAFETY: no capsule took the tensor over: it is still ours.
        unsafe { raw.delete() };
    }
    made
}

unsafe extern "C" fn destroy_versioned(capsule: *mut ffi::PyObject) {
    // SAFETY: CPython calls capsule destructors with the GIL.
    unsafe { destroy(capsule, VERSIONED_CAPSULE, |p| Raw::Versioned(p.cast())) }
}

unsafe extern "C" fn destroy_legacy(capsule: *mut ffi::PyObject) {
    // SAFETY: as above.
    unsafe { destroy(capsule, CAPSULE, |p| Raw::Legacy(p.cast())) }
}

/// Calls the deleter of an unconsumed capsule's tensor. Consumers drop
/// capsules with their own exception set (NumPy refusing a dtype): it is
/// kept across the deleter, which may run Python code.
unsafe fn destroy(
    capsule: *mut ffi::PyObject,
    name: &core::ffi::CStr,
    raw: impl FnOnce(NonNull<core::ffi::c_void>) -> Raw,
) {
    // SAFETY: called with the GIL, on a live capsule.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, name.as_ptr()) != 1 {
            return; // consumed: the consumer calls the deleter
        }
        let py = Python::assume_attached();
        let pending = PyErr::take(py);
        if let Some(p) = NonNull::new(ffi::PyCapsule_GetPointer(capsule, name.as_ptr())) {
            raw(p).delete();
        }
        if let Some(e) = pending {
            e.restore(py);
        }
    }
}

/// An owner for [`Export::from_raw_parts`] that keeps a Python object (the
/// one whose memory is exported) alive until the consumer is done. The
/// deleter may run on any thread, with or without the GIL: dropping a
/// `PyOwner` takes the GIL to let go of the object, as NumPy's deleters do;
/// while the interpreter shuts down, PyO3 keeps the release for later.
pub struct PyOwner(Option<Py<PyAny>>);

impl PyOwner {
    /// Keeps `obj` alive while the owner lives.
    pub fn new(obj: Py<PyAny>) -> PyOwner {
        PyOwner(Some(obj))
    }
}

impl Drop for PyOwner {
    fn drop(&mut self) {
        if let Some(obj) = self.0.take() {
            let _ = Python::try_attach(move |_| drop(obj));
        }
    }
}

/// What a `__dlpack__` call asks of a producer, settled by the protocol's
/// keyword rules (the array API's, as NumPy applies them).
#[derive(Clone, Copy, Debug)]
pub struct DlpackRequest {
    versioned: bool,
    copy: bool,
}

impl DlpackRequest {
    // dlgen:checker rust-stream (docs/rules.md lists every checker)
    /// Applies the keywords of `__dlpack__` to a tensor on `device`: a
    /// `stream` is for devices that have streams (ValueError, rule
    /// `stream_refused`, for the capsule's device when it has none);
    /// `dl_device` must be a `(device_type, device_id)` tuple (TypeError)
    /// naming the tensor's device, or the CPU for memory the CPU reads
    /// (BufferError otherwise); a versioned capsule is made when
    /// `max_version` says major 1 or more; `copy` true asks for a copy.
    pub fn new(
        device: DLDevice,
        stream: Option<&Bound<'_, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<&Bound<'_, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<DlpackRequest> {
        let host = device.device_type.is_host_readable();
        let mut target = device;
        if let Some(d) = dl_device.filter(|d| !d.is_none()) {
            let pair = d.cast::<PyTuple>().ok().filter(|t| t.len() == 2);
            let Some(pair) = pair else {
                return Err(PyTypeError::new_err(
                    "dl_device must be a (device_type, device_id) tuple",
                ));
            };
            let (device_type, device_id): (i32, i32) = pair.extract()?;
            let asked = DLDevice {
                device_type: DLDeviceType(device_type),
                device_id,
                ..DLDevice::ZERO
            };
            let cpu = DLDevice {
                device_type: DLDeviceType::kDLCPU,
                ..DLDevice::ZERO
            };
            if asked != device && (asked != cpu || !host) {
                return Err(PyBufferError::new_err(format!(
                    "cannot export to device {}",
                    pair.repr()?
                )));
            }
            target = asked;
        }
        if stream.is_some_and(|s| !s.is_none()) && target.device_type.is_streamless() {
            let rule = Rule::StreamRefused;
            let words = rule
                .format(&[&target.device_type.0, &target.device_id])
                .to_string();
            return Err(exception(Some(rule), words));
        }
        Ok(DlpackRequest {
            versioned: max_version.is_some_and(|(major, _)| major >= 1),
            copy: copy == Some(true),
        })
    }

    /// Whether the consumer gets a versioned capsule.
    pub fn versioned(&self) -> bool {
        self.versioned
    }

    /// Whether the consumer asked for a copy: the export must be of memory
    /// made for it alone.
    pub fn copy(&self) -> bool {
        self.copy
    }

    /// The capsule for the consumer, of `export` (flagged IS_COPIED when a
    /// copy was asked for).
    pub fn capsule<'py>(
        &self,
        py: Python<'py>,
        mut export: Export,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        if self.copy {
            export.set_copied();
        }
        to_capsule(py, export, self.versioned)
    }
}
