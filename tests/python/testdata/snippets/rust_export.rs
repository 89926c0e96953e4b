// The harness of docs/rust.md's Export example: lend returns the tensor,
// and main plays the consumer, calling its deleter.
use dlpack::DLManagedTensorVersioned;

fn lend() -> Result<*mut DLManagedTensorVersioned, dlpack::Error> {
    // SNIPPET
    Ok(m)
}

fn main() {
    let m = lend().unwrap();
    unsafe { ((*m).deleter.unwrap())(m) };
}
