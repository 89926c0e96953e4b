/* A libFuzzer target for dlpack_helpers.h: arbitrary bytes become a managed
 * tensor (versioned and legacy), which the checks judge; an accepted one
 * goes through every fact (count, bytes, byte range, contiguity, the
 * addresses of its first and last elements), each checked against what the
 * checks promise; and every refusal is formatted into buffers of every
 * size. Built with clang -fsanitize=fuzzer,address,undefined by
 * scripts/fuzz-c.sh (10 s in CI) and helpers_test.go (the committed
 * crashers in testdata/fuzz, as regression seeds). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlpack_helpers.h"

static void fail(const char *why) {
  fprintf(stderr, "fuzz_check: %s\n", why);
  abort();
}

/* Reads n bytes of the input (zeros past its end). */
static void take(const uint8_t **data, size_t *size, void *out, size_t n) {
  size_t k = n < *size ? n : *size;
  memset(out, 0, n);
  memcpy(out, *data, k);
  *data += k;
  *size -= k;
}

static void facts(const DLTensor *t, uint64_t flags) {
  int64_t count = dlgen_element_count(t), first = 0, end = 0, bytes = dlgen_byte_size(t, flags);
  int64_t index[DLGEN_MAX_NDIM];
  int32_t k;
  unsigned bit = 99;
  if (count < 0 || bytes < 0) {
    fail("negative count or size");
  }
  if (dlgen_byte_range(t, flags, &first, &end) != (count != 0)) {
    fail("a byte range for a tensor without elements");
  }
  if (count == 0) {
    return;
  }
  if (end <= first || first > (int64_t)t->byte_offset || end < (int64_t)t->byte_offset) {
    fail("a byte range that does not hold the first element");
  }
  if (dlgen_is_row_major(t) && end - first != bytes) {
    fail("a row-major tensor that is not compact");
  }
  (void)dlgen_is_column_major(t);
  for (k = 0; k < t->ndim; k++) {
    index[k] = 0;
  }
  if ((char *)dlgen_element_address(t, flags, index, &bit) != (char *)t->data + t->byte_offset || bit > 7) {
    fail("the first element is not at data + byte_offset");
  }
  for (k = 0; k < t->ndim; k++) {
    index[k] = t->shape[k] - 1;
  }
  {
    char *last = (char *)dlgen_element_address(t, flags, index, &bit);
    if (last < (char *)t->data + first || last >= (char *)t->data + end || bit > 7) {
      fail("the last element lies outside the byte range");
    }
  }
}

static void refusal(const dlgen_error *err) {
  char text[300];
  size_t n, full = dlgen_format_error(err, NULL, 0);
  for (n = 1; n < sizeof text && n <= full + 1; n += 7) {
    if (dlgen_format_error(err, text, n) != full || strlen(text) != (n - 1 < full ? n - 1 : full)) {
      fail("format_error truncates wrongly");
    }
  }
  if (dlgen_rule_id(err->rule)[0] == '\0') {
    fail("a refusal without a rule id");
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DLManagedTensorVersioned versioned;
  DLManagedTensor legacy;
  DLTensor *t = &versioned.dl_tensor;
  dlgen_error err;
  int64_t *shape, *strides;
  uint8_t pointers;
  uint64_t address;
  char name[24];
  DLDataType parsed;

  memset(&versioned, 0, sizeof versioned);
  take(&data, &size, &versioned.version, sizeof versioned.version);
  take(&data, &size, &versioned.flags, sizeof versioned.flags);
  take(&data, &size, &t->device, sizeof t->device);
  take(&data, &size, &t->dtype, sizeof t->dtype);
  take(&data, &size, &t->ndim, sizeof t->ndim);
  take(&data, &size, &t->byte_offset, sizeof t->byte_offset);
  take(&data, &size, &address, sizeof address);
  take(&data, &size, &pointers, sizeof pointers);
  if (pointers & 4) {
    versioned.version.major = DLPACK_MAJOR_VERSION;
  }
  shape = (int64_t *)malloc(DLGEN_MAX_NDIM * sizeof *shape);
  strides = (int64_t *)malloc(DLGEN_MAX_NDIM * sizeof *strides);
  take(&data, &size, shape, DLGEN_MAX_NDIM * sizeof *shape / 4); /* the first 16 */
  take(&data, &size, strides, DLGEN_MAX_NDIM * sizeof *strides / 4);
  memset(shape + DLGEN_MAX_NDIM / 4, 0, 3 * DLGEN_MAX_NDIM / 4 * sizeof *shape);
  memset(strides + DLGEN_MAX_NDIM / 4, 0, 3 * DLGEN_MAX_NDIM / 4 * sizeof *strides);
  t->shape = pointers & 1 ? NULL : shape;
  t->strides = pointers & 2 ? NULL : strides;
  t->data = (void *)(uintptr_t)address; /* never read */
  legacy.dl_tensor = *t;
  legacy.manager_ctx = NULL;
  legacy.deleter = NULL;

  if (dlgen_check_versioned(&versioned, &err) == DLGEN_OK) {
    facts(t, versioned.flags);
  } else {
    refusal(&err);
  }
  if (dlgen_check_legacy(&legacy, &err) == DLGEN_OK) {
    facts(&legacy.dl_tensor, 0);
  } else {
    refusal(&err);
  }
  take(&data, &size, name, sizeof name - 1);
  name[sizeof name - 1] = '\0';
  if (dlgen_parse_dtype(name, &parsed, &err) == DLGEN_OK) {
    char shown[64];
    dlgen_format_dtype(parsed, shown, sizeof shown);
    if (strcmp(shown, name) != 0 && !(parsed.lanes == 1 && strncmp(shown, name, strlen(shown)) == 0)) {
      fail("a parsed name shows as another");
    }
  } else {
    refusal(&err);
  }
  free(shape);
  free(strides);
  return 0;
}
