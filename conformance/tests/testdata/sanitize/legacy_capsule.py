"""The same refusal through the legacy capsule-taking entry point: the user
makes the capsule (DLPack 0.x) and hands it to torch.utils.dlpack."""
import torch.utils.dlpack
from handmade import Buffer

capsule = Buffer([1.0], shape=(2**40, 2**40), strides=(0, 0)).__dlpack__()
try:
    torch.utils.dlpack.from_dlpack(capsule)
except RuntimeError as e:
    print("refused:", e)
del capsule
print("last line")
