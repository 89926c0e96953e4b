//! What a tensor must be before the safe layer touches it. The rules are
//! the generated tables of `rules`; this module applies them, in the order
//! and with the words of the Go runtime (dltensor), so that every language
//! gives one verdict and one message for one tensor.
//!
//! Every address the checks accept (relative to `data`: byte_offset, each
//! element's byte and bit address, the byte extent) is computable without
//! overflow and bounded by `rules::ADDRESS_LIMIT`, wherever an extent of 0
//! sits.

use alloc::format;
use alloc::vec;
use alloc::vec::Vec;
use core::ffi::c_void;
use core::fmt;

use crate::rules;
use crate::tensor::{Error, ErrorKind};
use crate::{DLDataType, DLDataTypeCode, DLDevice, DLTensor};

/// A tensor's description, copied out of the producer's memory before
/// anything is judged, so that nothing the producer changes later matters.
pub(crate) struct Description {
    pub(crate) data: *mut c_void,
    pub(crate) device: DLDevice,
    pub(crate) dtype: DLDataType,
    /// The shape, then the strides (in elements): one allocation.
    pub(crate) dims: Vec<i64>,
    pub(crate) byte_offset: u64,
    /// Sub-byte elements take a byte each rather than being packed.
    pub(crate) padded: bool,
}

fn malformed(message: alloc::string::String) -> Error {
    Error::new(ErrorKind::Malformed, message)
}

/// Go's %v of a slice of integers: `[1 2 3]`.
pub(crate) struct List<'a>(pub(crate) &'a [i64]);

impl fmt::Display for List<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, x) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{x}")?;
        }
        f.write_str("]")
    }
}

/// Copies and checks a producer's DLTensor. `null_strides_ok`: NULL strides
/// mean row-major, as before DLPack 1.2.
///
/// # Safety
/// `shape` and `strides`, when not NULL, point to `ndim` readable integers.
pub(crate) unsafe fn describe(
    dl: &DLTensor,
    null_strides_ok: bool,
    padded: bool,
) -> Result<Description, Error> {
    let ndim = dl.ndim;
    if !(0..=rules::MAX_NDIM).contains(&ndim) {
        return Err(malformed(format!(
            "ndim {ndim} outside [0, {}]",
            rules::MAX_NDIM
        )));
    }
    let n = ndim as usize;
    let mut dims = vec![0i64; 2 * n];
    if n > 0 {
        if dl.shape.is_null() {
            return Err(malformed(format!("shape is NULL for {ndim} dimensions")));
        }
        // Bytes, so that a misaligned array is read, not undefined behaviour.
        // SAFETY: the caller vouches for n integers at shape.
        unsafe { copy_dims(dl.shape, &mut dims[..n]) };
        if !dl.strides.is_null() {
            // SAFETY: as above, for strides.
            unsafe { copy_dims(dl.strides, &mut dims[n..]) };
        } else if !null_strides_ok {
            let (major, minor) = rules::NULL_STRIDES_FORBIDDEN_FROM.unwrap_or(rules::VERSION);
            return Err(malformed(format!(
                "strides is NULL, which DLPack {major}.{minor}+ forbids for ndim {ndim}"
            )));
        } else {
            let (shape, strides) = dims.split_at_mut(n);
            contiguous_strides(shape, strides);
        }
    }
    let d = Description {
        data: dl.data,
        device: dl.device,
        dtype: dl.dtype,
        dims,
        byte_offset: dl.byte_offset,
        padded,
    };
    d.validate()?;
    Ok(d)
}

unsafe fn copy_dims(from: *const i64, to: &mut [i64]) {
    // SAFETY: the caller vouches for to.len() integers at from.
    unsafe {
        core::ptr::copy_nonoverlapping(
            from.cast::<u8>(),
            to.as_mut_ptr().cast::<u8>(),
            to.len() * 8,
        )
    };
}

/// Row-major strides of a shape; all 0 for a shape whose element count is
/// negative or overflows (the checks then refuse it).
pub(crate) fn contiguous_strides(shape: &[i64], strides: &mut [i64]) {
    if shape.iter().any(|&e| e < 0) || elements(shape).is_none() {
        strides.fill(0);
        return;
    }
    let mut step = 1i64;
    for (s, &e) in strides.iter_mut().zip(shape).rev() {
        *s = step;
        step = step.wrapping_mul(e.max(1));
    }
}

/// The number of elements of a non-negative shape, `None` if it overflows
/// an i64; 0 as soon as an extent is 0.
pub(crate) fn elements(shape: &[i64]) -> Option<i64> {
    let mut n: u64 = 1;
    let mut overflow = false;
    for &e in shape {
        if e == 0 {
            return Some(0);
        }
        let p = u128::from(n) * u128::from(e as u64);
        overflow = overflow || p > i64::MAX as u128;
        n = p as u64;
    }
    if overflow {
        None
    } else {
        Some(n as i64)
    }
}

impl Description {
    pub(crate) fn ndim(&self) -> usize {
        self.dims.len() / 2
    }

    pub(crate) fn shape(&self) -> &[i64] {
        &self.dims[..self.ndim()]
    }

    pub(crate) fn strides(&self) -> &[i64] {
        &self.dims[self.ndim()..]
    }

    /// The number of elements; valid once validate has passed.
    pub(crate) fn len(&self) -> usize {
        elements(self.shape()).unwrap_or(0) as usize
    }

    /// Bits of one element, all lanes.
    pub(crate) fn element_bits(&self) -> u64 {
        u64::from(self.dtype.bits) * u64::from(self.dtype.lanes)
    }

    /// Elements narrower than a byte share bytes (DLPack's default).
    pub(crate) fn packed(&self) -> bool {
        self.element_bits() < 8 && !self.padded
    }

    /// The byte distance between elements of stride 1 (1 for sub-byte
    /// elements, which packed ones only use as a byte granule).
    pub(crate) fn item_size(&self) -> u64 {
        self.element_bits().div_ceil(8)
    }

    /// The bytes n consecutive elements occupy, `None` on overflow.
    pub(crate) fn bytes_for(&self, n: u64) -> Option<u64> {
        if self.packed() {
            let bits = u128::from(n) * u128::from(self.element_bits());
            if bits > u128::from(u64::MAX - 7) {
                return None;
            }
            return Some((bits as u64).div_ceil(8));
        }
        let b = u128::from(n) * u128::from(self.item_size());
        u64::try_from(b).ok()
    }

    /// Where the elements lie, in bytes relative to data: `[lo, hi)`;
    /// `None` for a tensor with no element. Valid once validate has passed.
    pub(crate) fn byte_range(&self) -> Option<(i64, i64)> {
        if self.len() == 0 {
            return None;
        }
        let (mut neg, mut pos) = (0i64, 0i64);
        for (&n, &st) in self.shape().iter().zip(self.strides()) {
            let reach = (n - 1) * st;
            if reach < 0 {
                neg += reach;
            } else {
                pos += reach;
            }
        }
        let offset = self.byte_offset as i64;
        let bits = self.element_bits() as i64;
        if self.packed() {
            let first = offset * 8;
            return Some((
                (first + neg * bits).div_euclid(8),
                (first + (pos + 1) * bits + 7).div_euclid(8),
            ));
        }
        let item = self.item_size() as i64;
        Some((offset + neg * item, offset + (pos + 1) * item))
    }

    /// Whether the elements are row-major and compact (extents of 1 may
    /// have any stride; a tensor without elements is contiguous).
    pub(crate) fn is_contiguous(&self) -> bool {
        if self.len() == 0 {
            return true;
        }
        let mut expected = 1i64;
        for (&n, &st) in self.shape().iter().zip(self.strides()).rev() {
            if n != 1 && st != expected {
                return false;
            }
            expected *= n;
        }
        true
    }

    /// Whether the CPU may read the memory.
    pub(crate) fn host_accessible(&self) -> bool {
        rules::HOST_DEVICE_TYPES.contains(&self.device.device_type)
    }

    /// Checks everything DLPack requires of the description.
    pub(crate) fn validate(&self) -> Result<(), Error> {
        let device_type = self.device.device_type;
        if !rules::KNOWN_DEVICE_TYPES.contains(&device_type) {
            return Err(malformed(format!("unknown device type {}", device_type.0)));
        }
        let code = DLDataTypeCode(self.dtype.code);
        let (bits, lanes) = (self.dtype.bits, self.dtype.lanes);
        if !rules::KNOWN_TYPE_CODES.contains(&code) {
            return Err(malformed(format!("unknown dtype code {}", code.0)));
        }
        if let Some((_, what)) = rules::UNADDRESSABLE_TYPE_CODES
            .iter()
            .find(|(c, _)| *c == code)
        {
            return Err(malformed(format!("{what} elements cannot be addressed")));
        }
        if bits == 0 || lanes == 0 {
            return Err(malformed(format!(
                "dtype with {bits} bits and {lanes} lanes"
            )));
        }
        if let Some((_, want)) = rules::FIXED_WIDTH_TYPE_CODES
            .iter()
            .find(|(c, _)| *c == code)
        {
            if bits != *want {
                return Err(malformed(format!(
                    "{code:?} elements of {bits} bits (DLPack requires {want})"
                )));
            }
        }
        if self.shape().iter().any(|&e| e < 0) {
            return Err(malformed(format!(
                "negative extent in shape {}",
                List(self.shape())
            )));
        }
        self.check_extent()?;
        let len = self.len();
        if len > 0 && self.data.is_null() {
            return Err(malformed(format!("data is NULL for {len} elements")));
        }
        Ok(())
    }

    /// Proves that the element count and every element's byte (and bit)
    /// address, relative to data, are computable without overflow.
    fn check_extent(&self) -> Result<(), Error> {
        if self.byte_offset > rules::ADDRESS_LIMIT {
            return Err(malformed(format!(
                "byte_offset {} overflows",
                self.byte_offset
            )));
        }
        let (shape, strides) = (self.shape(), self.strides());
        let mut span: u64 = 0; // sum of (n-1)*|stride|, in elements
        for (&n, &st) in shape.iter().zip(strides) {
            if st == i64::MIN {
                return Err(malformed(format!("stride {st} overflows")));
            }
            let reach = u128::from((n - 1).max(0) as u64) * u128::from(st.unsigned_abs());
            let total = u128::from(span) + reach;
            if reach > u128::from(u64::MAX) || total > u128::from(u64::MAX) {
                return Err(malformed(format!(
                    "shape {} with strides {} overflows",
                    List(shape),
                    List(strides)
                )));
            }
            span = total as u64;
        }
        let nonzero: Vec<i64> = shape.iter().map(|&n| n.max(1)).collect();
        let Some(count) = elements(&nonzero) else {
            return Err(malformed(format!("shape {} overflows", List(shape))));
        };
        let too_big = || {
            malformed(format!(
                "tensor exceeds the addressable extent ({} x {} bits, strides {})",
                List(shape),
                self.element_bits(),
                List(strides)
            ))
        };
        if self.bytes_for(count as u64).is_none() || span >= rules::ADDRESS_LIMIT {
            return Err(too_big());
        }
        match self.bytes_for(span + 1) {
            Some(b) if b <= rules::ADDRESS_LIMIT - self.byte_offset => Ok(()),
            _ => Err(too_big()),
        }
    }
}
