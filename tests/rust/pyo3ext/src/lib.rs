//! A Python extension for the tests of the generated crate's PyO3 glue:
//! `RustArray` lends memory Rust owns through `__dlpack__` (counting the
//! exports made and the owners released), and `take` takes any DLPack
//! producer's tensor (NumPy's, PyTorch's) into Rust, which reads and
//! writes it in place and gives it back when dropped.

use std::sync::atomic::{AtomicUsize, Ordering};

use dlpack::python::{self as dl, DlpackRequest};
use dlpack::{DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, Export, Layout, ManagedTensor};
use pyo3::exceptions::{PyBufferError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

static EXPORTED: AtomicUsize = AtomicUsize::new(0);
static RELEASED: AtomicUsize = AtomicUsize::new(0);

const CPU: DLDevice = DLDevice {
    device_type: DLDeviceType::kDLCPU,
    device_id: 0,
};

fn buffer_error(e: dlpack::Error) -> PyErr {
    PyBufferError::new_err(e.to_string())
}

/// What an export keeps alive: counted when the consumer lets it go.
struct Lent<T>(T);

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
    #[pyo3(signature = (values, *, readonly = false, dtype = "float32"))]
    fn new(values: Vec<f32>, readonly: bool, dtype: &str) -> PyResult<Self> {
        let (dtype, bytes): (DLDataType, Vec<u8>) = match dtype {
            "float32" => (
                <f32 as dlpack::Element>::DTYPE,
                values.iter().flat_map(|v| v.to_ne_bytes()).collect(),
            ),
            "bfloat16" => (
                DLDataType {
                    code: DLDataTypeCode::kDLBfloat.0,
                    bits: 16,
                    lanes: 1,
                },
                values
                    .iter()
                    .flat_map(|v| ((v.to_bits() >> 16) as u16).to_ne_bytes())
                    .collect(),
            ),
            other => return Err(PyValueError::new_err(format!("no dtype {other}"))),
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
        let layout = Layout::new(this.dtype, &this.shape);
        let export = if request.copy() {
            // SAFETY: nbytes bytes at words, read during the call.
            let copied =
                unsafe { std::slice::from_raw_parts(this.words.cast::<u8>(), this.nbytes) }
                    .to_vec();
            Export::from_mut_owner(Lent(copied), layout)
        } else {
            // SAFETY: the owner keeps the RustArray, and so its memory, alive.
            unsafe {
                Export::from_raw_parts(
                    Lent(dl::PyOwner::new(slf.clone().into_any().unbind())),
                    this.words.cast(),
                    layout,
                    this.read_only,
                )
            }
        }
        .map_err(buffer_error)?;
        EXPORTED.fetch_add(1, Ordering::SeqCst);
        request.capsule(slf.py(), export)
    }

    fn __dlpack_device__(&self) -> (i32, i32) {
        (CPU.device_type.0, CPU.device_id)
    }
}

/// The exports RustArray has made.
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
                let $s = t.$slice::<f32>().map_err(buffer_error)?;
                $body
            } else if dtype == <f64 as dlpack::Element>::DTYPE {
                let $s = t.$slice::<f64>().map_err(buffer_error)?;
                $body
            } else if dtype == <i64 as dlpack::Element>::DTYPE {
                let $s = t.$slice::<i64>().map_err(buffer_error)?;
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
/// when it has one, else through __dlpack__.
#[pyfunction]
fn take(obj: &Bound<'_, PyAny>) -> PyResult<Imported> {
    if obj.is_exact_instance_of::<PyCapsule>() {
        return Ok(Imported {
            tensor: Some(dl::from_capsule(obj)?),
            via: "capsule",
        });
    }
    if let Some(t) = dl::from_exchange_api(obj)? {
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

/// Takes obj's tensor through __dlpack__ with the consumer's keywords.
#[pyfunction]
#[pyo3(signature = (obj, *, copy = None, device = None))]
fn take_with(
    obj: &Bound<'_, PyAny>,
    copy: Option<bool>,
    device: Option<(i32, i32)>,
) -> PyResult<Imported> {
    let device = device.map(|(t, id)| DLDevice {
        device_type: DLDeviceType(t),
        device_id: id,
    });
    Ok(Imported {
        tensor: Some(dl::from_dlpack_with(obj, copy, device)?),
        via: "__dlpack__",
    })
}

#[pymodule]
fn dlpack_pyo3_test(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RustArray>()?;
    m.add_class::<Imported>()?;
    m.add_function(wrap_pyfunction!(exported, m)?)?;
    m.add_function(wrap_pyfunction!(released, m)?)?;
    m.add_function(wrap_pyfunction!(take, m)?)?;
    m.add_function(wrap_pyfunction!(take_with, m)?)?;
    Ok(())
}
