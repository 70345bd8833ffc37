/* test_tune.c - the tune's supervisor (bench_util.c: tune_supervise), on the
   CPU: a fake tune whose variants can crash, hang or exit mid-run, and the
   tsv that comes out.  The real tunes (kite-bench --tune, gemm --tune) run
   their timing in the same children on the GPU. */
#include "kite_test.h"

#include "bench_util.h"
#include "kite_table.h"

#define SHAPES 3

/* What the fake tune does, set before tune_supervise (its children inherit
   it): at shape `at`, variant `bad` crashes (SIGSEGV) or hangs, or the child
   exits before the shape's first variant (setting the shape up, say). */
enum fault { FAULT_NONE, FAULT_CRASH, FAULT_HANG, FAULT_OUTSIDE, FAULT_EARLY };
static struct {
  enum fault fault;
  int at;
  const char *bad;
  char marker[64];   /* a file: the outside fault happens once */
} fake;

static const char *const VARIANTS[] = { "v_a", "v_b", "v_c" };

static int fake_work(struct tune_run *run, void *ctx)
{
  (void)ctx;
  if (fake.fault == FAULT_EARLY) exit(1);   /* no device, say */
  if (!run->header_done) {
    fprintf(run->out, "# fake tune\n%s\n", TUNE_HEADER);
    tune_done(run, -1);
  }
  for (int k = 0; k < SHAPES; k++) {
    const struct tune_key key = { "rmsnorm", KITE_BF16, KITE_BF16, 8, 64 << k, 0 };
    struct ranking t;
    ranking_init(&t, 2);
    if (!tune_shape(run, k)) continue;
    for (int v = 0; v < 3; v++) {
      if (fake.fault == FAULT_OUTSIDE && k == fake.at && v == 0 && access(fake.marker, F_OK) != 0) {
        FILE *m = fopen(fake.marker, "w");
        if (m) fclose(m);
        exit(3);
      }
      if (!tune_try(run, k, &key, VARIANTS[v], "dev\t2026-12-03\tabc")) continue;
      if (k == fake.at && fake.bad && strcmp(VARIANTS[v], fake.bad) == 0) {
        if (fake.fault == FAULT_CRASH) raise(SIGSEGV);
        if (fake.fault == FAULT_HANG) pause();
      }
      ranking_add(&t, VARIANTS[v], 10.0 * (v + 1) + k);
      times_line(run->out, &key, VARIANTS[v], 10.0 * (v + 1) + k, 132);
    }
    tune_line(run->out, &key, &t, NULL, "dev\t2026-12-03\tabc");
    tune_done(run, k);
  }
  return 0;
}

/* A temporary file, open for update. */
static FILE *temp_file(void)
{
  char path[] = "/tmp/kite-tune-XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  unlink(path);
  FILE *f = fdopen(fd, "w+");
  ck_assert_ptr_nonnull(f);
  return f;
}

static void read_all(FILE *f, char *out, size_t len)
{
  rewind(f);
  size_t got = fread(out, 1, len - 1, f);
  out[got] = '\0';
  fclose(f);
}

/* Runs the fake tune; its tsv in out, its aux lines in aux (both of size
   len); returns the supervisor's result. */
static int run_fake2(char *out, char *aux, size_t len)
{
  FILE *tsv = temp_file(), *times = temp_file();
  int rc = tune_supervise(tsv, times, fake_work, NULL);
  read_all(tsv, out, len);
  read_all(times, aux, len);
  return rc;
}

static int run_fake(char *out, size_t len)
{
  char aux[4096];
  return run_fake2(out, aux, len < sizeof aux ? len : sizeof aux);
}

static int count_lines(const char *s, const char *needle)
{
  int n = 0;
  for (const char *p = s; (p = strstr(p, needle)); p++) n++;
  return n;
}

#define LINE(n, best, us, second, us2) \
  "rmsnorm\tbf16\tbf16\t8\t" #n "\t0\t" best "\t" us "\t" second "\t" us2 "\tdev\t2026-12-03\tabc\n"

START_TEST(clean_run)
{
  char out[4096], aux[4096];
  fake.fault = FAULT_NONE;
  ck_assert_int_eq(run_fake2(out, aux, sizeof out), 0);
  ck_assert_int_eq(count_lines(aux, "\n"), SHAPES * 3);
  KT_ASSERT_HAS(aux, "rmsnorm\tbf16\tbf16\t8\t256\t0\tv_c\t32.000\t132\n");
  ck_assert_str_eq(out, "# fake tune\n" TUNE_HEADER "\n" LINE(64, "v_a", "10.000", "v_b", "20.000")
                        LINE(128, "v_a", "11.000", "v_b", "21.000") LINE(256, "v_a", "12.000", "v_b", "22.000"));
}
END_TEST

START_TEST(crashed_variant_is_failed_and_the_run_goes_on)
{
  char out[4096], aux[4096];
  fake.fault = FAULT_CRASH;
  fake.at = 1;
  fake.bad = "v_a";
  ck_assert_int_eq(run_fake2(out, aux, sizeof out), 0);
  /* the aux lines of the lost child's shape 1 are dropped, the new child's kept */
  ck_assert_int_eq(count_lines(aux, "\n"), 3 + 2 + 3);
  ck_assert_int_eq(count_lines(aux, "\t128\t0\tv_a\t"), 0);
  KT_ASSERT_HAS(aux, "rmsnorm\tbf16\tbf16\t8\t128\t0\tv_b\t21.000\t132\n");
  ck_assert_str_eq(out, "# fake tune\n" TUNE_HEADER "\n" LINE(64, "v_a", "10.000", "v_b", "20.000")
                        LINE(128, "v_a", "failed", "-", "-") LINE(128, "v_b", "21.000", "v_c", "31.000")
                        LINE(256, "v_a", "12.000", "v_b", "22.000"));
}
END_TEST

START_TEST(hung_variant_is_killed)
{
  char out[4096];
  setenv("KITE_TUNE_STALL_S", "1", 1);
  fake.fault = FAULT_HANG;
  fake.at = 2;
  fake.bad = "v_c";
  ck_assert_int_eq(run_fake(out, sizeof out), 0);
  ck_assert_int_eq(count_lines(out, "\tv_c\tfailed\t"), 1);
  KT_ASSERT_HAS(out, LINE(256, "v_a", "12.000", "v_b", "22.000"));
  ck_assert_int_eq(count_lines(out, "\n"), 2 + SHAPES + 1);
}
END_TEST

START_TEST(loss_outside_a_variant_skips_the_shape)
{
  char out[4096];
  fake.fault = FAULT_OUTSIDE;
  fake.at = 1;
  snprintf(fake.marker, sizeof fake.marker, "/tmp/kite-tune-marker-%d", (int)getpid());
  unlink(fake.marker);
  ck_assert_int_eq(run_fake(out, sizeof out), 0);
  unlink(fake.marker);
  ck_assert_int_eq(count_lines(out, "# shape 1 of this tune skipped: exit 3"), 1);
  ck_assert_ptr_null(strstr(out, "\t128\t0\t"));
  KT_ASSERT_HAS(out, LINE(256, "v_a", "12.000", "v_b", "22.000"));
}
END_TEST

START_TEST(child_lost_before_any_shape_stops_the_tune)
{
  char out[4096];
  fake.fault = FAULT_EARLY;
  ck_assert_int_eq(run_fake(out, sizeof out), -1);
  ck_assert_str_eq(out, "");
}
END_TEST

/* The benches' "# dispatch:" line: kite_explain's note on the measured set,
   without its brackets, naming one of the table's sets. */
START_TEST(dispatch_set_names_a_table)
{
  char buf[320], small[12];
  bench_dispatch_set(buf, sizeof buf);
  ck_assert_msg(strncmp(buf, "table ", 6) == 0 && !strchr(buf, '[') && !strchr(buf, ']'), "%s", buf);
  int named = 0;
  for (int32_t i = 0; i < kite_gpu_tables_len; i++) {
    const char *g = kite_gpu_tables[i].gpu[0] ? kite_gpu_tables[i].gpu : "(unnamed)";
    const size_t n = strlen(g);
    named |= strncmp(buf + 6, g, n) == 0 && (buf[6 + n] == ' ' || buf[6 + n] == ',');
  }
  ck_assert_msg(named, "%s", buf);
  bench_dispatch_set(small, sizeof small);   /* truncated, terminated */
  ck_assert_int_eq((int)strlen(small), (int)sizeof small - 1);
}
END_TEST

/* A ranking keeps its fastest cap in order (a tie after the earlier), counts
   every variant added, and clamps cap to 1 ... RANKING_MAX; the tsv line
   names its first two (the confirm's ranking keeps three). */
START_TEST(ranking_keeps_the_fastest_in_order)
{
  static const char *const names[] = { "a", "b", "c", "d", "e", "f" };
  static const double us[] = { 5, 3, 4, 3, 1, 9 };
  struct ranking r;
  ranking_init(&r, 3);
  for (int i = 0; i < 6; i++) ranking_add(&r, names[i], us[i]);
  ck_assert_int_eq(r.seen, 6);
  ck_assert_int_eq(r.n, 3);
  ck_assert_str_eq(r.name[0], "e");
  ck_assert_str_eq(r.name[1], "b");   /* b and d tie at 3: the earlier first */
  ck_assert_str_eq(r.name[2], "d");
  ck_assert(r.us[0] == 1 && r.us[1] == 3 && r.us[2] == 3);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  const struct tune_key key = { "rmsnorm", KITE_BF16, KITE_BF16, 8, 64, 0 };
  tune_line(f, &key, &r, NULL, "dev\t2026-12-08\tabc");
  fclose(f);
  ck_assert_str_eq(text, "rmsnorm\tbf16\tbf16\t8\t64\t0\te\t1.000\tb\t3.000\tdev\t2026-12-08\tabc\n");
  free(text);
  ranking_init(&r, 0);
  ck_assert_int_eq(r.cap, 1);
  ranking_add(&r, "x", 2);
  ranking_add(&r, "y", 1);
  ck_assert(r.n == 1 && strcmp(r.name[0], "y") == 0);
  ranking_init(&r, RANKING_MAX + 5);
  ck_assert_int_eq(r.cap, RANKING_MAX);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("tune");
  TCase *tc = tcase_create("supervisor");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, clean_run);
  tcase_add_test(tc, crashed_variant_is_failed_and_the_run_goes_on);
  tcase_add_test(tc, hung_variant_is_killed);
  tcase_add_test(tc, loss_outside_a_variant_skips_the_shape);
  tcase_add_test(tc, child_lost_before_any_shape_stops_the_tune);
  tcase_add_test(tc, dispatch_set_names_a_table);
  tcase_add_test(tc, ranking_keeps_the_fastest_in_order);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
