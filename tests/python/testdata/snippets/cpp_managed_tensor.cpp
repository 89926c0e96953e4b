// The harness of docs/c.md's C++ owner: a tensor of negative ndim is
// refused, the constructor throws, and the deleter has run once.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <dlpack/dlpack_helpers.h>

// SNIPPET

static int deleted;

static void deleter(DLManagedTensorVersioned*) { deleted++; }

int main() {
  DLManagedTensorVersioned m;
  std::memset(&m, 0, sizeof m);
  m.version.major = DLPACK_MAJOR_VERSION;
  m.version.minor = DLPACK_MINOR_VERSION;
  m.deleter = deleter;
  m.dl_tensor.ndim = -1;
  try {
    ManagedTensor t(&m);
  } catch (const std::invalid_argument&) {
    return deleted == 1 ? 0 : 1;
  }
  return 1;
}
