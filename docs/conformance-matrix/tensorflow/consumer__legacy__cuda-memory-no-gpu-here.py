# tensorflow 2.21.0: consumer/legacy/cuda-memory-no-gpu-here (fail)
# requires: a consumer that renamed the capsule calls the deleter exactly once, when it no longer needs the tensor.
# source: DLPack C header (dlpack.h), DLManagedTensor(Versioned) deleter; DLPack Python specification (dmlc/dlpack docs/source/python_spec.rst)
# got: from_dlpack raised InvalidArgumentError: GPU:0 unknown device.; then: the consumer never renamed the capsule, yet called the deleter 1 times: the capsule's owner calls it again
# Run from the kit's directory (dlgen -lang conformance -out DIR; cd DIR/conformance).
import tensorflow as xp
from dlpack_conformance import reference
producer = reference.Producer(shape=(2, 3), device=(2, 0), data=4096, versioned=False, dtype=(2, 32, 1))
y = xp.experimental.dlpack.from_dlpack(producer.__dlpack__())
reference.accepted(producer, y, 'consumer-unsupported-device')
