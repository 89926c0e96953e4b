/* The harness of docs/c.md's check: its #include lines come first, and its
 * statements are the body of take, which main calls with a tensor of
 * negative ndim: the check refuses it, and its deleter runs once. */
#include <stdio.h>
#include <string.h>

static int take(DLManagedTensorVersioned *managed) {
  /* SNIPPET */
  return 0;
}

static int deleted;

static void deleter(DLManagedTensorVersioned *self) {
  (void)self;
  deleted++;
}

int main(void) {
  DLManagedTensorVersioned m;
  memset(&m, 0, sizeof m);
  m.version.major = DLPACK_MAJOR_VERSION;
  m.version.minor = DLPACK_MINOR_VERSION;
  m.deleter = deleter;
  m.dl_tensor.ndim = -1;
  return take(&m) == -1 && deleted == 1 ? 0 : 1;
}
