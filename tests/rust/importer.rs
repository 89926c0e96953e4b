//! Reads managed tensors, one a line, as tests/rust/importer.go writes
//! them; makes each as a C producer would (a DLManagedTensorVersioned, or a
//! legacy DLManagedTensor, whose deleter counts its calls); imports it with
//! the crate's safe layer; and prints one line a tensor:
//!
//! - `accept <deleter calls before the drop> <after it> <bytes read>`: for
//!   a tensor whose data is a buffer the CPU reads, of at most 4096
//!   elements, every element is read (as a slice when contiguous), each
//!   checked to lie inside the buffer; `-` when nothing is read, `outside`
//!   when an element lies outside the buffer;
//! - `refuse <deleter calls> <rule id or -> <message>`.

use std::ffi::c_void;
use std::io::{self, BufRead, Write};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};

use dlpack::*;

static CALLS: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn count_versioned(_: *mut DLManagedTensorVersioned) {
    CALLS.fetch_add(1, Ordering::SeqCst);
}

unsafe extern "C" fn count_legacy(_: *mut DLManagedTensor) {
    CALLS.fetch_add(1, Ordering::SeqCst);
}

/// A list of integers, `null` for none.
fn list(field: &str) -> Option<Vec<i64>> {
    if field == "null" {
        return None;
    }
    let inner = field.trim_start_matches('[').trim_end_matches(']');
    Some(
        inner
            .split(',')
            .filter(|x| !x.is_empty())
            .map(|x| x.parse().expect("an integer"))
            .collect(),
    )
}

fn number<T: std::str::FromStr>(field: &str) -> T
where
    T::Err: std::fmt::Debug,
{
    field.parse().expect("a number")
}

/// Reads the tensor's elements if its data is `buffer` and the CPU reads
/// it: how many bytes were read, or `outside` when an element lies
/// outside the buffer.
fn read(t: &ManagedTensor, buffer: &[u8]) -> String {
    if !t.is_host_accessible() || t.len() > 4096 || t.data() != buffer.as_ptr().cast_mut().cast() {
        return "-".into();
    }
    if t.is_contiguous() {
        let inside = |p: *const u8| buffer.as_ptr_range().contains(&p);
        // SAFETY: nobody writes the buffer while the slice lives.
        let bytes = unsafe { t.as_bytes() }.expect("a contiguous CPU tensor gives its bytes");
        let end = bytes.as_ptr_range().end;
        if !bytes.is_empty() && (!inside(bytes.as_ptr()) || !inside(end.wrapping_sub(1))) {
            return "outside".into();
        }
        std::hint::black_box(bytes.iter().copied().max());
        return bytes.len().to_string();
    }
    // Element by element: the first and the last byte of each.
    let (shape, strides) = (t.shape(), t.strides());
    let dtype = t.dtype();
    let bits = i128::from(dtype.bits) * i128::from(dtype.lanes);
    let packed = bits < 8 && !t.is_padded();
    let offset = i128::from(t.byte_offset());
    let mut index = vec![0i64; shape.len()];
    let mut read = 0usize;
    for _ in 0..t.len() {
        let step: i128 = index
            .iter()
            .zip(strides)
            .map(|(&i, &s)| i128::from(i) * i128::from(s))
            .sum();
        let (first, last) = if packed {
            let bit = 8 * offset + step * bits;
            (bit.div_euclid(8), (bit + bits - 1).div_euclid(8))
        } else {
            let item = (bits + 7) / 8;
            (offset + step * item, offset + step * item + item - 1)
        };
        let within = |b: i128| usize::try_from(b).is_ok_and(|b| b < buffer.len());
        if !within(first) || !within(last) {
            return "outside".into();
        }
        let bytes = &buffer[first as usize..=last as usize];
        std::hint::black_box(bytes.iter().copied().max());
        read += bytes.len();
        for (i, n) in index.iter_mut().zip(shape).rev() {
            *i += 1;
            if *i < *n {
                break;
            }
            *i = 0;
        }
    }
    read.to_string()
}

fn main() {
    let mut out = io::BufWriter::new(io::stdout().lock());
    for line in io::stdin().lock().lines() {
        let line = line.expect("a line");
        let f: Vec<&str> = line.split(' ').collect();
        let (mut shape, mut strides) = (list(f[8]), list(f[9]));
        let mut buffer: Vec<u8> = Vec::new();
        let data: *mut c_void = match f[11].split_once(':') {
            None => ptr::null_mut(),
            Some(("buffer", n)) => {
                buffer = vec![0u8; number(n)];
                buffer.as_mut_ptr().cast()
            }
            Some(("address", a)) => ptr::without_provenance_mut(number(a)),
            Some(other) => panic!("data {other:?}"),
        };
        let dl_tensor = DLTensor {
            data,
            device: DLDevice {
                device_type: DLDeviceType(number(f[2])),
                device_id: number(f[3]),
                ..DLDevice::ZERO
            },
            ndim: number(f[7]),
            dtype: DLDataType {
                code: number(f[4]),
                bits: number(f[5]),
                lanes: number(f[6]),
                ..DLDataType::ZERO
            },
            shape: shape.as_mut().map_or(ptr::null_mut(), |s| s.as_mut_ptr()),
            strides: strides.as_mut().map_or(ptr::null_mut(), |s| s.as_mut_ptr()),
            byte_offset: number(f[10]),
            ..DLTensor::ZERO
        };
        CALLS.store(0, Ordering::SeqCst);
        let imported = match f[0].split_once('.') {
            Some((major, minor)) => {
                let m = Box::into_raw(Box::new(DLManagedTensorVersioned {
                    version: DLPackVersion {
                        major: number(major),
                        minor: number(minor),
                        ..DLPackVersion::ZERO
                    },
                    manager_ctx: ptr::null_mut(),
                    deleter: Some(count_versioned),
                    flags: number(f[1]),
                    dl_tensor,
                    ..DLManagedTensorVersioned::ZERO
                }));
                // SAFETY: m is the producer's tensor, handed over once.
                let imported = unsafe { ManagedTensor::from_versioned(m) };
                (imported, Some(m), None)
            }
            None => {
                assert_eq!(f[0], "legacy");
                let m = Box::into_raw(Box::new(DLManagedTensor {
                    dl_tensor,
                    manager_ctx: ptr::null_mut(),
                    deleter: Some(count_legacy),
                    ..DLManagedTensor::ZERO
                }));
                // SAFETY: as above.
                let imported = unsafe { ManagedTensor::from_legacy(m) };
                (imported, None, Some(m))
            }
        };
        let verdict = match imported.0 {
            Ok(t) => {
                let before = CALLS.load(Ordering::SeqCst);
                let bytes = read(&t, &buffer);
                drop(t);
                format!("accept {before} {} {bytes}", CALLS.load(Ordering::SeqCst))
            }
            Err(e) => {
                let rule = e.rule().map_or("-", |r| r.id());
                format!("refuse {} {rule} {e}", CALLS.load(Ordering::SeqCst))
            }
        };
        // SAFETY: the deleter only counts: the producer frees its structs.
        if let Some(m) = imported.1 {
            drop(unsafe { Box::from_raw(m) });
        }
        if let Some(m) = imported.2 {
            drop(unsafe { Box::from_raw(m) });
        }
        writeln!(out, "{verdict}").expect("stdout");
    }
}
