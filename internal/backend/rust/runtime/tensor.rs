//! The consumer's side of the safe layer: a managed tensor taken over from
//! a producer, validated before anything reads it, whose deleter runs
//! exactly once, when it is dropped.

use alloc::string::String;
use core::ffi::c_void;
use core::fmt;
use core::ptr::{self, NonNull};

use crate::check::{self, Description};
use crate::rules::{self, Rule};
use crate::{
    DLDataType, DLDataTypeCode, DLDevice, DLManagedTensor, DLManagedTensorVersioned, DLPackVersion,
};

/// What went wrong, in kinds a caller can act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The tensor breaks DLPack's rules; an import has called the deleter.
    Malformed,
    /// The memory lives where the CPU cannot read it.
    NotOnCpu,
    /// Writing is forbidden: the producer marked the tensor read-only.
    ReadOnly,
    /// The operation needs row-major, compact elements.
    NotContiguous,
    /// The element type asked for is not the tensor's.
    ElementType,
    /// The data is not aligned for the element type asked for.
    Misaligned,
}

/// An error of the safe layer: its kind, the rule a tensor breaks (if it
/// breaks one) and the words every dlgen runtime uses for the same mistake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    rule: Option<Rule>,
    message: String,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: String) -> Error {
        Error {
            kind,
            rule: None,
            message,
        }
    }

    /// The error of a tensor that breaks `rule`, in its words.
    pub(crate) fn broken(kind: ErrorKind, rule: Rule, message: String) -> Error {
        Error {
            kind,
            rule: Some(rule),
            message,
        }
    }

    /// The kind of error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The rule the tensor breaks, as the message table of
    /// [`rules`](crate::rules) names it; `None` for an error no rule
    /// states (a NULL pointer, a slice of the wrong type).
    pub fn rule(&self) -> Option<Rule> {
        self.rule
    }

    /// The message, without decoration.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl core::error::Error for Error {}

/// A Rust type whose values are exactly the elements of one DLPack data
/// type (one lane).
///
/// # Safety
/// `Self` has the size of `DTYPE` (bits / 8), and every bit pattern of
/// that size is a valid `Self`: slices of foreign memory are made of it.
pub unsafe trait Element: Copy + Send + Sync + 'static {
    /// The DLPack data type of `Self`.
    const DTYPE: DLDataType;
}

macro_rules! elements {
    ($($t:ty => $code:ident),* $(,)?) => {$(
        // SAFETY: a primitive number of that width; every bit pattern is one.
        unsafe impl Element for $t {
            const DTYPE: DLDataType = DLDataType {
                code: DLDataTypeCode::$code.0,
                bits: (8 * core::mem::size_of::<$t>()) as u8,
                lanes: 1,
                ..DLDataType::ZERO
            };
        }
    )*};
}

elements! {
    i8 => kDLInt, i16 => kDLInt, i32 => kDLInt, i64 => kDLInt,
    u8 => kDLUInt, u16 => kDLUInt, u32 => kDLUInt, u64 => kDLUInt,
    f32 => kDLFloat, f64 => kDLFloat,
}

/// A producer's managed tensor, owned: the pointer a consumer was handed,
/// to give back (or hand on) without the safe layer's help.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Raw {
    /// A DLManagedTensorVersioned (DLPack 1.0 and later).
    Versioned(NonNull<DLManagedTensorVersioned>),
    /// A DLManagedTensor, the legacy, unversioned form.
    Legacy(NonNull<DLManagedTensor>),
}

impl Raw {
    /// Calls the deleter, if the producer set one.
    ///
    /// # Safety
    /// The tensor is owned by the caller and not used after.
    pub unsafe fn delete(self) {
        // SAFETY: the caller owns the struct; its deleter field is read in place.
        unsafe {
            match self {
                Raw::Versioned(m) => {
                    if let Some(deleter) = ptr::read(ptr::addr_of!((*m.as_ptr()).deleter)) {
                        deleter(m.as_ptr());
                    }
                }
                Raw::Legacy(m) => {
                    if let Some(deleter) = ptr::read(ptr::addr_of!((*m.as_ptr()).deleter)) {
                        deleter(m.as_ptr());
                    }
                }
            }
        }
    }
}

/// Calls the deleter when dropped, unless taken back with `into_raw`.
struct Lease(Raw);

impl Drop for Lease {
    fn drop(&mut self) {
        // SAFETY: a Lease is made only for an owned tensor, and dropped once.
        unsafe { self.0.delete() }
    }
}

/// A tensor handed over by a producer: validated when taken over, its
/// description copied, and its deleter called exactly once, on drop.
///
/// A `ManagedTensor` is `Send` and `Sync`: its own state is a copy, and
/// DLPack lets a consumer call the deleter from any thread (Python
/// producers, NumPy and PyTorch among them, take the GIL in theirs).
pub struct ManagedTensor {
    desc: Description,
    flags: u64,
    version: Option<DLPackVersion>,
    lease: Lease,
}

// SAFETY: see the type's documentation; the raw pointers are the
// producer's, to be given back once, from any thread.
unsafe impl Send for ManagedTensor {}
// SAFETY: shared references only read the copied description.
unsafe impl Sync for ManagedTensor {}

impl ManagedTensor {
    /// Takes over a DLManagedTensorVersioned. Everything is checked before
    /// the data is touched; on error the deleter has already been called
    /// (for a NULL pointer there is none to call).
    ///
    /// ```
    /// use dlpack::rules::Rule;
    /// use dlpack::{Export, ManagedTensor};
    ///
    /// // A producer hands a managed tensor over: here, Rust's own export.
    /// let m = Export::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?.into_raw();
    /// let tensor = unsafe { ManagedTensor::from_versioned(m) }?;
    /// assert_eq!(tensor.shape(), &[2, 2]);
    /// assert_eq!(unsafe { tensor.as_slice::<f32>() }?, &[1.0, 2.0, 3.0, 4.0]);
    /// drop(tensor); // the producer's deleter runs here, once
    ///
    /// // A malformed one is refused, its deleter already called.
    /// let m = Export::from_vec(vec![0u8; 4], &[4])?.into_raw();
    /// unsafe { (*m).dl_tensor.ndim = -1 };
    /// let err = unsafe { ManagedTensor::from_versioned(m) }.unwrap_err();
    /// assert_eq!(err.rule(), Some(Rule::NdimRange));
    /// # Ok::<(), dlpack::Error>(())
    /// ```
    ///
    /// # Safety
    /// `m` is NULL or a managed tensor the caller owns (it was handed over
    /// to the caller, who has not given it back), whose shape and strides,
    /// when not NULL, point to `ndim` integers each.
    pub unsafe fn from_versioned(m: *mut DLManagedTensorVersioned) -> Result<Self, Error> {
        let Some(m) = NonNull::new(m) else {
            return Err(Error::new(
                ErrorKind::Malformed,
                "import of a NULL tensor".into(),
            ));
        };
        let lease = Lease(Raw::Versioned(m));
        // SAFETY: the caller owns m; what it holds is copied before use.
        let (version, flags, dl) = unsafe {
            let p = m.as_ptr();
            (
                ptr::read(ptr::addr_of!((*p).version)),
                ptr::read(ptr::addr_of!((*p).flags)),
                ptr::read(ptr::addr_of!((*p).dl_tensor)),
            )
        };
        let (major, minor) = rules::VERSION;
        if version.major != major {
            drop(lease); // m is gone after this: report what was read before
            return Err(check::broken(
                Rule::VersionMajor,
                &[&version.major, &version.minor, &major, &minor],
            ));
        }
        let padded = rules::SUBBYTE_PADDED.is_some_and(|bit| flags & bit != 0);
        // SAFETY: the caller vouches for shape and strides.
        let desc = unsafe { check::describe(&dl, Some((version.major, version.minor)), padded)? };
        Ok(ManagedTensor {
            desc,
            flags,
            version: Some(version),
            lease,
        })
    }

    /// Takes over a legacy DLManagedTensor, as `from_versioned` does. The
    /// legacy form has no flags: the tensor is writable (see
    /// `set_read_only`) and sub-byte elements are packed; NULL strides mean
    /// row-major.
    ///
    /// # Safety
    /// As for `from_versioned`.
    pub unsafe fn from_legacy(m: *mut DLManagedTensor) -> Result<Self, Error> {
        let Some(m) = NonNull::new(m) else {
            return Err(Error::new(
                ErrorKind::Malformed,
                "import of a NULL tensor".into(),
            ));
        };
        let lease = Lease(Raw::Legacy(m));
        // SAFETY: the caller owns m; the tensor is copied before use.
        let dl = unsafe { ptr::read(ptr::addr_of!((*m.as_ptr()).dl_tensor)) };
        // SAFETY: the caller vouches for shape and strides.
        let desc = unsafe { check::describe(&dl, None, false)? };
        Ok(ManagedTensor {
            desc,
            flags: 0,
            version: None,
            lease,
        })
    }

    /// Gives the managed tensor back without calling its deleter: the
    /// caller owns it again.
    pub fn into_raw(self) -> Raw {
        let raw = self.lease.0;
        core::mem::forget(self.lease);
        raw
    }

    /// The extents.
    pub fn shape(&self) -> &[i64] {
        self.desc.shape()
    }

    /// The strides, in elements (row-major ones where a producer before
    /// DLPack 1.2 gave NULL).
    pub fn strides(&self) -> &[i64] {
        self.desc.strides()
    }

    /// The number of dimensions.
    pub fn ndim(&self) -> usize {
        self.desc.ndim()
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.desc.len()
    }

    /// Whether the tensor has no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element type.
    pub fn dtype(&self) -> DLDataType {
        self.desc.dtype
    }

    /// Where the memory lives.
    pub fn device(&self) -> DLDevice {
        self.desc.device
    }

    /// `data` as the producer gave it: the start of its allocation, which
    /// may be a device handle, and NULL for a tensor without elements.
    pub fn data(&self) -> *mut c_void {
        self.desc.data
    }

    /// Bytes from `data` to the first element.
    pub fn byte_offset(&self) -> u64 {
        self.desc.byte_offset
    }

    /// The address of the first element: `data` plus `byte_offset` (just
    /// `data` for a tensor without elements).
    pub fn data_ptr(&self) -> *mut c_void {
        if self.is_empty() {
            return self.desc.data;
        }
        self.desc
            .data
            .wrapping_byte_add(self.desc.byte_offset as usize)
    }

    /// The bytes the elements occupy when row-major (packed sub-byte
    /// elements share bytes).
    pub fn nbytes(&self) -> usize {
        self.desc.bytes_for(self.len() as u64).unwrap_or(0) as usize
    }

    /// The producer's version; `None` for a legacy tensor.
    pub fn version(&self) -> Option<DLPackVersion> {
        self.version
    }

    /// The producer's flags (0 for a legacy tensor).
    pub fn flags(&self) -> u64 {
        self.flags
    }

    /// Whether the producer forbids writes (or `set_read_only` was called).
    pub fn is_read_only(&self) -> bool {
        self.flags & rules::READ_ONLY != 0
    }

    /// Whether the producer made this copy for the consumer alone.
    pub fn is_copied(&self) -> bool {
        self.flags & rules::IS_COPIED != 0
    }

    /// Whether sub-byte elements take a byte each instead of being packed.
    pub fn is_padded(&self) -> bool {
        self.desc.padded
    }

    /// Whether the CPU may read the memory (CPU, CUDA host, ROCm host and
    /// CUDA managed memory).
    pub fn is_host_accessible(&self) -> bool {
        self.desc.host_accessible()
    }

    /// Whether the elements are row-major and compact.
    pub fn is_contiguous(&self) -> bool {
        self.desc.is_contiguous()
    }

    /// Forbids writes through this tensor from now on, as a consumer that
    /// treats legacy imports as read-only does.
    pub fn set_read_only(&mut self) {
        self.flags |= rules::READ_ONLY;
    }

    fn readable(&self) -> Result<(), Error> {
        if !self.is_host_accessible() {
            let DLDevice {
                device_type,
                device_id,
                ..
            } = self.desc.device;
            return Err(check::broken(
                Rule::DeviceUnreadable,
                &[&device_type.0, &device_id],
            ));
        }
        if !self.is_contiguous() {
            return Err(Error::new(
                ErrorKind::NotContiguous,
                "only contiguous tensors give a slice".into(),
            ));
        }
        Ok(())
    }

    fn writable(&self) -> Result<(), Error> {
        if self.is_read_only() {
            return Err(Error::new(
                ErrorKind::ReadOnly,
                "the producer marked the tensor read-only".into(),
            ));
        }
        Ok(())
    }

    fn typed<T: Element>(&self) -> Result<(), Error> {
        if self.desc.dtype != T::DTYPE {
            return Err(Error::new(
                ErrorKind::ElementType,
                alloc::format!("the tensor holds {}, not {}", self.desc.dtype, T::DTYPE),
            ));
        }
        if !self.is_empty() && !self.data_ptr().cast::<T>().is_aligned() {
            return Err(Error::new(
                ErrorKind::Misaligned,
                alloc::format!(
                    "the data at {:p} is not aligned for {}",
                    self.data_ptr(),
                    core::any::type_name::<T>()
                ),
            ));
        }
        Ok(())
    }

    /// The elements, row-major, of a contiguous tensor the CPU can read.
    ///
    /// # Safety
    /// DLPack shares memory: nobody (the producer included) may write it
    /// while the slice lives.
    pub unsafe fn as_slice<T: Element>(&self) -> Result<&[T], Error> {
        self.readable()?;
        self.typed::<T>()?;
        if self.is_empty() {
            return Ok(&[]);
        }
        // SAFETY: validated, host-accessible, contiguous, typed and aligned
        // memory of len elements; the caller vouches that nobody writes it.
        Ok(unsafe { core::slice::from_raw_parts(self.data_ptr().cast::<T>(), self.len()) })
    }

    /// The elements, row-major and writable, of a contiguous tensor the CPU
    /// can read and the producer did not mark read-only.
    ///
    /// # Safety
    /// DLPack shares memory: nobody (the producer included) may read or
    /// write it while the slice lives.
    pub unsafe fn as_mut_slice<T: Element>(&mut self) -> Result<&mut [T], Error> {
        self.readable()?;
        self.writable()?;
        self.typed::<T>()?;
        if self.is_empty() {
            return Ok(&mut []);
        }
        // SAFETY: as in as_slice, and writes are allowed; the caller vouches
        // that nobody else uses the memory.
        Ok(unsafe { core::slice::from_raw_parts_mut(self.data_ptr().cast::<T>(), self.len()) })
    }

    /// The bytes of a contiguous tensor the CPU can read, of any element
    /// type (packed sub-byte elements as they lie).
    ///
    /// # Safety
    /// As for `as_slice`.
    pub unsafe fn as_bytes(&self) -> Result<&[u8], Error> {
        self.readable()?;
        if self.is_empty() {
            return Ok(&[]);
        }
        // SAFETY: validated, host-accessible, contiguous memory of nbytes.
        Ok(unsafe { core::slice::from_raw_parts(self.data_ptr().cast::<u8>(), self.nbytes()) })
    }
}

impl fmt::Debug for ManagedTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManagedTensor")
            .field("shape", &self.shape())
            .field("strides", &self.strides())
            .field("dtype", &self.dtype())
            .field("device", &self.device())
            .field("byte_offset", &self.byte_offset())
            .field("flags", &self.flags)
            .field("version", &self.version)
            .finish()
    }
}
