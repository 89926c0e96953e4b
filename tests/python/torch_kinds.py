"""Every kind of PyTorch tensor that could set a consumer's two roads apart
(PyTorch's C exchange API and __dlpack__), for the tests that compare them:
tests/python/test_torch_exchange.py (the Cython module) and
tests/rust/pyo3ext/test_pyo3.py (the Rust crate's PyO3 consumer). Import it
only where torch is installed."""
import warnings

import torch


def quietly(make):
    """make(), with the warnings of beta and deprecated kinds silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make()


def cplx():
    return torch.tensor([1 + 2j, 3 - 4j, -5 + 0.5j])


def grid():
    return torch.arange(12, dtype=torch.float32).reshape(3, 4)


# By what could set the two roads apart: the bits and flags the table
# ignores, layouts and devices __dlpack__ refuses, views. The value makes a
# new tensor of the kind.
KINDS = {
    "conjugate view": lambda: cplx().conj(),
    "conjugate of a transposed view": lambda: torch.complex(grid(), grid()).t().conj(),
    "conj resolved": lambda: cplx().conj().resolve_conj(),
    "negative view": lambda: torch._neg_view(grid()),
    "negative complex view": lambda: torch._neg_view(cplx()),
    "imaginary part of a conjugate view": lambda: cplx().conj().imag,
    "requires_grad": lambda: grid().requires_grad_(),
    "requires_grad, complex": lambda: cplx().requires_grad_(),
    "a result of autograd": lambda: grid().requires_grad_() * 2,
    "detached": lambda: grid().requires_grad_().detach(),
    "Parameter": lambda: torch.nn.Parameter(grid()),
    "Parameter without grad": lambda: torch.nn.Parameter(grid(), requires_grad=False),
    "inference mode": lambda: torch.inference_mode()(grid)(),
    "sparse COO": lambda: grid().to_sparse(),
    "sparse CSR": lambda: grid().to_sparse_csr(),
    "sparse CSC": lambda: grid().to_sparse_csc(),
    "sparse BSR": lambda: grid().to_sparse_bsr((1, 2)),
    "mkldnn": lambda: grid().to_mkldnn(),
    "quantized": lambda: torch.quantize_per_tensor(grid(), 0.1, 0, torch.qint8),
    "meta": lambda: torch.empty(3, 4, device="meta"),
    "nested": lambda: torch.nested.nested_tensor([torch.ones(2), torch.ones(3)]),
    "nested, jagged": lambda: torch.nested.nested_tensor([torch.ones(2), torch.ones(3)], layout=torch.jagged),
    "efficient zeros": lambda: torch._efficientzerotensor(3),
    "0-d": lambda: torch.tensor(3.5),
    "empty": lambda: torch.empty(0, 3),
    "empty, strided": lambda: torch.empty(4, 0)[::2],
    "transposed": lambda: grid().t(),
    "sliced with steps": lambda: grid()[::2, 1::2],
    "narrowed (storage offset)": lambda: grid()[1:, 2:],
    "selected row": lambda: grid()[2],
    "diagonal": lambda: grid().diagonal(),
    "expanded (stride 0)": lambda: torch.ones(1, 4).expand(3, 4),
    "permuted 3-d": lambda: torch.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1),
    "unfolded (overlapping)": lambda: torch.arange(10.0).unfold(0, 3, 2),
    "as_strided": lambda: torch.arange(10.0).as_strided((3, 3), (1, 2)),
    "real part": lambda: cplx().real,
    "view_as_real": lambda: torch.view_as_real(cplx()),
    "channels_last": lambda: torch.arange(24.0).reshape(1, 2, 3, 4).to(memory_format=torch.channels_last),
    "lazy clone (copy on write)": lambda: torch._lazy_clone(grid()),
    "64 dimensions": lambda: torch.ones((1,) * 64),
}
DUNDER_REFUSES = {"conjugate view", "conjugate of a transposed view", "requires_grad", "requires_grad, complex",
                  "a result of autograd", "Parameter", "sparse COO", "sparse CSR", "sparse CSC", "sparse BSR",
                  "mkldnn", "quantized", "meta"}
# Every dtype torch names, for the tests that take one tensor of each.
DTYPES = sorted({d for d in vars(torch).values() if isinstance(d, torch.dtype)}, key=str)
