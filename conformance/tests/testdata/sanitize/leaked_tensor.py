"""Paddle takes the tensor (renames the capsule) and never calls its
deleter: the buffer leaks once the array is gone."""
import paddle
from handmade import Buffer

y = paddle.utils.dlpack.from_dlpack(Buffer([1.0, 2.0, 3.0]))
print(y.tolist())
del y
print("last line")
