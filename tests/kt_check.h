/* kt_check.h - Check helpers that need nothing but Check and libc, shared by
 * the tests with CUDA (through kite_test.h) and without it (test_gen.c).
 *
 *   KT_ASSERT_HAS(text, part)   fails the running Check test unless part
 *                               occurs in text, and prints both when it fails
 *   KT_EXPECT(cond, fmt, ...)   ck_assert_msg for loops over elements: Check
 *                               is called only when cond fails */
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

/* A Check assertion costs ~1.8 us even when it passes: it records its
   location for the runner with one write(2) each time (2 M passing ones took
   3.5 s here, Check 0.15), so asserting each element of a 39 M-element output
   took over a minute.  cond is evaluated again when it fails: keep it free of
   side effects. */
#define KT_EXPECT(cond, ...)                         \
  do {                                               \
    if (!(cond)) ck_assert_msg(cond, __VA_ARGS__);   \
  } while (0)

#endif
