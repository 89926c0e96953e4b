/* Not MSVC's string.h: a stand-in for the clang-cl tests (msvc_test.go),
 * which have no MSVC C runtime. It declares what dlpack_helpers.h uses of
 * <string.h> as the Universal CRT declares it (__cdecl, C linkage in C++),
 * and nothing else, so that a helper needing more fails to compile here. */
#ifndef DLGEN_TEST_MSVC_STRING_H_
#define DLGEN_TEST_MSVC_STRING_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void *__cdecl memcpy(void *dst, void const *src, size_t size);
void *__cdecl memset(void *dst, int value, size_t size);
size_t __cdecl strlen(char const *str);
int __cdecl strcmp(char const *str1, char const *str2);
int __cdecl strncmp(char const *str1, char const *str2, size_t max_count);

#ifdef __cplusplus
}
#endif

#endif
