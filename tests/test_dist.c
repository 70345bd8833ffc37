/* test_dist.c - kite outside its own tree: committed out/ is what kite-gen
   writes, every variant compiled, vendoring and extending work, and every
   GPU's measured files make its table.  Each case runs one case of
   tests/dist.sh in a fresh temporary folder. */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The vendor case compiles one variant of each op and dtype in its own tree
   (82 s on two cores).  Check cannot report a case that runs past 2147 s: its
   duration field overflows and the case counts as an error. */
#define DIST_TIMEOUT_S 1200

static int dist_run(const char *name)
{
  char tmp[] = "/tmp/kite-dist-XXXXXX", cmd[512];
  ck_assert_ptr_nonnull(mkdtemp(tmp));
  snprintf(cmd, sizeof cmd, "bash tests/dist.sh %s %s", name, tmp);
  int rc = system(cmd);
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
  if (system(cmd) != 0) fprintf(stderr, "test_dist: could not remove %s\n", tmp);
  return rc;
}

START_TEST(committed_out_is_fresh_gen) { ck_assert_int_eq(dist_run("committed"), 0); }
END_TEST

START_TEST(every_variant_compiled) { ck_assert_int_eq(dist_run("compiled"), 0); }
END_TEST

START_TEST(vendored_copy_builds_and_links) { ck_assert_int_eq(dist_run("vendor"), 0); }
END_TEST

START_TEST(new_template_is_generated_and_runs) { ck_assert_int_eq(dist_run("extend"), 0); }
END_TEST

START_TEST(every_gpu_table_is_generated) { ck_assert_int_eq(dist_run("tables"), 0); }
END_TEST

int main(void)
{
  Suite *s = suite_create("dist");
  TCase *tc = tcase_create("dist");
  tcase_set_timeout(tc, DIST_TIMEOUT_S);
  tcase_add_test(tc, committed_out_is_fresh_gen);
  tcase_add_test(tc, every_variant_compiled);
  tcase_add_test(tc, vendored_copy_builds_and_links);
  tcase_add_test(tc, new_template_is_generated_and_runs);
  tcase_add_test(tc, every_gpu_table_is_generated);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
