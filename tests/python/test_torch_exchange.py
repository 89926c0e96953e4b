"""dlpack_cython.from_dlpack(x) for a PyTorch tensor goes through PyTorch's
C exchange API, which is not held to refuse what torch.Tensor.__dlpack__
refuses. The fast path must answer exactly as __dlpack__ does, for every
kind of tensor: the same values, dtype, layout, device and flags, or the
same exception type. Each kind is taken three ways and compared with the
answer through __dlpack__ alone: from_dlpack(x), to_type(x, Tensor) (the
Cython API's managed_from_object) and the ctypes module (__dlpack__ only)."""
import warnings

import numpy as np
import pytest

import dlpack_ctypes as ct
from conftest import MODULES

pytestmark = pytest.mark.skipif("dlpack_cython" not in MODULES, reason="dlpack_cython is not built")
torch = pytest.importorskip("torch")
if not hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
    pytest.skip("this PyTorch has no C exchange API", allow_module_level=True)


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


def quietly(make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # beta and deprecated kinds say so
        return make()


z = lambda: torch.tensor([1 + 2j, 3 - 4j, -5 + 0.5j])  # noqa: E731
m = lambda: torch.arange(12, dtype=torch.float32).reshape(3, 4)  # noqa: E731

KINDS = {
    # The bits and flags the table's entry ignores.
    "conjugate view": lambda: z().conj(),
    "conjugate of a transposed view": lambda: torch.complex(m(), m()).t().conj(),
    "negative view": lambda: torch._neg_view(m()),
    "negative complex view": lambda: torch._neg_view(z()),
    "imaginary part of a conjugate view": lambda: z().conj().imag,
    "conj resolved": lambda: z().conj().resolve_conj(),
    "requires_grad": lambda: m().requires_grad_(),
    "requires_grad, complex": lambda: z().requires_grad_(),
    "a result of autograd": lambda: m().requires_grad_() * 2,
    "detached": lambda: m().requires_grad_().detach(),
    "Parameter": lambda: torch.nn.Parameter(m()),
    "Parameter without grad": lambda: torch.nn.Parameter(m(), requires_grad=False),
    "inference mode": lambda: torch.inference_mode()(m)(),
    # Layouts and devices __dlpack__ refuses.
    "sparse COO": lambda: m().to_sparse(),
    "sparse CSR": lambda: m().to_sparse_csr(),
    "sparse CSC": lambda: m().to_sparse_csc(),
    "sparse BSR": lambda: m().to_sparse_bsr((1, 2)),
    "mkldnn": lambda: m().to_mkldnn(),
    "quantized": lambda: torch.quantize_per_tensor(m(), 0.1, 0, torch.qint8),
    "meta": lambda: torch.empty(3, 4, device="meta"),
    "nested": lambda: torch.nested.nested_tensor([torch.ones(2), torch.ones(3)]),
    "nested, jagged": lambda: torch.nested.nested_tensor([torch.ones(2), torch.ones(3)], layout=torch.jagged),
    "efficient zeros": lambda: torch._efficientzerotensor(3),
    # Views and layouts of every sort.
    "0-d": lambda: torch.tensor(3.5),
    "empty": lambda: torch.empty(0, 3),
    "empty, strided": lambda: torch.empty(4, 0)[::2],
    "transposed": lambda: m().t(),
    "sliced with steps": lambda: m()[::2, 1::2],
    "narrowed (storage offset)": lambda: m()[1:, 2:],
    "selected row": lambda: m()[2],
    "diagonal": lambda: m().diagonal(),
    "expanded (stride 0)": lambda: torch.ones(1, 4).expand(3, 4),
    "permuted 3-d": lambda: torch.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1),
    "unfolded (overlapping)": lambda: torch.arange(10.0).unfold(0, 3, 2),
    "as_strided": lambda: torch.arange(10.0).as_strided((3, 3), (1, 2)),
    "real part": lambda: z().real,
    "view_as_real": lambda: torch.view_as_real(z()),
    "channels_last": lambda: torch.arange(24.0).reshape(1, 2, 3, 4).to(memory_format=torch.channels_last),
    "lazy clone (copy on write)": lambda: torch._lazy_clone(m()),
    "64 dimensions": lambda: torch.ones((1,) * 64),
}
REFUSED = {"conjugate view", "conjugate of a transposed view", "requires_grad", "requires_grad, complex",
           "a result of autograd", "Parameter", "sparse COO", "sparse CSR", "sparse CSC", "sparse BSR", "mkldnn",
           "quantized", "meta"}
DTYPES = sorted({d for d in vars(torch).values() if isinstance(d, torch.dtype)}, key=str)


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
    if kind in REFUSED:
        assert isinstance(want, type), "PyTorch's __dlpack__ refuses " + kind


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype_answers_as_dunder_dlpack(cy, dtype):
    check_agree(cy, quietly(lambda: make_dtype(dtype)))


def test_the_reported_cases_refuse(cy):
    """The three of the report: no silently wrong values, no grad."""
    zc = z().conj()
    with pytest.raises(BufferError):
        cy.from_dlpack(zc)
    with pytest.raises(BufferError):
        cy.from_dlpack(m().requires_grad_())
    np.testing.assert_array_equal(np.from_dlpack(cy.from_dlpack(zc.resolve_conj())), zc.resolve_conj().numpy())


def test_ordinary_tensors_still_take_the_table(cy):
    """The fast path stays: an ordinary tensor never calls __dlpack__."""
    class Watched(torch.Tensor):
        __dlpack_c_exchange_api__ = torch.Tensor.__dlpack_c_exchange_api__  # vouches for the table

        def __dlpack__(self, **kwargs):
            raise AssertionError("__dlpack__ was called")

    for x in (m(), torch.arange(5), z(), m().t()[1:]):
        w = x.as_subclass(Watched)
        t = cy.from_dlpack(w)
        assert t.data_ptr == x.data_ptr() and t.shape == tuple(x.shape)
        assert t.tobytes() == x.contiguous().numpy().tobytes()
