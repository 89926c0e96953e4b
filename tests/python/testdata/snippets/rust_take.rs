// The harness of docs/rust.md's ManagedTensor example: its statements are
// the body of take, m a tensor a producer handed over; main hands it NULL,
// which it refuses.
use dlpack::DLManagedTensorVersioned;

fn take(m: *mut DLManagedTensorVersioned) -> Result<(), dlpack::Error> {
    // SNIPPET
    Ok(())
}

fn main() {
    assert!(take(core::ptr::null_mut()).is_err());
}
