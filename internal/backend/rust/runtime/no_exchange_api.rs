//! The C exchange API appeared in DLPack 1.2: this release has none.

use pyo3::prelude::*;

use crate::ManagedTensor;

/// Always `None`: DLPack of this release has no C exchange API.
pub fn from_exchange_api(
    _obj: &Bound<'_, PyAny>,
    _stream: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<ManagedTensor>> {
    Ok(None)
}
