//! The safe layer of a generated crate (DLPack 1.0 and later), as a
//! consumer and a producer see it: deleters called exactly once in every
//! order and from any thread, validation before use, slices that honour
//! read-only, exports of Rust memory. Every crate from 1.0 carries it as
//! tests/safe_layer.rs; `cargo test` runs it, tests/rust under Miri too.
#![cfg(feature = "safe")]
// Structs are built from their ZERO even where every field is set, as the
// crate builds them, so that a field a later release adds breaks no test.
#![allow(clippy::needless_update)]

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use dlpack::rules::{self, Rule};
use dlpack::*;

/// A producer written as C would: a managed tensor over memory the test
/// owns, with shape and strides of its own and a deleter that counts.
struct Producer {
    versioned: DLManagedTensorVersioned,
    legacy: DLManagedTensor,
    dims: Vec<i64>,
    calls: Arc<AtomicUsize>,
}

struct Spec {
    version: (u32, u32),
    /// The shape's length unless set.
    ndim: Option<i32>,
    flags: u64,
    device: DLDevice,
    dtype: DLDataType,
    shape: Option<Vec<i64>>,
    strides: Option<Vec<i64>>,
    byte_offset: u64,
    data: *mut c_void,
}

const CPU: DLDevice = DLDevice {
    device_type: DLDeviceType::kDLCPU,
    device_id: 0,
    ..DLDevice::ZERO
};

fn f32_spec(data: &mut [f32], shape: &[i64]) -> Spec {
    let n = shape.len();
    let mut strides = vec![1i64; n];
    for i in (0..n.saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    Spec {
        version: (DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION),
        ndim: None,
        flags: 0,
        device: CPU,
        dtype: f32::DTYPE,
        shape: Some(shape.to_vec()),
        strides: Some(strides),
        byte_offset: 0,
        data: data.as_mut_ptr().cast(),
    }
}

unsafe extern "C" fn delete_versioned(m: *mut DLManagedTensorVersioned) {
    let p = unsafe { Box::from_raw((*m).manager_ctx.cast::<Producer>()) };
    p.calls.fetch_add(1, Ordering::SeqCst);
}

unsafe extern "C" fn delete_legacy(m: *mut DLManagedTensor) {
    let p = unsafe { Box::from_raw((*m).manager_ctx.cast::<Producer>()) };
    p.calls.fetch_add(1, Ordering::SeqCst);
}

impl Spec {
    /// Makes the producer's struct; the counter tells how often its
    /// deleter ran.
    fn produce(&self) -> (*mut Producer, Arc<AtomicUsize>) {
        let calls = Arc::new(AtomicUsize::new(0));
        let shape = self.shape.clone().unwrap_or_default();
        let ndim = self.ndim.unwrap_or(shape.len() as i32);
        let mut dims = shape.clone();
        dims.extend(self.strides.iter().flatten());
        let tensor = DLTensor {
            data: self.data,
            device: self.device,
            ndim,
            dtype: self.dtype,
            shape: ptr::null_mut(),
            strides: ptr::null_mut(),
            byte_offset: self.byte_offset,
            ..DLTensor::ZERO
        };
        let p = Box::into_raw(Box::new(Producer {
            versioned: DLManagedTensorVersioned {
                version: DLPackVersion {
                    major: self.version.0,
                    minor: self.version.1,
                },
                manager_ctx: ptr::null_mut(),
                deleter: Some(delete_versioned),
                flags: self.flags,
                dl_tensor: tensor,
                ..DLManagedTensorVersioned::ZERO
            },
            legacy: DLManagedTensor {
                dl_tensor: tensor,
                manager_ctx: ptr::null_mut(),
                deleter: Some(delete_legacy),
                ..DLManagedTensor::ZERO
            },
            dims,
            calls: calls.clone(),
        }));
        unsafe {
            let dims = (*p).dims.as_mut_ptr();
            for t in [
                ptr::addr_of_mut!((*p).versioned.dl_tensor),
                ptr::addr_of_mut!((*p).legacy.dl_tensor),
            ] {
                if self.shape.is_some() {
                    (*t).shape = dims;
                }
                if self.strides.is_some() {
                    (*t).strides = dims.add(shape.len());
                }
            }
            (*p).versioned.manager_ctx = p.cast();
            (*p).legacy.manager_ctx = p.cast();
        }
        (p, calls)
    }

    fn versioned(&self) -> (*mut DLManagedTensorVersioned, Arc<AtomicUsize>) {
        let (p, calls) = self.produce();
        (unsafe { ptr::addr_of_mut!((*p).versioned) }, calls)
    }

    fn legacy(&self) -> (*mut DLManagedTensor, Arc<AtomicUsize>) {
        let (p, calls) = self.produce();
        (unsafe { ptr::addr_of_mut!((*p).legacy) }, calls)
    }

    /// The verdict of a versioned import: the rule broken and its message
    /// for a refusal, after which the deleter must have run once.
    fn import(&self) -> Result<(), (Rule, String)> {
        let (m, calls) = self.versioned();
        match unsafe { ManagedTensor::from_versioned(m) } {
            Ok(t) => {
                assert_eq!(calls.load(Ordering::SeqCst), 0);
                drop(t);
                assert_eq!(calls.load(Ordering::SeqCst), 1);
                Ok(())
            }
            Err(e) => {
                assert_eq!(
                    calls.load(Ordering::SeqCst),
                    1,
                    "refused, and deleted once: {e}"
                );
                assert_eq!(e.kind(), ErrorKind::Malformed);
                assert_eq!(e.to_string(), e.message());
                Err((e.rule().expect("a refusal names its rule"), e.to_string()))
            }
        }
    }
}

#[test]
fn import_copies_the_description_and_deletes_once_on_drop() {
    let mut data = [1f32, 2., 3., 4., 5., 6.];
    let (m, calls) = f32_spec(&mut data, &[2, 3]).versioned();
    let t = unsafe { ManagedTensor::from_versioned(m) }.unwrap();
    assert_eq!(t.shape(), &[2, 3]);
    assert_eq!(t.strides(), &[3, 1]);
    assert_eq!(t.dtype(), f32::DTYPE);
    assert_eq!(t.device(), CPU);
    assert_eq!(t.len(), 6);
    assert_eq!(t.nbytes(), 24);
    assert!(t.is_contiguous() && t.is_host_accessible() && !t.is_read_only());
    assert_eq!(
        t.version(),
        Some(DLPackVersion {
            major: DLPACK_MAJOR_VERSION,
            minor: DLPACK_MINOR_VERSION,
            ..DLPackVersion::ZERO
        })
    );
    assert_eq!(unsafe { t.as_slice::<f32>() }.unwrap(), &data);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    drop(t);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn writes_through_a_slice_reach_the_producer_memory() {
    let mut data = [0f32; 4];
    let (m, calls) = f32_spec(&mut data, &[4]).versioned();
    let mut t = unsafe { ManagedTensor::from_versioned(m) }.unwrap();
    unsafe { t.as_mut_slice::<f32>() }.unwrap()[2] = 42.0;
    drop(t);
    assert_eq!(data, [0., 0., 42., 0.]);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn read_only_tensors_give_no_mutable_slice() {
    let mut data = [1f32, 2.];
    let mut spec = f32_spec(&mut data, &[2]);
    spec.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    let (m, calls) = spec.versioned();
    let mut t = unsafe { ManagedTensor::from_versioned(m) }.unwrap();
    assert!(t.is_read_only());
    let err = unsafe { t.as_mut_slice::<f32>() }.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ReadOnly);
    assert_eq!(unsafe { t.as_slice::<f32>() }.unwrap(), &[1., 2.]);
    drop(t);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn legacy_import_is_writable_until_set_read_only() {
    let mut data = [1f32, 2., 3.];
    let (m, calls) = f32_spec(&mut data, &[3]).legacy();
    let mut t = unsafe { ManagedTensor::from_legacy(m) }.unwrap();
    assert_eq!(t.version(), None);
    unsafe { t.as_mut_slice::<f32>() }.unwrap()[0] = 9.0;
    t.set_read_only();
    assert_eq!(
        unsafe { t.as_mut_slice::<f32>() }.unwrap_err().kind(),
        ErrorKind::ReadOnly
    );
    drop(t);
    assert_eq!(data[0], 9.0);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn legacy_null_strides_mean_row_major() {
    let mut data = [0f32; 6];
    let mut spec = f32_spec(&mut data, &[2, 3]);
    spec.strides = None;
    let (m, calls) = spec.legacy();
    let t = unsafe { ManagedTensor::from_legacy(m) }.unwrap();
    assert_eq!(t.strides(), &[3, 1]);
    drop(t);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn malformed_legacy_tensor_is_refused_and_deleted_once() {
    let mut data = [0f32; 2];
    let mut spec = f32_spec(&mut data, &[2]);
    spec.shape = Some(vec![-2]);
    let (m, calls) = spec.legacy();
    let err = unsafe { ManagedTensor::from_legacy(m) }.unwrap_err();
    assert_eq!(err.rule(), Some(Rule::ShapeNegative));
    assert_eq!(err.to_string(), "negative extent -2 in dimension 0");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn null_pointer_is_refused_without_a_deleter() {
    let err = unsafe { ManagedTensor::from_versioned(ptr::null_mut()) }.unwrap_err();
    assert_eq!(err.to_string(), "import of a NULL tensor");
    let err = unsafe { ManagedTensor::from_legacy(ptr::null_mut()) }.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Malformed);
}

#[test]
fn into_raw_gives_ownership_back() {
    let mut data = [0f32; 2];
    let (m, calls) = f32_spec(&mut data, &[2]).versioned();
    let t = unsafe { ManagedTensor::from_versioned(m) }.unwrap();
    let raw = t.into_raw();
    assert_eq!(raw, Raw::Versioned(ptr::NonNull::new(m).unwrap()));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    unsafe { raw.delete() };
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn a_tensor_dropped_on_another_thread_is_deleted_there_once() {
    let mut data = vec![0f32; 8];
    let (m, calls) = f32_spec(&mut data, &[8]).versioned();
    let t = unsafe { ManagedTensor::from_versioned(m) }.unwrap();
    std::thread::spawn(move || drop(t)).join().unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn slices_check_type_device_and_layout() {
    let mut data = [0f32; 6];
    let mut spec = f32_spec(&mut data, &[2, 3]);
    let (m, _) = spec.versioned();
    let t = unsafe { ManagedTensor::from_versioned(m) }.unwrap();
    assert_eq!(
        unsafe { t.as_slice::<i32>() }.unwrap_err().kind(),
        ErrorKind::ElementType
    );
    drop(t);

    spec.strides = Some(vec![1, 2]); // column-major
    let (m, _) = spec.versioned();
    let t = unsafe { ManagedTensor::from_versioned(m) }.unwrap();
    assert!(!t.is_contiguous());
    assert_eq!(
        unsafe { t.as_slice::<f32>() }.unwrap_err().kind(),
        ErrorKind::NotContiguous
    );
    drop(t);

    spec.strides = Some(vec![3, 1]);
    spec.device = DLDevice {
        device_type: DLDeviceType::kDLCUDA,
        device_id: 0,
        ..DLDevice::ZERO
    };
    let (m, calls) = spec.versioned();
    let t = unsafe { ManagedTensor::from_versioned(m) }.unwrap();
    assert!(!t.is_host_accessible(), "held, never read");
    assert_eq!(
        unsafe { t.as_bytes() }.unwrap_err().kind(),
        ErrorKind::NotOnCpu
    );
    drop(t);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn misaligned_data_gives_no_typed_slice_but_bytes() {
    let mut data = [0f32; 3];
    let mut spec = f32_spec(&mut data, &[2]);
    spec.byte_offset = 2;
    let (m, _) = spec.versioned();
    let t = unsafe { ManagedTensor::from_versioned(m) }.unwrap();
    assert_eq!(
        unsafe { t.as_slice::<f32>() }.unwrap_err().kind(),
        ErrorKind::Misaligned
    );
    assert_eq!(unsafe { t.as_bytes() }.unwrap().len(), 8);
}

#[test]
fn empty_tensor_may_have_null_data() {
    let mut spec = f32_spec(&mut [], &[0, 3]);
    spec.data = ptr::null_mut();
    spec.byte_offset = 16;
    let (m, calls) = spec.versioned();
    let t = unsafe { ManagedTensor::from_versioned(m) }.unwrap();
    assert!(t.is_empty());
    assert!(unsafe { t.as_slice::<f32>() }.unwrap().is_empty());
    drop(t);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn scalar_has_no_shape() {
    let mut data = [7f32];
    let mut spec = f32_spec(&mut data, &[]);
    spec.shape = None;
    spec.strides = None;
    let (m, _) = spec.versioned();
    let t = unsafe { ManagedTensor::from_versioned(m) }.unwrap();
    assert_eq!(t.ndim(), 0);
    assert_eq!(unsafe { t.as_slice::<f32>() }.unwrap(), &[7.0]);
}

#[test]
fn malformed_tensors_are_refused_by_the_rules_in_their_words() {
    let mut data = [0f32; 8];
    let ptr = data.as_mut_ptr();
    let base = || {
        let mut spec = f32_spec(&mut [], &[2, 2]);
        spec.data = ptr.cast();
        spec
    };
    let (major, minor) = (DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
    type Change = Box<dyn Fn(&mut Spec)>;
    let cases: Vec<(Change, Rule, String)> = vec![
        (
            Box::new(move |s| s.version = (major + 1, 0)),
            Rule::VersionMajor,
            format!(
                "DLPack major version {} is not supported (this consumer speaks {major}.{minor})",
                major + 1
            ),
        ),
        (
            Box::new(|s| s.shape = Some(vec![1; 65])),
            Rule::NdimRange,
            "ndim 65 is outside [0, 64]".into(),
        ),
        (
            Box::new(|s| s.ndim = Some(-1)),
            Rule::NdimRange,
            "ndim -1 is outside [0, 64]".into(),
        ),
        (
            Box::new(|s| {
                s.shape = None;
                s.ndim = Some(2);
            }),
            Rule::ShapeNull,
            "shape is NULL for a 2-dimensional tensor".into(),
        ),
        (
            Box::new(|s| s.dtype.code = 200),
            Rule::DtypeUnknown,
            "unknown DLDataTypeCode 200".into(),
        ),
        (
            Box::new(|s| s.dtype.code = DLDataTypeCode::kDLOpaqueHandle.0),
            Rule::DtypeOpaque,
            "kDLOpaqueHandle elements (code 3) cannot be addressed".into(),
        ),
        (
            Box::new(|s| s.dtype.bits = 0),
            Rule::DtypeZero,
            "invalid dtype: 0 bits, 1 lanes".into(),
        ),
        (
            Box::new(|s| s.dtype.lanes = 0),
            Rule::DtypeZero,
            "invalid dtype: 32 bits, 0 lanes".into(),
        ),
        (
            Box::new(|s| s.shape = Some(vec![2, -1])),
            Rule::ShapeNegative,
            "negative extent -1 in dimension 1".into(),
        ),
        (
            Box::new(|s| s.byte_offset = u64::MAX),
            Rule::ByteOffsetLimit,
            format!("byte_offset {} is not below 2^{}", u64::MAX, usize::BITS - 1),
        ),
        (
            Box::new(|s| {
                s.shape = Some(vec![1 << 40, 1 << 40]);
                s.strides = Some(vec![1 << 40, 1]);
            }),
            Rule::SizeLimit,
            format!(
                "the tensor holds too many elements: their count and bytes must stay below 2^{}",
                usize::BITS - 1
            ),
        ),
        (
            Box::new(|s| s.strides = Some(vec![i64::MIN, 1])),
            Rule::StrideLimit,
            format!(
                "stride {} in dimension 0 is too large: strides in elements and in bytes must stay below 2^{}",
                i64::MIN,
                usize::BITS - 1
            ),
        ),
        (
            Box::new(|s| s.data = ptr::null_mut()),
            Rule::DataNull,
            "data is NULL for a tensor with elements (4)".into(),
        ),
    ];
    for (change, rule, want) in cases {
        let mut spec = base();
        change(&mut spec);
        assert_eq!(spec.import(), Err((rule, want)));
    }
    if !DLTensor::STRIDES_NULLABLE.allows(Some(rules::VERSION), 2, false) {
        let mut spec = base();
        spec.strides = None;
        assert_eq!(spec.import().unwrap_err().0, Rule::StridesNull);
    }
    // 2^(P-1) - 1 float32 elements over one: their bytes reach 2^(P-1).
    let mut spec = base();
    spec.shape = Some(vec![(1 << (usize::BITS - 3)) - 1]);
    spec.strides = Some(vec![0]);
    assert_eq!(spec.import(), Ok(()), "2^(P-3) - 1 float32 elements");
    spec.shape = Some(vec![1 << (usize::BITS - 3)]);
    assert_eq!(spec.import().unwrap_err().0, Rule::SizeLimit);
    // Elements spread over more than half the address space.
    let mut spec = base();
    spec.shape = Some(vec![2, 2]);
    spec.strides = Some(vec![1 << (usize::BITS - 4), -(1 << (usize::BITS - 4))]);
    spec.byte_offset = 16;
    assert_eq!(spec.import().unwrap_err().0, Rule::SpanLimit);
    // The last element past 2^(P-1) bytes from data.
    let mut spec = base();
    spec.byte_offset = (1 << (usize::BITS - 1)) - 8;
    assert_eq!(spec.import().unwrap_err().0, Rule::OffsetLimit);
    // An element before address 0.
    let mut spec = base();
    spec.shape = Some(vec![2]);
    spec.strides = Some(vec![-(1 << 20)]);
    spec.data = ptr::without_provenance_mut(4096);
    let err = spec.import().unwrap_err();
    assert_eq!(err.0, Rule::AddressLimit);
    assert_eq!(
        err.1,
        "the elements lie outside the address space: data 4096 with byte_offset 0"
    );
}

#[test]
fn a_zero_extent_is_judged_the_same_wherever_it_sits() {
    let data = [0f32; 1];
    let verdict = |shape: Vec<i64>, strides: Vec<i64>| {
        let mut spec = f32_spec(&mut [], &[]);
        spec.data = data.as_ptr().cast_mut().cast();
        spec.shape = Some(shape);
        spec.strides = Some(strides);
        spec.import().map_err(|(rule, _)| rule)
    };
    assert_eq!(
        verdict(vec![1 << 40, 1 << 40, 0], vec![1, 1, 1]),
        Err(Rule::SizeLimit)
    );
    assert_eq!(
        verdict(vec![0, 1 << 40, 1 << 40], vec![1, 1, 1]),
        Err(Rule::SizeLimit)
    );
    assert_eq!(
        verdict(vec![2, 0], vec![i64::MIN, 1]),
        Err(Rule::StrideLimit)
    );
    assert_eq!(
        verdict(vec![0, 2], vec![1, i64::MIN]),
        Err(Rule::StrideLimit)
    );
}

#[test]
fn null_strides_follow_the_producer_version() {
    // The rule of a tensor's own version holds, in every release's crate:
    // NULL strides meant row-major before 1.2, and are refused from 1.2 on.
    let mut data = [0f32; 4];
    let mut spec = f32_spec(&mut data, &[2, 2]);
    spec.strides = None;
    spec.version = (1, 1);
    assert_eq!(
        spec.import(),
        Ok(()),
        "NULL strides mean row-major before 1.2"
    );
    spec.version = (1, 2);
    assert_eq!(
        spec.import(),
        Err((
            Rule::StridesNull,
            "strides is NULL for a 2-dimensional tensor of DLPack 1.2, \
             which DLPack 1.2 and later forbid"
                .into()
        ))
    );
    spec.version = (DLPACK_MAJOR_VERSION + 1, 0);
    assert_eq!(
        spec.import().unwrap_err().0,
        Rule::VersionMajor,
        "a 2.0 is not older than 1.2: its major is refused first"
    );
}

/// An owner that counts its drops and holds its elements inline, so that
/// an export whose data pointer were taken before the owner moved would
/// read freed stack memory.
struct Counted {
    values: [f32; 4],
    drops: Arc<AtomicUsize>,
}

impl AsMut<[f32]> for Counted {
    fn as_mut(&mut self) -> &mut [f32] {
        &mut self.values
    }
}

impl AsRef<[f32]> for Counted {
    fn as_ref(&self) -> &[f32] {
        &self.values
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

fn counted(values: [f32; 4]) -> (Counted, Arc<AtomicUsize>) {
    let drops = Arc::new(AtomicUsize::new(0));
    (
        Counted {
            values,
            drops: drops.clone(),
        },
        drops,
    )
}

#[test]
fn export_of_a_vec_round_trips_zero_copy() {
    let e = Export::from_vec(vec![1f32, 2., 3., 4., 5., 6.], &[2, 3]).unwrap();
    let m = e.into_raw();
    let data = unsafe { (*m).dl_tensor.data };
    assert_eq!(unsafe { (*m).flags }, 0);
    let mut t = unsafe { ManagedTensor::from_versioned(m) }.unwrap();
    assert_eq!(t.data(), data);
    assert_eq!(t.strides(), &[3, 1]);
    unsafe { t.as_mut_slice::<f32>() }.unwrap()[5] = 60.0;
    assert_eq!(
        unsafe { t.as_slice::<f32>() }.unwrap(),
        &[1., 2., 3., 4., 5., 60.]
    );
}

#[test]
fn export_deleter_drops_the_owner_once_from_another_thread() {
    let (owner, drops) = counted([1., 2., 3., 4.]);
    let e = Export::from_mut_owner(owner, Layout::of::<f32>(&[2, 2])).unwrap();
    let m = e.into_raw() as usize; // a consumer on another thread
    std::thread::spawn(move || {
        let m = m as *mut DLManagedTensorVersioned;
        let values = unsafe { std::slice::from_raw_parts((*m).dl_tensor.data.cast::<f32>(), 4) };
        assert_eq!(values, &[1., 2., 3., 4.], "the data moved with the owner");
        unsafe { ((*m).deleter.unwrap())(m) };
    })
    .join()
    .unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn export_dropped_unused_drops_the_owner_once() {
    let (owner, drops) = counted([0.; 4]);
    let e = Export::from_mut_owner(owner, Layout::of::<f32>(&[4])).unwrap();
    drop(e);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn export_from_a_shared_owner_is_read_only_and_not_legacy() {
    let (owner, drops) = counted([1., 2., 3., 4.]);
    let e = Export::from_owner(owner, Layout::of::<f32>(&[4])).unwrap();
    assert_eq!(
        e.flags() & DLPACK_FLAG_BITMASK_READ_ONLY,
        DLPACK_FLAG_BITMASK_READ_ONLY
    );
    let (err, e) = e.into_raw_legacy().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ReadOnly);
    assert_eq!(
        drops.load(Ordering::SeqCst),
        0,
        "the refused export is given back"
    );
    let mut t = unsafe { ManagedTensor::from_versioned(e.into_raw()) }.unwrap();
    assert!(t.is_read_only());
    assert_eq!(
        unsafe { t.as_mut_slice::<f32>() }.unwrap_err().kind(),
        ErrorKind::ReadOnly
    );
    drop(t);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn legacy_export_is_deleted_once() {
    let (owner, drops) = counted([1., 2., 3., 4.]);
    let e = Export::from_mut_owner(owner, Layout::of::<f32>(&[4])).unwrap();
    let m = e.into_raw_legacy().map_err(|(err, _)| err).unwrap();
    let t = unsafe { ManagedTensor::from_legacy(m) }.unwrap();
    assert_eq!(unsafe { t.as_slice::<f32>() }.unwrap(), &[1., 2., 3., 4.]);
    drop(t);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn strided_export_must_stay_within_its_owner() {
    let v: Box<[f32]> = vec![0.; 6].into_boxed_slice();
    let e = Export::from_mut_owner(v, Layout::of::<f32>(&[3, 2]).with_strides(&[1, 3])).unwrap();
    let t = unsafe { ManagedTensor::from_versioned(e.into_raw()) }.unwrap();
    assert!(!t.is_contiguous());

    let (owner, drops) = counted([0.; 4]);
    let err = Export::from_mut_owner(owner, Layout::of::<f32>(&[2, 2]).with_strides(&[3, 1]))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the tensor reaches bytes [0, 20) of memory holding 16 bytes"
    );
    assert_eq!(drops.load(Ordering::SeqCst), 1);

    let err = Export::from_vec(vec![0f32; 4], &[2, -2]).unwrap_err();
    assert_eq!(err.to_string(), "negative extent -2 in dimension 1");
}

#[test]
fn negative_strides_export_reaches_back_from_byte_offset() {
    let v = vec![1f32, 2., 3.];
    let layout = Layout {
        byte_offset: 8,
        ..Layout::of::<f32>(&[3]).with_strides(&[-1])
    };
    let e = Export::from_mut_owner(v, layout).unwrap();
    let m = e.into_raw();
    let first = unsafe { (*m).dl_tensor.data.cast::<f32>().add(2).read() };
    assert_eq!(first, 3.0);
    drop(unsafe { ManagedTensor::from_versioned(m) }.unwrap());
}

#[test]
fn any_owner_can_export_raw_memory() {
    let buf = Arc::new([5u8; 16]);
    let data = buf.as_ptr().cast_mut().cast::<c_void>();
    let layout = Layout::of::<u8>(&[4, 4]);
    let e = unsafe { Export::from_raw_parts(buf.clone(), data, layout, true) }.unwrap();
    assert_eq!(Arc::strong_count(&buf), 2);
    let t = unsafe { ManagedTensor::from_versioned(e.into_raw()) }.unwrap();
    assert_eq!(unsafe { t.as_slice::<u8>() }.unwrap(), &[5u8; 16]);
    drop(t);
    assert_eq!(Arc::strong_count(&buf), 1);
}

#[test]
fn copied_flag_reaches_the_consumer() {
    let mut e = Export::from_vec(vec![1u16, 2], &[2]).unwrap();
    e.set_copied();
    let t = unsafe { ManagedTensor::from_versioned(e.into_raw()) }.unwrap();
    assert!(t.is_copied());
}

#[test]
fn enums_hold_foreign_values() {
    let d = DLDeviceType(1234);
    assert_eq!(d.name(), None);
    assert_eq!(format!("{d:?}"), "DLDeviceType(1234)");
    assert_eq!(format!("{:?}", DLDeviceType::kDLCPU), "kDLCPU");
}

#[test]
fn exports_are_refused_by_the_rules_an_import_checks_in_the_same_words() {
    let mut memory = [0f32; 16];
    let data = memory.as_mut_ptr().cast::<c_void>();
    // A code of one width, where the release has one, with another.
    let fixed = (0..=u8::MAX)
        .map(DLDataTypeCode)
        .find_map(|c| c.fixed_bits().map(|bits| (c, bits)));
    let opaque = DLDataType {
        code: DLDataTypeCode::kDLOpaqueHandle.0,
        bits: 64,
        lanes: 1,
        ..DLDataType::ZERO
    };
    let huge = 1i64 << (usize::BITS - 3);
    let ones = vec![1i64; 65];
    /// The dtype, shape, strides, byte_offset, and the rule broken.
    type Case = (DLDataType, Vec<i64>, Vec<i64>, u64, Rule);
    let mut cases: Vec<Case> = vec![
        (f32::DTYPE, ones.clone(), ones, 0, Rule::NdimRange),
        (opaque, vec![2], vec![1], 0, Rule::DtypeOpaque),
        (f32::DTYPE, vec![2, -2], vec![2, 1], 0, Rule::ShapeNegative),
        (f32::DTYPE, vec![2], vec![1], 1 << 63, Rule::ByteOffsetLimit),
        (f32::DTYPE, vec![huge], vec![0], 0, Rule::SizeLimit),
        (f32::DTYPE, vec![2, 2], vec![huge, 1], 0, Rule::StrideLimit),
        (
            f32::DTYPE,
            vec![3, 3],
            vec![huge / 2, 1],
            0,
            Rule::SpanLimit,
        ),
        (
            f32::DTYPE,
            vec![2],
            vec![1],
            (1 << (usize::BITS - 1)) - 4,
            Rule::OffsetLimit,
        ),
    ];
    if let Some((code, bits)) = fixed {
        let dtype = DLDataType {
            code: code.0,
            bits: bits * 2,
            lanes: 1,
            ..DLDataType::ZERO
        };
        cases.push((dtype, vec![4], vec![1], 0, Rule::DtypeBits));
    }
    for (dtype, shape, strides, byte_offset, rule) in cases {
        let layout = Layout {
            byte_offset,
            ..Layout::new(dtype, &shape).with_strides(&strides)
        };
        let owner = Arc::new(());
        let export = unsafe { Export::from_raw_parts(owner.clone(), data, layout, false) };
        let err = export.unwrap_err();
        assert_eq!(err.rule(), Some(rule), "{err}");
        assert_eq!(
            Arc::strong_count(&owner),
            1,
            "a refused export drops its owner"
        );
        let spec = Spec {
            dtype,
            shape: Some(shape.clone()),
            strides: Some(strides.clone()),
            byte_offset,
            ..f32_spec(&mut memory, &[])
        };
        assert_eq!(
            spec.import(),
            Err((rule, err.to_string())),
            "{shape:?} {strides:?}"
        );
    }
    let err = Export::from_mut_owner(vec![0f32; 4], Layout::of::<f32>(&[2, 2]).with_strides(&[1]))
        .unwrap_err();
    assert_eq!(err.rule(), Some(Rule::StridesCount));
    assert_eq!(err.to_string(), "1 strides for 2 dimensions");
    // Memory the CPU cannot read is exported, and held by the consumer.
    let cuda = Layout {
        device: DLDevice {
            device_type: DLDeviceType::kDLCUDA,
            device_id: 1,
            ..DLDevice::ZERO
        },
        ..Layout::of::<f32>(&[4])
    };
    let e = unsafe { Export::from_raw_parts((), data, cuda, false) }.unwrap();
    let t = unsafe { ManagedTensor::from_versioned(e.into_raw()) }.unwrap();
    let err = unsafe { t.as_bytes() }.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotOnCpu);
    assert_eq!(err.rule(), Some(Rule::DeviceUnreadable));
    assert_eq!(
        err.to_string(),
        format!(
            "memory on device ({}, 1) cannot be read from the CPU",
            DLDeviceType::kDLCUDA.0
        )
    );
}

#[test]
fn rules_are_a_table_with_one_message_each() {
    for (i, rule) in Rule::ALL.into_iter().enumerate() {
        assert_eq!(Rule::from_id(rule.id()), Some(rule));
        assert_eq!(rule.to_string(), rule.id());
        assert!(Rule::ALL[..i].iter().all(|r| r.id() != rule.id()));
        assert!(["BufferError", "ValueError", "TypeError"].contains(&rule.python()));
        // Every placeholder names a parameter; rendering fills each.
        let args: Vec<String> = rule.params().iter().map(|p| format!("<{p}>")).collect();
        let shown: Vec<&dyn std::fmt::Display> =
            args.iter().map(|a| a as &dyn std::fmt::Display).collect();
        let message = rule.format(&shown).to_string();
        assert!(
            !message.contains('{') && !message.contains('}'),
            "{message}"
        );
        for p in rule.params() {
            assert_eq!(
                rule.text().contains(&format!("{{{p}}}")),
                message.contains(&format!("<{p}>")),
                "{rule} {p}"
            );
        }
    }
    assert_eq!(Rule::from_id("no_such_rule"), None);
    assert_eq!(
        Rule::NdimRange.format(&[&-1, &rules::MAX_NDIM]).to_string(),
        "ndim -1 is outside [0, 64]"
    );
    // Parameters in another order than the text's.
    assert_eq!(
        Rule::DtypeBits
            .format(&[&17u8, &"kDLFloat4_e2m1fn", &8u8, &4u8])
            .to_string(),
        "kDLFloat4_e2m1fn elements have 4 bits, not 8"
    );
    assert_eq!(Rule::StridesCount.python(), "ValueError");
    assert!(DLDeviceType::kDLCPU.is_host_readable() && !DLDeviceType::kDLCUDA.is_host_readable());
    assert!(!DLDeviceType(-1).is_host_readable());
    assert!(DLDataTypeCode::kDLFloat.is_addressable());
    assert!(
        !DLDataTypeCode::kDLOpaqueHandle.is_addressable() && !DLDataTypeCode(250).is_addressable()
    );
    assert_eq!(DLDataTypeCode::kDLFloat.fixed_bits(), None);
    assert!(DLTensor::SHAPE_NULLABLE.allows(Some((1, 0)), 0, false));
    assert!(!DLTensor::SHAPE_NULLABLE.allows(Some((1, 0)), 1, false));
    assert!(
        DLTensor::STRIDES_NULLABLE.allows(None, 3, false),
        "legacy: older than all"
    );
    assert!(DLTensor::DATA_NULLABLE.allows(Some((1, 0)), 2, true));
    assert!(!DLTensor::DATA_NULLABLE.allows(Some((1, 0)), 2, false));
}

#[test]
fn dtypes_show_and_parse_by_their_names() {
    assert!(!rules::DATA_TYPE_NAMES.is_empty());
    for n in rules::DATA_TYPE_NAMES {
        let one = DLDataType {
            code: n.code.0,
            bits: n.bits,
            lanes: 1,
            ..DLDataType::ZERO
        };
        assert_eq!(one.to_string(), n.name);
        assert_eq!(DLDataType::parse(n.name), Ok(one));
        let four = DLDataType { lanes: 4, ..one };
        assert_eq!(four.to_string(), format!("{}x4", n.name));
        assert_eq!(DLDataType::parse(&four.to_string()), Ok(four));
        if let Some(bits) = n.code.fixed_bits() {
            assert_eq!(bits, n.bits, "{}", n.name);
        }
    }
    assert_eq!(f32::DTYPE.to_string(), "float32");
    let unnamed = DLDataType {
        code: 2,
        bits: 7,
        lanes: 0,
        ..DLDataType::ZERO
    };
    assert_eq!(unnamed.to_string(), "DataType(code=2, bits=7, lanes=0)");
    let zero_lanes = DLDataType {
        lanes: 0,
        ..f32::DTYPE
    };
    assert_eq!(zero_lanes.to_string(), "DataType(code=2, bits=32, lanes=0)");
    for bad in [
        "f32",
        "float32x",
        "float32x0",
        "float32x01",
        "float32x65536",
        "float32x+4",
        "Float32",
        "",
    ] {
        let err = DLDataType::parse(bad).unwrap_err();
        let message = err.to_string();
        assert!(
            message.starts_with(&format!("unknown dtype name '{bad}'; known: int8, ")),
            "{message}"
        );
    }
    assert_eq!(
        DLDataType::parse("float32x65535").map(|d| d.lanes),
        Ok(65535)
    );
}
