/* The conformance corpus's C importer: reads tensors, one a line in the
 * format of conformance.Tensor.Line, makes each a real managed tensor as a C
 * producer would, with a deleter that counts its calls, and judges it with
 * dlpack_helpers.h's checks. It prints, for each:
 *   accept CALLS_BEFORE CALLS READ   (READ: bytes read, "-", or "outside")
 *   refuse CALLS RULE MESSAGE
 * A refused tensor's deleter is called at once (dlgen_release_*); an
 * accepted one's after its elements are read. Built by helpers_test.go. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlpack_helpers.h"

static int calls;

static void count_versioned(DLManagedTensorVersioned *m) {
  (void)m;
  calls++;
}

static void count_legacy(DLManagedTensor *m) {
  (void)m;
  calls++;
}

/* Reads "null" (returns 0) or "[a,b,...]" into out; at least one entry is
 * allocated by the caller. */
static int read_list(char **p, int64_t *out, int *n) {
  char *s = *p;
  *n = 0;
  if (strncmp(s, "null", 4) == 0) {
    *p = s + 4;
    return 0;
  }
  s++; /* [ */
  while (*s != ']') {
    out[(*n)++] = strtoll(s, &s, 10);
    if (*s == ',') {
      s++;
    }
  }
  *p = s + 1;
  return 1;
}

int main(void) {
  static char line[8192];
  while (fgets(line, sizeof line, stdin) != NULL) {
    DLManagedTensorVersioned versioned;
    DLManagedTensor legacy;
    DLTensor *t;
    dlgen_error err;
    dlgen_rule rule;
    int64_t shape[65], strides[65];
    int nshape, nstrides, legacy_tensor, before;
    unsigned major = 0, minor = 0;
    unsigned long long flags, byte_offset;
    int device_type, device_id, code, bits, lanes, ndim;
    char *p = line, *buffer = NULL;
    long long buffer_bytes = -1;

    memset(&versioned, 0, sizeof versioned);
    memset(&legacy, 0, sizeof legacy);
    legacy_tensor = strncmp(p, "legacy", 6) == 0;
    if (!legacy_tensor) {
      major = (unsigned)strtoul(p, &p, 10);
      minor = (unsigned)strtoul(p + 1, &p, 10);
    } else {
      p += 6;
    }
    flags = strtoull(p, &p, 10);
    device_type = (int)strtol(p, &p, 10);
    device_id = (int)strtol(p, &p, 10);
    code = (int)strtol(p, &p, 10);
    bits = (int)strtol(p, &p, 10);
    lanes = (int)strtol(p, &p, 10);
    ndim = (int)strtol(p, &p, 10);
    p++;
    t = legacy_tensor ? &legacy.dl_tensor : &versioned.dl_tensor;
    t->shape = read_list(&p, shape, &nshape) ? shape : NULL;
    p++;
    t->strides = read_list(&p, strides, &nstrides) ? strides : NULL;
    byte_offset = strtoull(p, &p, 10);
    p++;
    if (strncmp(p, "buffer:", 7) == 0) {
      buffer_bytes = strtoll(p + 7, NULL, 10);
      buffer = (char *)calloc((size_t)buffer_bytes, 1);
      t->data = buffer;
    } else if (strncmp(p, "address:", 8) == 0) {
      t->data = (void *)(uintptr_t)strtoull(p + 8, NULL, 10);
    }
    t->device.device_type = (DLDeviceType)device_type;
    t->device.device_id = device_id;
    t->dtype.code = (uint8_t)code;
    t->dtype.bits = (uint8_t)bits;
    t->dtype.lanes = (uint16_t)lanes;
    t->ndim = ndim;
    t->byte_offset = byte_offset;
    versioned.version.major = major;
    versioned.version.minor = minor;
    versioned.flags = flags;
    versioned.deleter = count_versioned;
    legacy.deleter = count_legacy;

    calls = 0;
    rule = legacy_tensor ? dlgen_check_legacy(&legacy, &err) : dlgen_check_versioned(&versioned, &err);
    if (rule != DLGEN_OK) {
      char message[512];
      if (legacy_tensor) {
        dlgen_release_legacy(&legacy);
      } else {
        dlgen_release_versioned(&versioned);
      }
      dlgen_format_error(&err, message, sizeof message);
      printf("refuse %d %s %s\n", calls, dlgen_rule_id(rule), message);
    } else {
      char read[32] = "-";
      int64_t first, end;
      uint64_t f = legacy_tensor ? 0 : versioned.flags;
      before = calls;
      if (buffer != NULL && dlgen_host_readable(t->device.device_type) && dlgen_byte_range(t, f, &first, &end)) {
        /* The elements reach [first, end) from data: inside the buffer,
         * or the checks let an out-of-bounds tensor through. */
        if (first < 0 || end > buffer_bytes) {
          strcpy(read, "outside");
        } else {
          long long sum = 0, i;
          for (i = first; i < end; i++) {
            sum += buffer[i];
          }
          sprintf(read, "%lld", (long long)(end - first) + sum);
        }
      }
      if (legacy_tensor) {
        dlgen_release_legacy(&legacy);
      } else {
        dlgen_release_versioned(&versioned);
      }
      printf("accept %d %d %s\n", before, calls, read);
    }
    free(buffer);
  }
  return 0;
}
