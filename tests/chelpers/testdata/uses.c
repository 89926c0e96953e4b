/* Calls every helper of dlpack_helpers.h, so that each compiler in
 * helpers_test.go sees them all used, and runs where it can: it exits 0
 * when the helpers agree with the facts it knows. Built as C89 and later
 * and as C++98 and later. */
#include "dlpack_helpers.h"

static int deleted;

static void count_legacy(DLManagedTensor *m) {
  (void)m;
  deleted++;
}

int main(void) {
  int64_t shape[2], strides[2], index[2], first = 0, end = 0;
  float data[6];
  char text[128];
  DLManagedTensor legacy;
  DLDataType dtype;
  dlgen_error err;
  unsigned bit = 0;
  int ok = 1;
  memset(&legacy, 0, sizeof legacy);
  memset(data, 0, sizeof data);
  shape[0] = 2;
  shape[1] = 3;
  strides[0] = 1;
  strides[1] = 2;
  index[0] = 1;
  index[1] = 2;
  legacy.dl_tensor.data = data;
  legacy.dl_tensor.device.device_type = kDLCPU;
  legacy.dl_tensor.ndim = 2;
  legacy.dl_tensor.dtype.code = kDLFloat;
  legacy.dl_tensor.dtype.bits = 32;
  legacy.dl_tensor.dtype.lanes = 1;
  legacy.dl_tensor.shape = shape;
  legacy.dl_tensor.strides = strides;
  legacy.deleter = count_legacy;
  ok = ok && dlgen_check_legacy(&legacy, &err) == DLGEN_OK;
  ok = ok && dlgen_element_count(&legacy.dl_tensor) == 6;
  ok = ok && dlgen_byte_size(&legacy.dl_tensor, 0) == 24;
  ok = ok && dlgen_byte_range(&legacy.dl_tensor, 0, &first, &end) && first == 0 && end == 24;
  ok = ok && !dlgen_is_row_major(&legacy.dl_tensor) && dlgen_is_column_major(&legacy.dl_tensor);
  ok = ok && dlgen_element_address(&legacy.dl_tensor, 0, index, &bit) == (void *)&data[5] && bit == 0;
  ok = ok && dlgen_host_readable(kDLCPU) && dlgen_type_code_addressable(kDLFloat);
  ok = ok && dlgen_type_code_fixed_bits(kDLFloat) == 0 && dlgen_type_code_name(kDLInt) != NULL;
  ok = ok && dlgen_parse_dtype("float32x4", &dtype, &err) == DLGEN_OK && dtype.lanes == 4;
  ok = ok && dlgen_format_dtype(dtype, text, sizeof text) == 9 && strcmp(text, "float32x4") == 0;
  ok = ok && dlgen_dtype_name(dtype) != NULL && dlgen_data_may_be_null(0, 0, 0, 1, 1);
  ok = ok && dlgen_parse_dtype("float31", &dtype, &err) == DLGEN_RULE_DTYPE_NAME;
  ok = ok && dlgen_format_error(&err, text, 8) > 8 && strlen(text) == 7 && dlgen_rule_text(err.rule)[0] != '\0';
  legacy.dl_tensor.ndim = -1;
  ok = ok && dlgen_check_legacy(&legacy, &err) == DLGEN_RULE_NDIM_RANGE;
  ok = ok && dlgen_format_error(&err, text, sizeof text) > 0 && strcmp(dlgen_rule_id(err.rule), "ndim_range") == 0;
  legacy.dl_tensor.ndim = 2;
#ifdef DLGEN_VERSIONED_CAPSULE
  {
    dlgen_legacy_as_versioned as_versioned;
    dlgen_versioned_as_legacy as_legacy;
    DLManagedTensor *back;
    ok = ok && dlgen_check_versioned(dlgen_wrap_legacy(&as_versioned, &legacy, 0, NULL), &err) == DLGEN_OK;
    back = dlgen_wrap_versioned(&as_legacy, &as_versioned.tensor, NULL);
    back->deleter(back);
    back->deleter(back); /* forwarded once */
    dlgen_release_versioned(&as_versioned.tensor);
    ok = ok && deleted == 1;
  }
#else
  dlgen_release_legacy(&legacy);
  ok = ok && deleted == 1;
#endif
  ok = ok && dlgen_stride(&legacy.dl_tensor, 1) == 2;
  (void)dlgen_shape_may_be_null;
  (void)dlgen_strides_may_be_null;
  return ok ? 0 : 1;
}
