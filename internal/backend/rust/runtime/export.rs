//! The producer's side of the safe layer: memory Rust owns (a `Vec`, a
//! boxed slice, any owner) lent to a consumer as a managed tensor whose
//! deleter gives the owner back to Rust's allocator, from any thread.

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;
use core::ffi::c_void;
use core::fmt;
use core::ptr::{self, NonNull};

use crate::check::{self, Description};
use crate::rules::{self, Rule};
use crate::tensor::{Element, Error, ErrorKind};
use crate::{
    DLDataType, DLDevice, DLDeviceType, DLManagedTensor, DLManagedTensorVersioned, DLPackVersion,
    DLTensor,
};

/// What an exported tensor is, besides its memory.
#[derive(Clone, Copy, Debug)]
pub struct Layout<'a> {
    /// The element type.
    pub dtype: DLDataType,
    /// The extents.
    pub shape: &'a [i64],
    /// The strides, in elements; `None`: row-major.
    pub strides: Option<&'a [i64]>,
    /// Bytes from the data pointer to the first element.
    pub byte_offset: u64,
    /// Where the memory lives.
    pub device: DLDevice,
}

impl<'a> Layout<'a> {
    /// A row-major tensor of `dtype` on the CPU.
    pub fn new(dtype: DLDataType, shape: &'a [i64]) -> Self {
        Layout {
            dtype,
            shape,
            strides: None,
            byte_offset: 0,
            device: DLDevice {
                device_type: DLDeviceType::kDLCPU,
                ..DLDevice::ZERO
            },
        }
    }

    /// A row-major tensor of `T` on the CPU.
    pub fn of<T: Element>(shape: &'a [i64]) -> Self {
        Layout::new(T::DTYPE, shape)
    }

    /// The same tensor with these strides (in elements).
    pub fn with_strides(self, strides: &'a [i64]) -> Self {
        Layout {
            strides: Some(strides),
            ..self
        }
    }

    /// Describes the tensor at data, checked by the rules an import checks
    /// (and one stride per dimension), in their words: what Rust exports, a
    /// consumer of any dlgen language accepts.
    fn describe(&self, data: *mut c_void) -> Result<Description, Error> {
        let n = self.shape.len();
        if n > rules::MAX_NDIM {
            return Err(check::broken(Rule::NdimRange, &[&n, &rules::MAX_NDIM]));
        }
        let mut dims = vec![0i64; 2 * n];
        let (shape, strides) = dims.split_at_mut(n);
        shape.copy_from_slice(self.shape);
        match self.strides {
            Some(s) if s.len() != n => {
                return Err(check::broken(Rule::StridesCount, &[&s.len(), &n]));
            }
            Some(s) => strides.copy_from_slice(s),
            None => check::contiguous_strides(shape, strides),
        }
        let desc = Description {
            data,
            device: self.device,
            dtype: self.dtype,
            dims,
            byte_offset: self.byte_offset,
            padded: false,
        };
        desc.check(Some(rules::VERSION))?;
        Ok(desc)
    }
}

/// Refuses a description that addresses bytes outside [0, size) of data.
fn within(desc: Description, size: usize) -> Result<Description, Error> {
    if let Some((lo, hi)) = desc.byte_range() {
        if lo < 0 || hi as u64 > size as u64 {
            return Err(Error::new(
                ErrorKind::Malformed,
                alloc::format!(
                    "the tensor reaches bytes [{lo}, {hi}) of memory holding {size} bytes"
                ),
            ));
        }
    }
    Ok(desc)
}

/// One export: both managed structs (one is handed out), the shape and
/// strides they point to, and the owner of the memory.
#[repr(C)]
struct Holder<O> {
    versioned: DLManagedTensorVersioned,
    legacy: DLManagedTensor,
    dims: Vec<i64>,
    owner: O,
}

unsafe extern "C" fn delete_versioned<O>(m: *mut DLManagedTensorVersioned) {
    if !m.is_null() {
        // SAFETY: manager_ctx is the Holder<O> this deleter was made for,
        // freed once: the consumer calls the deleter exactly once.
        drop(unsafe { Box::from_raw((*m).manager_ctx.cast::<Holder<O>>()) });
    }
}

unsafe extern "C" fn delete_legacy<O>(m: *mut DLManagedTensor) {
    if !m.is_null() {
        // SAFETY: as in delete_versioned.
        drop(unsafe { Box::from_raw((*m).manager_ctx.cast::<Holder<O>>()) });
    }
}

/// Memory Rust owns, described as a DLPack tensor and ready to hand to a
/// consumer: `into_raw` gives the DLManagedTensorVersioned, whose deleter,
/// callable from any thread, drops the owner. Dropped without being handed
/// out, it drops the owner itself.
pub struct Export {
    managed: NonNull<DLManagedTensorVersioned>,
    legacy: NonNull<DLManagedTensor>,
}

// SAFETY: the owner is Send, and nothing else is shared with anyone yet.
unsafe impl Send for Export {}

impl Export {
    /// Exports a vector as a writable row-major tensor of `shape`.
    ///
    /// ```
    /// use dlpack::rules::Rule;
    /// use dlpack::{DLManagedTensorVersioned, Export};
    ///
    /// let export = Export::from_vec(vec![1i32, 2, 3, 4, 5, 6], &[2, 3])?;
    /// let m: *mut DLManagedTensorVersioned = export.into_raw();
    /// // The consumer reads it, then calls its deleter, which frees the vector.
    /// let dl = unsafe { &(*m).dl_tensor };
    /// assert_eq!(unsafe { core::slice::from_raw_parts(dl.shape, 2) }, &[2, 3]);
    /// unsafe { (*m).deleter.unwrap()(m) };
    ///
    /// // A tensor the rules refuse is not exported.
    /// let err = Export::from_vec(vec![0u8; 4], &[-4]).err().unwrap();
    /// assert_eq!(err.rule(), Some(Rule::ShapeNegative));
    /// # Ok::<(), dlpack::Error>(())
    /// ```
    pub fn from_vec<T: Element>(v: Vec<T>, shape: &[i64]) -> Result<Export, Error> {
        Export::from_mut_owner(v, Layout::of::<T>(shape))
    }

    /// Exports the elements `owner` holds as a read-only tensor (flagged
    /// READ_ONLY). Every element the layout addresses must lie within them;
    /// on error the owner is dropped.
    pub fn from_owner<T, O>(owner: O, layout: Layout<'_>) -> Result<Export, Error>
    where
        T: Element,
        O: AsRef<[T]> + Send + 'static,
    {
        Export::new(owner, layout, true, |o: &mut O| {
            let s = o.as_ref();
            (s.as_ptr().cast_mut().cast(), core::mem::size_of_val(s))
        })
    }

    /// Exports the elements `owner` holds as a writable tensor. Every
    /// element the layout addresses must lie within them; on error the
    /// owner is dropped.
    pub fn from_mut_owner<T, O>(owner: O, layout: Layout<'_>) -> Result<Export, Error>
    where
        T: Element,
        O: AsMut<[T]> + Send + 'static,
    {
        Export::new(owner, layout, false, |o: &mut O| {
            let s = o.as_mut();
            (s.as_mut_ptr().cast(), core::mem::size_of_val(s))
        })
    }

    /// Exports memory at `data` that `owner` keeps valid until it is
    /// dropped: a buffer of another library, device memory, a mapping.
    ///
    /// # Safety
    /// Every element the layout addresses from `data` stays valid (and, if
    /// not `read_only`, writable by the consumer) until `owner` is dropped,
    /// and moving `owner` does not move it.
    pub unsafe fn from_raw_parts<O: Send + 'static>(
        owner: O,
        data: *mut c_void,
        layout: Layout<'_>,
        read_only: bool,
    ) -> Result<Export, Error> {
        Export::new(owner, layout, read_only, |_: &mut O| (data, usize::MAX))
    }

    /// Makes the export: the owner is moved to its final place before its
    /// memory is asked for, so that memory held inline stays put.
    fn new<O: Send + 'static>(
        owner: O,
        layout: Layout<'_>,
        read_only: bool,
        memory: impl FnOnce(&mut O) -> (*mut c_void, usize),
    ) -> Result<Export, Error> {
        let tensor = DLTensor {
            device: layout.device,
            dtype: layout.dtype,
            byte_offset: layout.byte_offset,
            ..DLTensor::ZERO
        };
        let (major, minor) = rules::VERSION;
        let raw = Box::into_raw(Box::new(Holder {
            versioned: DLManagedTensorVersioned {
                version: DLPackVersion {
                    major,
                    minor,
                    ..DLPackVersion::ZERO
                },
                deleter: Some(delete_versioned::<O>),
                flags: if read_only { rules::READ_ONLY } else { 0 },
                dl_tensor: tensor,
                ..DLManagedTensorVersioned::ZERO
            },
            legacy: DLManagedTensor {
                dl_tensor: tensor,
                deleter: Some(delete_legacy::<O>),
                ..DLManagedTensor::ZERO
            },
            dims: Vec::new(),
            owner,
        }));
        // From here on the holder is reached through raw only, the data
        // pointer (into an inline owner, maybe) included, so that nothing
        // retags it behind the consumer's back; a deleter frees it.
        // SAFETY: raw is the holder just leaked, and nobody else knows it.
        let (data, size) = memory(unsafe { &mut (*raw).owner });
        let desc = match layout.describe(data).and_then(|d| within(d, size)) {
            Ok(d) => d,
            Err(e) => {
                // SAFETY: never handed out: freed here, once.
                drop(unsafe { Box::from_raw(raw) });
                return Err(e);
            }
        };
        let ndim = desc.ndim();
        // SAFETY: as above.
        unsafe {
            (*raw).dims = desc.dims;
            let (shape, strides) = if ndim == 0 {
                (ptr::null_mut(), ptr::null_mut())
            } else {
                // dims holds the shape and then the strides.
                let p = (*raw).dims.as_mut_ptr();
                (p, p.add(ndim))
            };
            for t in [
                ptr::addr_of_mut!((*raw).versioned.dl_tensor),
                ptr::addr_of_mut!((*raw).legacy.dl_tensor),
            ] {
                (*t).data = data;
                (*t).ndim = ndim as i32;
                (*t).shape = shape;
                (*t).strides = strides;
            }
            (*raw).versioned.manager_ctx = raw.cast();
            (*raw).legacy.manager_ctx = raw.cast();
            Ok(Export {
                managed: NonNull::new_unchecked(ptr::addr_of_mut!((*raw).versioned)),
                legacy: NonNull::new_unchecked(ptr::addr_of_mut!((*raw).legacy)),
            })
        }
    }

    /// The managed tensor, still owned by the export, to inspect.
    pub fn as_ptr(&self) -> *const DLManagedTensorVersioned {
        self.managed.as_ptr()
    }

    /// The flags the consumer will see.
    pub fn flags(&self) -> u64 {
        // SAFETY: the struct is the export's own until handed out.
        unsafe { self.managed.as_ref().flags }
    }

    /// Flags the tensor IS_COPIED: a copy made for the consumer alone.
    pub fn set_copied(&mut self) {
        // SAFETY: the struct is the export's own until handed out.
        unsafe { self.managed.as_mut().flags |= rules::IS_COPIED }
    }

    /// Hands the DLManagedTensorVersioned over: the consumer calls its
    /// deleter exactly once, from any thread.
    pub fn into_raw(self) -> *mut DLManagedTensorVersioned {
        let m = self.managed.as_ptr();
        core::mem::forget(self);
        m
    }

    /// Hands the tensor over as a legacy DLManagedTensor, which has no
    /// flags: refused (the export given back) for a read-only tensor.
    pub fn into_raw_legacy(self) -> Result<*mut DLManagedTensor, (Error, Export)> {
        if self.flags() & rules::READ_ONLY != 0 {
            let e = Error::new(
                ErrorKind::ReadOnly,
                "a read-only tensor cannot be exported as a legacy DLManagedTensor, \
                 which has no read-only flag"
                    .into(),
            );
            return Err((e, self));
        }
        let legacy = self.legacy.as_ptr();
        core::mem::forget(self);
        Ok(legacy)
    }
}

impl Drop for Export {
    fn drop(&mut self) {
        let m = self.managed.as_ptr();
        // SAFETY: never handed out, so this is the one call of the deleter
        // the export was made with.
        unsafe {
            if let Some(deleter) = (*m).deleter {
                deleter(m);
            }
        }
    }
}

impl fmt::Debug for Export {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // SAFETY: the struct is the export's own until handed out.
        let m = unsafe { self.managed.as_ref() };
        f.debug_struct("Export")
            .field("dtype", &m.dl_tensor.dtype)
            .field("ndim", &m.dl_tensor.ndim)
            .field("flags", &m.flags)
            .finish()
    }
}
