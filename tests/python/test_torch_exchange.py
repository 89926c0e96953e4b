"""dlpack_cython.from_dlpack(x) for a PyTorch tensor goes through PyTorch's
C exchange API, which is not held to refuse what torch.Tensor.__dlpack__
refuses. The fast path must answer exactly as __dlpack__ does, for every
kind of tensor: the same values, dtype, layout, device and flags, or the
same exception type. Each kind is taken three ways and compared with the
answer through __dlpack__ alone: from_dlpack(x), to_type(x, Tensor) (the
Cython API's managed_from_object) and the ctypes module (__dlpack__ only)."""
import numpy as np
import pytest
import required

import dlpack_ctypes as ct
from harness import MODULES

pytestmark = pytest.mark.skipif("dlpack_cython" not in MODULES, reason="dlpack_cython is not built")
torch = required.module("torch")
if not hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
    pytest.skip("this PyTorch has no C exchange API", allow_module_level=True)
from torch_kinds import DTYPES, DUNDER_REFUSES, KINDS, cplx, grid, quietly  # noqa: E402 - after the skips


class DunderOnly:
    """x as a consumer without the exchange API reaches it: __dlpack__ only."""

    def __init__(self, x):
        self.x = x

    def __dlpack__(self, **kwargs):
        return self.x.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.x.__dlpack_device__()


def answer(take, x):
    """What a consumer gets: the tensor's description and bytes, or the
    exception type."""
    try:
        t = take(x)
    except Exception as e:  # the refusal, by type (the words are the producer's)
        return type(e)
    try:
        data = t.tobytes()
    except BufferError as e:  # a device the CPU cannot read
        data = str(e)
    return (t.dtype.name, t.shape, t.strides, t.byte_offset, t.data_ptr, t.device, t.readonly,
            getattr(t, "copied", None), data)


def make_dtype(dtype):
    try:
        return torch.zeros(3, dtype=dtype)
    except Exception:
        return torch.empty(3, dtype=dtype)  # no zeros kernel: bits, shell dtypes


@pytest.fixture(scope="module")
def cy():
    import dlpack_cython
    return dlpack_cython


def check_agree(cy, x):
    want = answer(lambda x: cy.from_dlpack(DunderOnly(x)), x)
    assert answer(cy.from_dlpack, x) == want, "the exchange API answers differently from __dlpack__"
    assert answer(lambda x: cy.to_type(x, cy.Tensor), x) == want, "managed_from_object differs"
    got = answer(ct.from_dlpack, x)  # the ctypes module: __dlpack__ only, its own checks
    assert got == want or (isinstance(want, type) and isinstance(got, type)), "dlpack_ctypes differs"
    return want


@pytest.mark.parametrize("kind", KINDS)
def test_exchange_api_answers_as_dunder_dlpack(cy, kind):
    x = quietly(KINDS[kind])
    want = check_agree(cy, x)
    if kind in DUNDER_REFUSES:
        assert isinstance(want, type), "PyTorch's __dlpack__ refuses " + kind


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype_answers_as_dunder_dlpack(cy, dtype):
    check_agree(cy, quietly(lambda: make_dtype(dtype)))


def test_the_reported_cases_refuse(cy):
    """The three of the report: no silently wrong values, no grad."""
    zc = cplx().conj()
    with pytest.raises(BufferError):
        cy.from_dlpack(zc)
    with pytest.raises(BufferError):
        cy.from_dlpack(grid().requires_grad_())
    np.testing.assert_array_equal(np.from_dlpack(cy.from_dlpack(zc.resolve_conj())), zc.resolve_conj().numpy())


def test_ordinary_tensors_still_take_the_table(cy):
    """The fast path stays: an ordinary tensor never calls __dlpack__."""
    class Watched(torch.Tensor):
        __dlpack_c_exchange_api__ = torch.Tensor.__dlpack_c_exchange_api__  # vouches for the table

        def __dlpack__(self, **kwargs):
            raise AssertionError("__dlpack__ was called")

    for x in (grid(), torch.arange(5), cplx(), grid().t()[1:]):
        w = x.as_subclass(Watched)
        t = cy.from_dlpack(w)
        assert t.data_ptr == x.data_ptr() and t.shape == tuple(x.shape)
        assert t.tobytes() == x.contiguous().numpy().tobytes()
