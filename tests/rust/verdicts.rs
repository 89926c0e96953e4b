//! Reads tensors, one a line (as tests/rust/corpus_test.go writes them),
//! makes each a DLManagedTensorVersioned as a C producer would, imports it
//! with ManagedTensor::from_versioned and prints the deleter's call count
//! and the verdict: `1 ok` or `1 refused: <message>`.

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};

use dlpack::*;

static CALLS: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn count(_: *mut DLManagedTensorVersioned) {
    CALLS.fetch_add(1, Ordering::SeqCst);
}

fn list(s: &str) -> Option<Vec<i64>> {
    if s == "null" {
        return None;
    }
    let inner = s.trim_start_matches('[').trim_end_matches(']');
    Some(
        inner
            .split(',')
            .filter(|x| !x.is_empty())
            .map(|x| x.parse().unwrap())
            .collect(),
    )
}

fn main() {
    let path = std::env::args().nth(1).expect("a corpus file");
    let mut buffer = [0f64; 8];
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let n = |i: usize| f[i].parse::<i128>().unwrap();
        let (mut shape, mut strides) = (list(f[11]), list(f[12]));
        let mut m = DLManagedTensorVersioned {
            version: DLPackVersion {
                major: n(0) as u32,
                minor: n(1) as u32,
            },
            manager_ctx: ptr::null_mut(),
            deleter: Some(count),
            flags: n(2) as u64,
            dl_tensor: DLTensor {
                data: if f[10] == "true" {
                    ptr::null_mut()
                } else {
                    buffer.as_mut_ptr().cast::<c_void>()
                },
                device: DLDevice {
                    device_type: DLDeviceType(n(3) as i32),
                    device_id: n(4) as i32,
                },
                ndim: n(8) as i32,
                dtype: DLDataType {
                    code: n(5) as u8,
                    bits: n(6) as u8,
                    lanes: n(7) as u16,
                },
                shape: shape.as_mut().map_or(ptr::null_mut(), |s| s.as_mut_ptr()),
                strides: strides.as_mut().map_or(ptr::null_mut(), |s| s.as_mut_ptr()),
                byte_offset: n(9) as u64,
            },
        };
        CALLS.store(0, Ordering::SeqCst);
        let verdict = match unsafe { ManagedTensor::from_versioned(&mut m) } {
            Ok(t) => {
                drop(t);
                "ok".to_string()
            }
            Err(e) => format!("refused: {e}"),
        };
        println!("{} {verdict}", CALLS.load(Ordering::SeqCst));
    }
}
