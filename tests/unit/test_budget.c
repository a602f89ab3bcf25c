/* test_budget.c: budget values and budget files for `gputrace audit`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/gt_budget.h"
#include "unit.h"

static int pct_ok(const char *s, double want)
{
    double v = -1;
    return gt_parse_pct(s, &v) == 0 && v == want;
}

static int pct_bad(const char *s)
{
    double v = 12345;
    return gt_parse_pct(s, &v) == -1 && v == 12345;
}

static int bytes_ok(const char *s, uint64_t want)
{
    uint64_t v = 7;
    return gt_parse_bytes(s, &v) == 0 && v == want;
}

static int bytes_bad(const char *s)
{
    uint64_t v = 7;
    return gt_parse_bytes(s, &v) == -1 && v == 7;
}

static void test_pct(void)
{
    CHECK(pct_ok("0", 0));
    CHECK(pct_ok("20", 20));
    CHECK(pct_ok("12.5", 12.5));
    CHECK(pct_ok("100", 100));
    CHECK(pct_ok("7%", 7));
    CHECK(pct_ok("7 %", 7));
    CHECK(pct_ok("5.", 5));
    CHECK(pct_ok(".5", 0.5));
    CHECK(pct_bad(""));
    CHECK(pct_bad("abc"));
    CHECK(pct_bad("-1"));
    CHECK(pct_bad("100.01"));
    CHECK(pct_bad("1e1"));
    CHECK(pct_bad("inf"));
    CHECK(pct_bad("nan"));
    CHECK(pct_bad("0x10"));
    CHECK(pct_bad(" 5"));
    CHECK(pct_bad("5%%"));
    CHECK(pct_bad("5x"));
    CHECK(pct_bad("."));
    CHECK(pct_bad("1.2.3"));
}

static void test_bytes(void)
{
    CHECK(bytes_ok("0", 0));
    CHECK(bytes_ok("1000", 1000));
    CHECK(bytes_ok("1000B", 1000));
    CHECK(bytes_ok("1K", 1024));
    CHECK(bytes_ok("1KiB", 1024));
    CHECK(bytes_ok("1 KiB", 1024));
    CHECK(bytes_ok("3k", 3072));
    CHECK(bytes_ok("64M", 64ull << 20));
    CHECK(bytes_ok("64MiB", 64ull << 20));
    CHECK(bytes_ok("64mib", 64ull << 20));
    CHECK(bytes_ok("2G", 2ull << 30));
    CHECK(bytes_ok("2GiB", 2ull << 30));
    CHECK(bytes_ok("1T", 1ull << 40));
    CHECK(bytes_ok("18446744073709551615", UINT64_MAX));
    CHECK(bytes_bad("18446744073709551616"));
    CHECK(bytes_bad("17179869184G")); /* 2^34 GiB = 2^64 bytes */
    CHECK(bytes_ok("17179869183G", 17179869183ull << 30));
    CHECK(bytes_bad(""));
    CHECK(bytes_bad("K"));
    CHECK(bytes_bad("-1"));
    CHECK(bytes_bad("1.5M"));
    CHECK(bytes_bad("10 "));
    CHECK(bytes_bad("10KB")); /* ambiguous: not accepted */
    CHECK(bytes_bad("10Q"));
    CHECK(bytes_bad("1e6"));
    CHECK(bytes_bad(" 10"));
}

static void test_set(void)
{
    struct gt_budgets b;
    char err[256];
    memset(&b, 0, sizeof(b));
    CHECK(gt_budget_count(&b) == 0);
    CHECK(gt_budget_key("max-idle-pct") == GT_BUDGET_IDLE_PCT);
    CHECK(gt_budget_key("max-pageable-h2d-bytes") == GT_BUDGET_PAGEABLE_H2D_BYTES);
    CHECK(gt_budget_key("max-launch-bound-pct") == GT_BUDGET_LAUNCH_BOUND_PCT);
    CHECK(gt_budget_key("max-sync-pct") == GT_BUDGET_SYNC_PCT);
    CHECK(gt_budget_key("--max-sync-pct") == -1);
    CHECK(gt_budget_key("max-idle") == -1);
    CHECK(gt_budget_set(&b, "max-idle-pct", "20", err, sizeof(err)) == 0);
    CHECK(b.set[GT_BUDGET_IDLE_PCT] && b.pct[GT_BUDGET_IDLE_PCT] == 20);
    CHECK(gt_budget_set(&b, "max-pageable-h2d-bytes", "1MiB", err, sizeof(err)) == 0);
    CHECK(b.bytes == 1048576);
    CHECK(gt_budget_count(&b) == 2);
    CHECK(gt_budget_set(&b, "max-idle", "20", err, sizeof(err)) == -1);
    CHECK_STR(err, "unknown budget 'max-idle' (known: max-idle-pct, max-pageable-h2d-bytes, "
                   "max-launch-bound-pct, max-sync-pct, max-step-p99, max-straggler-wait-pct, max-rank-skew-pct)");
    CHECK(gt_budget_set(&b, "max-step-p99", "20ms", err, sizeof(err)) == 0);
    CHECK(b.set[GT_BUDGET_STEP_P99] && b.ns == 20000000);
    CHECK(gt_budget_set(&b, "max-step-p99", "20 parsecs", err, sizeof(err)) == -1);
    CHECK(strstr(err, "max-step-p99: '20 parsecs' is not a duration") == err);
    CHECK(b.ns == 20000000);
    b.set[GT_BUDGET_STEP_P99] = 0;
    CHECK(gt_budget_set(&b, "max-sync-pct", "lots", err, sizeof(err)) == -1);
    CHECK(strstr(err, "max-sync-pct: 'lots' is not a percent") == err);
    CHECK(!b.set[GT_BUDGET_SYNC_PCT]);
    CHECK(gt_budget_set(&b, "max-pageable-h2d-bytes", "1.5G", err, sizeof(err)) == -1);
    CHECK(strstr(err, "max-pageable-h2d-bytes: '1.5G' is not a byte count") == err);
    CHECK(b.bytes == 1048576);
    /* the job budgets: percents past 100 (a rank may compute twice as long), not per trace */
    int per_trace = gt_budget_count_per_trace(&b);
    CHECK(gt_budget_set(&b, "max-rank-skew-pct", "150%", err, sizeof(err)) == 0);
    CHECK(b.set[GT_BUDGET_RANK_SKEW_PCT] && b.pct[GT_BUDGET_RANK_SKEW_PCT] == 150);
    CHECK(gt_budget_set(&b, "max-straggler-wait-pct", "7.5", err, sizeof(err)) == 0);
    CHECK(b.pct[GT_BUDGET_STRAGGLER_WAIT_PCT] == 7.5);
    CHECK(gt_budget_is_rank(GT_BUDGET_RANK_SKEW_PCT) && gt_budget_is_rank(GT_BUDGET_STRAGGLER_WAIT_PCT));
    CHECK(!gt_budget_is_rank(GT_BUDGET_IDLE_PCT));
    CHECK(gt_budget_count_per_trace(&b) == per_trace);
    CHECK(gt_budget_count(&b) == per_trace + 2);
    CHECK(gt_budget_set(&b, "max-rank-skew-pct", "-5", err, sizeof(err)) == -1);
    CHECK(strstr(err, "max-rank-skew-pct: '-5' is not a percent (a number of 0 or more") == err);
    CHECK(gt_budget_set(&b, "max-rank-skew-pct", "2000000", err, sizeof(err)) == -1);
    CHECK(b.pct[GT_BUDGET_RANK_SKEW_PCT] == 150);
    CHECK(gt_budget_set(&b, "max-idle-pct", "150", err, sizeof(err)) == -1);
}

static void test_text(void)
{
    struct gt_budgets b;
    char err[256];
    memset(&b, 0, sizeof(b));
    const char *good = "# CI budgets\n"
                       "\n"
                       "max-idle-pct = 20\n"
                       "   max-sync-pct=10.5   # trailing comment\n"
                       "\tmax-pageable-h2d-bytes = 64 MiB\r\n"
                       "max-launch-bound-pct = 50%"; /* no final newline */
    CHECK(gt_budget_parse_text(&b, good, err, sizeof(err)) == 0);
    CHECK(gt_budget_count(&b) == 4);
    CHECK(b.pct[GT_BUDGET_IDLE_PCT] == 20 && b.line[GT_BUDGET_IDLE_PCT] == 3);
    CHECK(b.pct[GT_BUDGET_SYNC_PCT] == 10.5 && b.line[GT_BUDGET_SYNC_PCT] == 4);
    CHECK(b.bytes == (64ull << 20));
    CHECK(b.pct[GT_BUDGET_LAUNCH_BOUND_PCT] == 50);

    memset(&b, 0, sizeof(b));
    CHECK(gt_budget_parse_text(&b, "", err, sizeof(err)) == 0 && gt_budget_count(&b) == 0);
    CHECK(gt_budget_parse_text(&b, "# only\n\n   \n", err, sizeof(err)) == 0 && gt_budget_count(&b) == 0);

    const struct {
        const char *text, *err;
    } bad[] = {
        {"max-idle-pct = 20\nmax-idel-pct = 5\n", "line 2: unknown budget 'max-idel-pct'"},
        {"max-idle-pct = twenty\n", "line 1: max-idle-pct: 'twenty' is not a percent"},
        {"max-idle-pct = 120\n", "line 1: max-idle-pct: '120' is not a percent"},
        {"max-idle-pct 20\n", "line 1: expected 'KEY = VALUE', got 'max-idle-pct 20'"},
        {"max-idle-pct =\n", "line 1: max-idle-pct: no value after '='"},
        {"= 5\n", "line 1: no key before '='"},
        {"\n\nmax-sync-pct = 1\nmax-sync-pct = 2\n", "line 4: max-sync-pct is already set on line 3"},
        {"max-pageable-h2d-bytes = 10 MB\n", "line 1: max-pageable-h2d-bytes: '10 MB' is not a byte count"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(&b, 0, sizeof(b));
        err[0] = 0;
        int rc = gt_budget_parse_text(&b, bad[i].text, err, sizeof(err));
        CHECK(rc == -1);
        if (strncmp(err, bad[i].err, strlen(bad[i].err)) != 0) {
            unit_failed++;
            fprintf(stderr, "case %zu: got '%s', want prefix '%s'\n", i, err, bad[i].err);
        }
    }
}

static void test_file_and_merge(void)
{
    char dir[] = "/tmp/gt-budget-XXXXXX", path[128], err[512];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof(path), "%s/budgets.txt", dir);
    FILE *f = fopen(path, "w");
    fputs("max-idle-pct = 20\nmax-sync-pct = 10\n", f);
    fclose(f);
    struct gt_budgets file, cli;
    memset(&file, 0, sizeof(file));
    memset(&cli, 0, sizeof(cli));
    CHECK(gt_budget_load(&file, path, err, sizeof(err)) == 0);
    CHECK(gt_budget_set(&cli, "max-idle-pct", "5", err, sizeof(err)) == 0);
    CHECK(gt_budget_set(&cli, "max-pageable-h2d-bytes", "0", err, sizeof(err)) == 0);
    gt_budget_merge(&file, &cli);
    CHECK(gt_budget_count(&file) == 3);
    CHECK(file.pct[GT_BUDGET_IDLE_PCT] == 5);   /* the command line wins */
    CHECK(file.pct[GT_BUDGET_SYNC_PCT] == 10);  /* the file's own */
    CHECK(file.set[GT_BUDGET_PAGEABLE_H2D_BYTES] && file.bytes == 0);

    f = fopen(path, "w");
    fputs("# x\nmax-idle-pct = 20\nbogus = 1\n", f);
    fclose(f);
    memset(&file, 0, sizeof(file));
    CHECK(gt_budget_load(&file, path, err, sizeof(err)) == -1);
    char want[256];
    snprintf(want, sizeof(want), "%s:3: unknown budget 'bogus'", path);
    CHECK(strncmp(err, want, strlen(want)) == 0);

    f = fopen(path, "w");
    fwrite("max-idle-pct = 2\0\n", 1, 18, f);
    fclose(f);
    CHECK(gt_budget_load(&file, path, err, sizeof(err)) == -1);
    CHECK(strstr(err, "not a text file") != NULL);
    unlink(path);

    CHECK(gt_budget_load(&file, path, err, sizeof(err)) == -1);
    snprintf(want, sizeof(want), "%s: No such file or directory", path);
    CHECK_STR(err, want);
    CHECK(gt_budget_load(&file, dir, err, sizeof(err)) == -1); /* a directory */
    rmdir(dir);
}

int main(void)
{
    test_pct();
    test_bytes();
    test_set();
    test_text();
    test_file_and_merge();
    return unit_report("test_budget");
}
