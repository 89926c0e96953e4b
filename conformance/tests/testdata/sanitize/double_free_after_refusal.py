"""A user hands PyTorch a view of one float repeated 2^40 x 2^40 times. PyTorch
refuses it (it cannot count the elements), calls the tensor's deleter, and
leaves the capsule named 'dltensor', whose destructor calls the deleter
again: a double free. Plain, the process aborts before its last line."""
import torch
from handmade import Buffer

huge = Buffer([1.0], shape=(2**40, 2**40), strides=(0, 0))
try:
    torch.from_dlpack(huge)
except RuntimeError as e:
    print("refused:", e)
print("last line")
