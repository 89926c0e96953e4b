# jax 0.10.2: consumer/versioned/contiguous (fail)
# requires: from_dlpack imports a contiguous CPU tensor of a dtype the library has.
# source: Python array API standard 2024.12, from_dlpack
# got: raised BufferError: this producer exports versioned capsules only: pass max_version=(1, x)
# Run from the kit's directory (dlgen -lang conformance -out DIR; cd DIR/conformance).
import jax
jax.config.update('jax_enable_x64', True)
import jax.numpy as xp
from dlpack_conformance import reference
producer = reference.Producer(shape=(2, 3), versioned=True, dtype=(2, 32, 1), values=[[-3.0, -2.5, -2.0], [-1.5, -1.0, -0.5]])
try:
    y = xp.from_dlpack(producer)
except Exception as error:
    reference.refused(error, 'consumer-basic', producer)
reference.check_values(producer, y, lambda y: y.tolist(), [[-3.0, -2.5, -2.0], [-1.5, -1.0, -0.5]])
reference.check_requests(producer)
del y
reference.check_released(producer)
