/* kt_check.h - Check helpers that need nothing but Check and libc, shared by
 * the tests with CUDA (through kite_test.h) and without it (test_gen.c).
 *
 *   KT_ASSERT_HAS(text, part)   fails the running Check test unless part
 *                               occurs in text, and prints both when it fails */
#ifndef KITE_KT_CHECK_H
#define KITE_KT_CHECK_H

#include <check.h>
#include <string.h>

#define KT_ASSERT_HAS(text, part)                                                              \
  do {                                                                                         \
    const char *kt_t_ = (text), *kt_p_ = (part);                                               \
    ck_assert_msg(kt_t_ && strstr(kt_t_, kt_p_), "%s:%d: \"%s\" not found in:\n%s", __FILE__, \
                  __LINE__, kt_p_, kt_t_ ? kt_t_ : "(null)");                                  \
  } while (0)

#endif
