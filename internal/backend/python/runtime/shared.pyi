# Typing stubs of the hand-written API both modules share: dlgen appends it
# to dlpack_ctypes.pyi and dlpack_cython.pyi after the generated declarations,
# with the module's own Tensor (ctypes_tensor.pyi, cython_tensor.pyi).
import collections.abc
import typing

class DataType(typing.NamedTuple):
    code: int
    bits: int
    lanes: int
    @property
    def itemsize(self) -> int: ...
    @property
    def name(self) -> str: ...
    def __dlpack_data_type__(self) -> tuple[int, int, int]: ...

class Device(typing.NamedTuple):
    device_type: int
    device_id: int
    def __dlpack_device__(self) -> tuple[int, int]: ...

DTYPE_NAMES: tuple[str, ...]

def from_dlpack(
    x: typing.Any,
    /,
    *,
    device: typing.Any = ...,
    copy: bool | None = ...,
    readonly: bool | None = ...,
    stream: typing.Any = ...,
) -> Tensor: ...

# Adopts a DLManagedTensorVersioned* (versioned=True) or a DLManagedTensor*
# (versioned=False) that C code handed over.
def from_managed(
    address: int, /, *, versioned: bool = ..., readonly: bool | None = ...
) -> Tensor: ...

# Returns (address, versioned): the managed tensor x held, and whether it is
# a DLManagedTensorVersioned* (True) or a legacy DLManagedTensor* (False).
def to_managed(x: typing.Any, /, *, versioned: bool = ...) -> tuple[int, bool]: ...
def from_pointer(
    address: int,
    shape: collections.abc.Sequence[int],
    dtype: typing.Any,
    /,
    *,
    strides: collections.abc.Sequence[int] | None = ...,
    byte_offset: int = ...,
    device: typing.Any = ...,
    owner: typing.Any = ...,
    readonly: bool = ...,
    on_stream: collections.abc.Callable[[typing.Any], None] | None = ...,
    on_copy: collections.abc.Callable[[Device, typing.Any], typing.Any] | None = ...,
    byte_strides: collections.abc.Sequence[int] | None = ...,
) -> Tensor: ...
def from_buffer(obj: typing.Any, /, *, readonly: bool | None = ...) -> Tensor: ...

# What Tensor has in both modules: a base class of the stubs only (each
# module's Tensor derives from object), so that the API is written once.
class _TensorAPI:
    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def strides(self) -> tuple[int, ...]: ...
    @property
    def readonly(self) -> bool: ...
    @property
    def copied(self) -> bool: ...
    @property
    def byte_offset(self) -> int: ...
    @property
    def dtype(self) -> DataType: ...
    @property
    def device(self) -> Device: ...
    @property
    def ndim(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def data_ptr(self) -> int: ...
    @property
    def closed(self) -> bool: ...
    @property
    def __array_interface__(self) -> dict[str, typing.Any]: ...
    def is_contiguous(self) -> bool: ...
    def close(self) -> None: ...
    def tobytes(self) -> bytes: ...
    def __enter__(self) -> typing.Self: ...
    def __exit__(self, *exc: object) -> None: ...
    def __dlpack_device__(self) -> tuple[int, int]: ...
    def __dlpack__(
        self,
        *,
        stream: typing.Any = ...,
        max_version: tuple[int, int] | None = ...,
        dl_device: tuple[int, int] | None = ...,
        copy: bool | None = ...,
    ) -> typing.Any: ...
