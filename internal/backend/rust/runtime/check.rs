//! What a tensor must be before the safe layer touches it: the checks of
//! dlgen's docs/rules.md, in their order, reading the tables of `rules`
//! (generated from the schema) and refusing in the words of its message
//! table, so that every language gives one verdict and one message for one
//! tensor.
//!
//! Once the checks pass, every element count, byte offset and byte extent
//! the tensor implies, relative to `data` or to the first element, ends
//! included, is below 2^(P-1) (P the width of a pointer), and every byte of
//! every element has an address: plain `isize` arithmetic is then safe.
//!
//! dlgen:checker rust-import (docs/rules.md lists every checker)

use alloc::string::ToString;
use alloc::vec;
use alloc::vec::Vec;
use core::ffi::c_void;
use core::fmt::Display;

use crate::rules::{self, Rule};
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

/// The error of a tensor that breaks `rule`; `args` are the parameters of
/// its message.
pub(crate) fn broken(rule: Rule, args: &[&dyn Display]) -> Error {
    let kind = match rule {
        Rule::DeviceUnreadable => ErrorKind::NotOnCpu,
        _ => ErrorKind::Malformed,
    };
    Error::broken(kind, rule, rule.format(args).to_string())
}

/// The version a nullable rule reads, (0, 0) for a legacy tensor, as the
/// messages show it.
fn shown(version: Option<(u32, u32)>) -> (u32, u32) {
    version.unwrap_or((0, 0))
}

/// Copies and checks a producer's DLTensor, of `version` (`None`: a legacy
/// DLManagedTensor). The major version is the caller's to check, before
/// anything else is read.
///
/// # Safety
/// `shape` and `strides`, when not NULL, point to `ndim` readable integers.
pub(crate) unsafe fn describe(
    dl: &DLTensor,
    version: Option<(u32, u32)>,
    padded: bool,
) -> Result<Description, Error> {
    let ndim = dl.ndim;
    let Some(n) = usize::try_from(ndim).ok().filter(|&n| n <= rules::MAX_NDIM) else {
        return Err(broken(Rule::NdimRange, &[&ndim, &rules::MAX_NDIM]));
    };
    if dl.shape.is_null() && !DLTensor::SHAPE_NULLABLE.allows(version, n, false) {
        return Err(broken(Rule::ShapeNull, &[&ndim]));
    }
    if dl.strides.is_null() && !DLTensor::STRIDES_NULLABLE.allows(version, n, false) {
        let (major, minor) = shown(version);
        let from = DLTensor::STRIDES_NULLABLE
            .changed
            .map_or((0, 0), |c| c.since);
        return Err(broken(
            Rule::StridesNull,
            &[&ndim, &major, &minor, &from.0, &from.1],
        ));
    }
    let mut dims = vec![0i64; 2 * n];
    if n > 0 {
        let (shape, strides) = dims.split_at_mut(n);
        if !dl.shape.is_null() {
            // SAFETY: the caller vouches for n integers at shape.
            unsafe { copy_dims(dl.shape, shape) };
        }
        if !dl.strides.is_null() {
            // SAFETY: as above, for strides.
            unsafe { copy_dims(dl.strides, strides) };
        } else {
            // Row-major, as NULL meant.
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
    d.check(version)?;
    Ok(d)
}

/// Copies integers byte by byte, so that a misaligned array is read, not
/// undefined behaviour.
///
/// # Safety
/// `from` points to `to.len()` readable integers.
unsafe fn copy_dims(from: *const i64, to: &mut [i64]) {
    // SAFETY: the caller vouches for to.len() integers at from.
    unsafe {
        core::ptr::copy_nonoverlapping(
            from.cast::<u8>(),
            to.as_mut_ptr().cast::<u8>(),
            core::mem::size_of_val(to),
        )
    };
}

/// Row-major strides of a shape (every 0 extent read as 1); all 0 for a
/// shape with a negative extent or whose element count overflows an i64
/// (the checks then refuse it).
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

    /// The number of elements; once checked, below 2^(P-1).
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

    /// The bytes n consecutive elements occupy, `None` from 2^64 on.
    pub(crate) fn bytes_for(&self, n: u64) -> Option<u64> {
        let bytes = if self.packed() {
            (u128::from(n) * u128::from(self.element_bits())).div_ceil(8)
        } else {
            u128::from(n) * u128::from(self.item_size())
        };
        u64::try_from(bytes).ok()
    }

    /// Whether n elements, and the bytes they take, are below 2^(P-1).
    fn fits(&self, n: u64) -> bool {
        n < rules::BOUND && self.bytes_for(n).is_some_and(|b| b < rules::BOUND)
    }

    /// How many elements the strides reach below the first element and
    /// above it, saturated at 2^64 - 1; the tensor must have elements.
    fn reach(&self) -> (u64, u64) {
        let (mut low, mut high) = (0u64, 0u64);
        for (&n, &st) in self.shape().iter().zip(self.strides()) {
            let r = ((n - 1) as u64).saturating_mul(st.unsigned_abs());
            if st < 0 {
                low = low.saturating_add(r);
            } else {
                high = high.saturating_add(r);
            }
        }
        (low, high)
    }

    /// Where the elements lie, in bytes relative to data: `[lo, hi)`;
    /// `None` for a tensor with no element. Valid once checked.
    pub(crate) fn byte_range(&self) -> Option<(i64, i64)> {
        if self.len() == 0 {
            return None;
        }
        let (low, high) = self.reach();
        let below = self.bytes_for(low).unwrap_or(0) as i64;
        let end = self.bytes_for(high + 1).unwrap_or(0) as i64;
        let offset = self.byte_offset as i64;
        Some((offset - below, offset + end))
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
        self.device.device_type.is_host_readable()
    }

    /// Makes the checks that follow the pointer fields', in order, on a
    /// tensor of `version` (`None`: legacy): every tensor the safe layer
    /// imports or exports passes through it.
    pub(crate) fn check(&self, version: Option<(u32, u32)>) -> Result<(), Error> {
        let code = DLDataTypeCode(self.dtype.code);
        let (bits, lanes) = (self.dtype.bits, self.dtype.lanes);
        if code.name().is_none() {
            return Err(broken(Rule::DtypeUnknown, &[&code.0]));
        }
        let name = code.name().unwrap_or_default();
        if !code.is_addressable() {
            return Err(broken(Rule::DtypeOpaque, &[&code.0, &name]));
        }
        if bits == 0 || lanes == 0 {
            return Err(broken(Rule::DtypeZero, &[&bits, &lanes]));
        }
        if let Some(required) = code.fixed_bits().filter(|&b| b != bits) {
            return Err(broken(Rule::DtypeBits, &[&code.0, &name, &bits, &required]));
        }
        if let Some((dim, extent)) = self.shape().iter().enumerate().find(|&(_, &e)| e < 0) {
            return Err(broken(Rule::ShapeNegative, &[extent, &dim]));
        }
        self.check_limits()?;
        let count = self.len();
        if self.data.is_null() && !DLTensor::DATA_NULLABLE.allows(version, self.ndim(), count == 0)
        {
            return Err(broken(Rule::DataNull, &[&count]));
        }
        if count == 0 {
            return Ok(()); // nothing is addressed
        }
        // The first byte lies byte_offset - below from data, the end
        // byte_offset + end: check_limits bounds both.
        let (low, high) = self.reach();
        let below = self.bytes_for(low).unwrap_or(u64::MAX);
        let end = self.bytes_for(high + 1).unwrap_or(u64::MAX);
        let address = self.data as usize as u64;
        if (below > self.byte_offset && address < below - self.byte_offset)
            || address > rules::MAX_ADDRESS - (self.byte_offset + end)
        {
            return Err(broken(
                Rule::AddressLimit,
                &[&(self.data as usize), &self.byte_offset],
            ));
        }
        Ok(())
    }

    /// The checks of the address space's limits that need no data pointer.
    fn check_limits(&self) -> Result<(), Error> {
        let log2 = rules::POINTER_BITS - 1;
        if self.byte_offset >= rules::BOUND {
            return Err(broken(Rule::ByteOffsetLimit, &[&self.byte_offset, &log2]));
        }
        // Every 0 extent read as 1: the verdict never depends on where a 0
        // sits, and every partial product is computable.
        let mut count = 1u64;
        for &n in self.shape() {
            match count.checked_mul(n.max(1) as u64) {
                Some(c) if c < rules::BOUND => count = c,
                _ => return Err(broken(Rule::SizeLimit, &[&log2])),
            }
        }
        if !self.fits(count) {
            return Err(broken(Rule::SizeLimit, &[&log2]));
        }
        for (dim, stride) in self.strides().iter().enumerate() {
            if !self.fits(stride.unsigned_abs()) {
                return Err(broken(Rule::StrideLimit, &[stride, &dim, &log2]));
            }
        }
        if self.len() == 0 {
            return Ok(());
        }
        let (low, high) = self.reach();
        if !low
            .checked_add(high)
            .and_then(|s| s.checked_add(1))
            .is_some_and(|span| self.fits(span))
        {
            return Err(broken(Rule::SpanLimit, &[&log2]));
        }
        // high + 1 fits, so its bytes do, and byte_offset is below 2^(P-1).
        let end = self.bytes_for(high + 1).unwrap_or(u64::MAX);
        if self.byte_offset.saturating_add(end) >= rules::BOUND {
            return Err(broken(Rule::OffsetLimit, &[&self.byte_offset, &log2]));
        }
        Ok(())
    }
}
