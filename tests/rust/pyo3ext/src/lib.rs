//! A Python extension for the tests of the generated crate's PyO3 glue:
//! `RustArray` lends memory Rust owns through `__dlpack__` (counting the
//! exports made and the owners released), `DeviceArray` is a device tensor
//! whose type publishes the C exchange API, and `take` and `take_with`
//! take any DLPack producer's tensor (NumPy's, PyTorch's) into Rust, which
//! reads and writes it in place and gives it back when dropped.

use std::ffi::{c_int, c_void};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicUsize, Ordering};

use dlpack::python::{self as dl, DlpackRequest};
use dlpack::{
    DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLManagedTensorVersioned,
    DLPackExchangeAPI, DLPackExchangeAPIHeader, DLPackVersion, Export, Layout, ManagedTensor,
};
use pyo3::exceptions::{PyBufferError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyDict, PyList};

static EXPORTED: AtomicUsize = AtomicUsize::new(0);
static RELEASED: AtomicUsize = AtomicUsize::new(0);

const CPU: DLDevice = DLDevice {
    device_type: DLDeviceType::kDLCPU,
    device_id: 0,
    ..DLDevice::ZERO
};

/// What an export keeps alive: counted when made, and when the consumer
/// (or a failed export) lets it go.
struct Lent<T>(T);

impl<T> Lent<T> {
    fn new(owner: T) -> Self {
        EXPORTED.fetch_add(1, Ordering::SeqCst);
        Lent(owner)
    }
}

impl<T> Drop for Lent<T> {
    fn drop(&mut self) {
        RELEASED.fetch_add(1, Ordering::SeqCst);
    }
}

impl AsMut<[u8]> for Lent<Vec<u8>> {
    fn as_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

/// Elements Rust owns: float32, or bfloat16 (to meet a consumer that
/// refuses it).
#[pyclass(frozen, weakref)]
struct RustArray {
    words: *mut u32, // a boxed slice of nwords: aligned for any element here
    nwords: usize,
    nbytes: usize, // of the elements
    shape: Vec<i64>,
    strides: Option<Vec<i64>>, // as given, checked by the export
    dtype: DLDataType,
    read_only: bool,
}

// SAFETY: the memory is shared with consumers by design; the tests touch
// it from one thread at a time.
unsafe impl Send for RustArray {}
// SAFETY: as above.
unsafe impl Sync for RustArray {}

impl Drop for RustArray {
    fn drop(&mut self) {
        // SAFETY: made by Box::into_raw in new, of nwords words.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.words, self.nwords)) });
    }
}

impl RustArray {
    fn floats(&self) -> PyResult<*mut f32> {
        if self.dtype != <f32 as dlpack::Element>::DTYPE {
            return Err(PyValueError::new_err("not a float32 array"));
        }
        Ok(self.words.cast())
    }
}

#[pymethods]
impl RustArray {
    #[new]
    #[pyo3(signature = (values, *, readonly = false, dtype = "float32", strides = None))]
    fn new(
        values: Vec<f32>,
        readonly: bool,
        dtype: &str,
        strides: Option<Vec<i64>>,
    ) -> PyResult<Self> {
        let dtype = DLDataType::parse(dtype)?;
        let bytes: Vec<u8> = if dtype == <f32 as dlpack::Element>::DTYPE {
            values.iter().flat_map(|v| v.to_ne_bytes()).collect()
        } else if dtype.code == DLDataTypeCode::kDLBfloat.0 && dtype.lanes == 1 {
            values
                .iter()
                .flat_map(|v| ((v.to_bits() >> 16) as u16).to_ne_bytes())
                .collect()
        } else {
            return Err(PyValueError::new_err(format!("no {dtype} RustArray")));
        };
        let words: Box<[u32]> = bytes
            .chunks(4)
            .map(|c| {
                let mut w = [0u8; 4];
                w[..c.len()].copy_from_slice(c);
                u32::from_ne_bytes(w)
            })
            .collect();
        let nwords = words.len();
        Ok(RustArray {
            words: Box::into_raw(words).cast(),
            nwords,
            nbytes: bytes.len(),
            shape: vec![values.len() as i64],
            strides,
            dtype,
            read_only: readonly,
        })
    }

    /// The elements as Rust sees them now.
    fn tolist(&self) -> PyResult<Vec<f32>> {
        let p = self.floats()?;
        // SAFETY: shape[0] floats at p; nothing writes them during the call.
        Ok(unsafe { std::slice::from_raw_parts(p, self.shape[0] as usize) }.to_vec())
    }

    /// Writes value to every element, from Rust.
    fn fill(&self, value: f32) -> PyResult<()> {
        let p = self.floats()?;
        for i in 0..self.shape[0] as usize {
            // SAFETY: as in tolist.
            unsafe { p.add(i).write(value) };
        }
        Ok(())
    }

    #[pyo3(signature = (*, stream = None, max_version = None, dl_device = None, copy = None))]
    fn __dlpack__<'py>(
        slf: &Bound<'py, Self>,
        stream: Option<Bound<'py, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let this = slf.get();
        let request =
            DlpackRequest::new(CPU, stream.as_ref(), max_version, dl_device.as_ref(), copy)?;
        let mut layout = Layout::new(this.dtype, &this.shape);
        layout.strides = this.strides.as_deref();
        let export = if request.copy() {
            // SAFETY: nbytes bytes at words, read during the call.
            let copied =
                unsafe { std::slice::from_raw_parts(this.words.cast::<u8>(), this.nbytes) }
                    .to_vec();
            Export::from_mut_owner(Lent::new(copied), layout)
        } else {
            // SAFETY: the owner keeps the RustArray, and so its memory, alive.
            unsafe {
                Export::from_raw_parts(
                    Lent::new(dl::PyOwner::new(slf.clone().into_any().unbind())),
                    this.words.cast(),
                    layout,
                    this.read_only,
                )
            }
        }?;
        request.capsule(slf.py(), export)
    }

    fn __dlpack_device__(&self) -> (i32, i32) {
        (CPU.device_type.0, CPU.device_id)
    }
}

/// The exports RustArray and DeviceArray have made (their owners).
#[pyfunction]
fn exported() -> usize {
    EXPORTED.load(Ordering::SeqCst)
}

/// The exports consumers have let go of (each owner dropped once).
#[pyfunction]
fn released() -> usize {
    RELEASED.load(Ordering::SeqCst)
}

/// A tensor Rust took from a producer.
#[pyclass]
struct Imported {
    tensor: Option<ManagedTensor>,
    via: &'static str,
}

impl Imported {
    fn get(&self) -> PyResult<&ManagedTensor> {
        self.tensor
            .as_ref()
            .ok_or_else(|| PyValueError::new_err("closed"))
    }
}

/// Reads or writes every element as f64, whatever the element type (f64
/// among them, where the casts do nothing: the methods allow that).
macro_rules! by_type {
    ($t:expr, $slice:ident, |$s:ident| $body:expr) => {{
        let t = $t;
        let dtype = t.dtype();
        // SAFETY: the tests let nothing else touch the memory meanwhile.
        unsafe {
            if dtype == <f32 as dlpack::Element>::DTYPE {
                let $s = t.$slice::<f32>()?;
                $body
            } else if dtype == <f64 as dlpack::Element>::DTYPE {
                let $s = t.$slice::<f64>()?;
                $body
            } else if dtype == <i64 as dlpack::Element>::DTYPE {
                let $s = t.$slice::<i64>()?;
                $body
            } else {
                return Err(PyValueError::new_err(format!("dtype {dtype:?}")));
            }
        }
    }};
}

#[pymethods]
impl Imported {
    #[getter]
    fn shape(&self) -> PyResult<Vec<i64>> {
        Ok(self.get()?.shape().to_vec())
    }

    #[getter]
    fn strides(&self) -> PyResult<Vec<i64>> {
        Ok(self.get()?.strides().to_vec())
    }

    #[getter]
    fn read_only(&self) -> PyResult<bool> {
        Ok(self.get()?.is_read_only())
    }

    #[getter]
    fn copied(&self) -> PyResult<bool> {
        Ok(self.get()?.is_copied())
    }

    /// The producer's version, None for a legacy tensor.
    #[getter]
    fn version(&self) -> PyResult<Option<(u32, u32)>> {
        Ok(self.get()?.version().map(|v| (v.major, v.minor)))
    }

    /// How the tensor came: "capsule", "exchange_api" or "__dlpack__".
    #[getter]
    fn via(&self) -> &'static str {
        self.via
    }

    #[getter]
    fn data_ptr(&self) -> PyResult<usize> {
        Ok(self.get()?.data_ptr() as usize)
    }

    /// The element type's name: `float32`.
    #[getter]
    fn dtype(&self) -> PyResult<String> {
        Ok(self.get()?.dtype().to_string())
    }

    #[getter]
    fn byte_offset(&self) -> PyResult<u64> {
        Ok(self.get()?.byte_offset())
    }

    /// (device_type, device_id).
    #[getter]
    fn device(&self) -> PyResult<(i32, i32)> {
        let d = self.get()?.device();
        Ok((d.device_type.0, d.device_id))
    }

    #[getter]
    fn flags(&self) -> PyResult<u64> {
        Ok(self.get()?.flags())
    }

    /// The elements' bytes in row-major order, of any element type whose
    /// elements are whole bytes (packed sub-byte ones if contiguous): a
    /// BufferError for memory the CPU cannot read.
    fn tobytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let t = self.get()?;
        let dtype = t.dtype();
        let bits = usize::from(dtype.bits) * usize::from(dtype.lanes);
        if t.is_contiguous() || bits % 8 != 0 || !t.is_host_accessible() {
            // SAFETY: the tests let nothing write the memory meanwhile.
            return Ok(PyBytes::new(py, unsafe { t.as_bytes() }?));
        }
        let (size, shape, strides) = (bits / 8, t.shape(), t.strides());
        let mut bytes = Vec::with_capacity(t.len() * size);
        let mut index = vec![0i64; shape.len()];
        for _ in 0..t.len() {
            let at: i64 = index.iter().zip(strides).map(|(i, s)| i * s).sum();
            let p = t
                .data_ptr()
                .cast::<u8>()
                .wrapping_offset(at as isize * size as isize);
            // SAFETY: a validated tensor's element, in memory the CPU reads.
            bytes.extend_from_slice(unsafe { std::slice::from_raw_parts(p, size) });
            for d in (0..index.len()).rev() {
                index[d] += 1;
                if index[d] < shape[d] {
                    break;
                }
                index[d] = 0;
            }
        }
        Ok(PyBytes::new(py, &bytes))
    }

    #[allow(clippy::unnecessary_cast)]
    fn tolist(&self) -> PyResult<Vec<f64>> {
        by_type!(self.get()?, as_slice, |s| Ok(s
            .iter()
            .map(|&x| x as f64)
            .collect()))
    }

    #[allow(clippy::unnecessary_cast)]
    fn fill(&mut self, value: f64) -> PyResult<()> {
        let t = self
            .tensor
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("closed"))?;
        by_type!(t, as_mut_slice, |s| {
            for x in s.iter_mut() {
                *x = value as _;
            }
            Ok(())
        })
    }

    /// Gives the tensor back to its producer now.
    fn close(&mut self) {
        self.tensor = None;
    }

    /// Hands the tensor on, in a capsule, to the next consumer.
    fn hand_on<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let t = self
            .tensor
            .take()
            .ok_or_else(|| PyValueError::new_err("closed"))?;
        dl::into_capsule(py, t)
    }
}

/// Takes obj's tensor: a capsule, through the C exchange API of obj's type
/// where that answers as `__dlpack__` would, else through `__dlpack__`.
#[pyfunction]
fn take(obj: &Bound<'_, PyAny>) -> PyResult<Imported> {
    if obj.is_exact_instance_of::<PyCapsule>() {
        return Ok(Imported {
            tensor: Some(dl::from_capsule(obj)?),
            via: "capsule",
        });
    }
    if let Some(t) = dl::from_exchange_api(obj, None)? {
        return Ok(Imported {
            tensor: Some(t),
            via: "exchange_api",
        });
    }
    Ok(Imported {
        tensor: Some(dl::from_dlpack(obj)?),
        via: "__dlpack__",
    })
}

/// Takes obj's tensor with from_dlpack_with and the consumer's keywords.
#[pyfunction]
#[pyo3(signature = (obj, *, copy = None, device = None, stream = None))]
fn take_with(
    obj: &Bound<'_, PyAny>,
    copy: Option<bool>,
    device: Option<(i32, i32)>,
    stream: Option<&Bound<'_, PyAny>>,
) -> PyResult<Imported> {
    let device = device.map(|(t, id)| DLDevice {
        device_type: DLDeviceType(t),
        device_id: id,
        ..DLDevice::ZERO
    });
    Ok(Imported {
        tensor: Some(dl::from_dlpack_with(obj, copy, device, stream)?),
        via: "from_dlpack",
    })
}

// --- A device tensor whose type publishes the C exchange API --------------------------

/// The stream DeviceArray's table reports as current for (kDLCUDA, 0).
const CURRENT_STREAM: usize = 0x5eed;

/// DeviceArray's made-up device address: nothing reads it.
const DEVICE_DATA: usize = 0x10000;

/// The exports DeviceArray's table has made.
static TABLE_EXPORTS: AtomicUsize = AtomicUsize::new(0);

/// Four float32 elements on CUDA device `device_id` (of `device_type`,
/// kDLCUDA unless given), at an address nothing reads. Its type publishes the C exchange API (a table whose current
/// work stream for (kDLCUDA, 0) is CURRENT_STREAM, for any other device
/// an error); `__dlpack__` records the keywords of each call in `calls`.
/// `legacy_only`: `__dlpack__` refuses `max_version` with a TypeError, as
/// producers from before DLPack 1.0 do; `refuse`: the table's entry fails
/// with a RuntimeError.
#[pyclass(frozen, subclass)]
struct DeviceArray {
    device_type: DLDeviceType,
    device_id: i32,
    legacy_only: bool,
    refuse: bool,
    calls: Py<PyList>,
}

impl DeviceArray {
    fn export(&self) -> PyResult<Export> {
        let layout = Layout {
            device: DLDevice {
                device_type: self.device_type,
                device_id: self.device_id,
                ..DLDevice::ZERO
            },
            ..Layout::of::<f32>(&[4])
        };
        // SAFETY: nothing reads the memory; the owner counts the release.
        let export = unsafe {
            Export::from_raw_parts(Lent::new(()), DEVICE_DATA as *mut c_void, layout, false)
        }?;
        Ok(export)
    }
}

#[pymethods]
impl DeviceArray {
    #[new]
    #[pyo3(signature = (device_id = 0, *, device_type = DLDeviceType::kDLCUDA.0, legacy_only = false, refuse = false))]
    fn new(
        py: Python<'_>,
        device_id: i32,
        device_type: i32,
        legacy_only: bool,
        refuse: bool,
    ) -> Self {
        DeviceArray {
            device_type: DLDeviceType(device_type),
            device_id,
            legacy_only,
            refuse,
            calls: PyList::empty(py).unbind(),
        }
    }

    /// The keywords of each `__dlpack__` call, in order.
    #[getter]
    fn calls(&self, py: Python<'_>) -> Py<PyList> {
        self.calls.clone_ref(py)
    }

    #[classattr]
    fn __dlpack_c_exchange_api__(py: Python<'_>) -> PyResult<Bound<'_, PyCapsule>> {
        let table = NonNull::from(&TABLE.0).cast();
        // SAFETY: a static table, never freed.
        unsafe { PyCapsule::new_with_pointer(py, table, c"dlpack_exchange_api") }
    }

    #[pyo3(signature = (**kwargs))]
    fn __dlpack__<'py>(
        slf: &Bound<'py, Self>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let py = slf.py();
        let this = slf.get();
        let kwargs = match kwargs {
            Some(k) => k.copy()?,
            None => PyDict::new(py),
        };
        this.calls.bind(py).append(&kwargs)?;
        let max_version = kwargs.get_item("max_version")?;
        if this.legacy_only && max_version.is_some() {
            return Err(PyTypeError::new_err(
                "__dlpack__() got an unexpected keyword argument 'max_version'",
            ));
        }
        let device = DLDevice {
            device_type: this.device_type,
            device_id: this.device_id,
            ..DLDevice::ZERO
        };
        let request = DlpackRequest::new(
            device,
            kwargs.get_item("stream")?.as_ref(),
            max_version.map(|v| v.extract()).transpose()?,
            kwargs.get_item("dl_device")?.as_ref(),
            kwargs.get_item("copy")?.map(|c| c.extract()).transpose()?,
        )?;
        request.capsule(py, this.export()?)
    }

    fn __dlpack_device__(&self) -> (i32, i32) {
        (self.device_type.0, self.device_id)
    }
}

/// DeviceArray's table: pointers make the struct !Sync, but it is never
/// written.
struct Table(DLPackExchangeAPI);

// SAFETY: read only, by any thread.
unsafe impl Sync for Table {}

static TABLE: Table = Table(DLPackExchangeAPI {
    header: DLPackExchangeAPIHeader {
        version: DLPackVersion {
            major: dlpack::DLPACK_MAJOR_VERSION,
            minor: dlpack::DLPACK_MINOR_VERSION,
            ..DLPackVersion::ZERO
        },
        prev_api: ptr::null_mut(),
        ..DLPackExchangeAPIHeader::ZERO
    },
    managed_tensor_allocator: None,
    managed_tensor_from_py_object_no_sync: Some(table_export),
    managed_tensor_to_py_object_no_sync: None,
    dltensor_from_py_object_no_sync: None,
    current_work_stream: Some(table_current_work_stream),
    ..DLPackExchangeAPI::ZERO
});

/// Sets `e` as the pending exception and returns -1, the entries' failure.
fn fail(py: Python<'_>, e: PyErr) -> c_int {
    e.restore(py);
    -1
}

unsafe extern "C" fn table_export(
    py_object: *mut c_void,
    out: *mut *mut DLManagedTensorVersioned,
) -> c_int {
    Python::attach(|py| {
        // SAFETY: the consumer passes a live object, with the GIL.
        let obj = unsafe { Bound::from_borrowed_ptr(py, py_object.cast()) };
        let exported = obj
            .cast::<DeviceArray>()
            .map_err(PyErr::from)
            .and_then(|a| {
                if a.get().refuse {
                    return Err(PyRuntimeError::new_err(
                        "the table refuses this DeviceArray",
                    ));
                }
                a.get().export()
            });
        match exported {
            Ok(e) => {
                TABLE_EXPORTS.fetch_add(1, Ordering::SeqCst);
                // SAFETY: out is the consumer's to write.
                unsafe { *out = e.into_raw() };
                0
            }
            Err(e) => fail(py, e),
        }
    })
}

unsafe extern "C" fn table_current_work_stream(
    device_type: DLDeviceType,
    device_id: i32,
    out: *mut *mut c_void,
) -> c_int {
    if device_type == DLDeviceType::kDLCUDA && device_id == 0 {
        // SAFETY: out is the consumer's to write.
        unsafe { *out = CURRENT_STREAM as *mut c_void };
        return 0;
    }
    Python::attach(|py| {
        fail(
            py,
            PyBufferError::new_err(format!(
                "no current work stream for ({}, {device_id})",
                device_type.0
            )),
        )
    })
}

/// The exports DeviceArray's table has made.
#[pyfunction]
fn table_exports() -> usize {
    TABLE_EXPORTS.load(Ordering::SeqCst)
}

#[pymodule]
fn dlpack_pyo3_test(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RustArray>()?;
    m.add_class::<Imported>()?;
    m.add_class::<DeviceArray>()?;
    m.add("CURRENT_STREAM", CURRENT_STREAM)?;
    m.add("MAX_VERSION", dlpack::rules::VERSION)?;
    m.add_function(wrap_pyfunction!(exported, m)?)?;
    m.add_function(wrap_pyfunction!(released, m)?)?;
    m.add_function(wrap_pyfunction!(table_exports, m)?)?;
    m.add_function(wrap_pyfunction!(take, m)?)?;
    m.add_function(wrap_pyfunction!(take_with, m)?)?;
    Ok(())
}
