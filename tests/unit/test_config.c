/* Settings parsing and output path expansion, without LD_PRELOAD. */
#include <stdlib.h>
#include "base/gt_config.h"
#include "unit.h"

static const char *env_keys[8], *env_vals[8];
static int env_n;

static const char *fake_getenv(const char *name)
{
    for (int i = 0; i < env_n; i++)
        if (strcmp(env_keys[i], name) == 0)
            return env_vals[i];
    return NULL;
}

static void set_env(const char *k, const char *v)
{
    env_keys[env_n] = k;
    env_vals[env_n++] = v;
}

static int count_lines(const char *w, int n, const char *needle)
{
    int hits = 0;
    for (int i = 0; i < n; i++) {
        if (strstr(w, needle))
            hits++;
        w += strlen(w) + 1;
    }
    return hits;
}

int main(void)
{
    struct gt_config c;
    char w[2048], out[256], err[256];

    env_n = 0;
    CHECK(gt_config_load(&c, fake_getenv, w, sizeof(w)) == 0);
    CHECK_STR(c.output, "gputrace-%n-%p.db");
    CHECK(c.stack_depth == 32);
    CHECK(c.buffer_events == 65536);

    env_n = 0;
    set_env("GPUTRACE_STACK_DEPTH", "0");
    set_env("GPUTRACE_OUTPUT", "/tmp/t-%p.db");
    set_env("GPUTRACE_BUFFER_EVENTS", "1024");
    CHECK(gt_config_load(&c, fake_getenv, w, sizeof(w)) == 0);
    CHECK(c.stack_depth == 0);
    CHECK(c.buffer_events == 1024);
    CHECK_STR(c.output, "/tmp/t-%p.db");

    const char *bad_depths[] = {"abc", "-1", "129", "", "12x", "99999999999999999999"};
    for (size_t i = 0; i < sizeof(bad_depths) / sizeof(*bad_depths); i++) {
        env_n = 0;
        set_env("GPUTRACE_STACK_DEPTH", bad_depths[i]);
        int n = gt_config_load(&c, fake_getenv, w, sizeof(w));
        CHECK(n == 1);
        CHECK(count_lines(w, n, "GPUTRACE_STACK_DEPTH") == 1);
        CHECK(c.stack_depth == 32);
    }
    env_n = 0;
    set_env("GPUTRACE_BUFFER_EVENTS", "1000"); /* not a power of two */
    set_env("GPUTRACE_OUTPUT", "");
    int n = gt_config_load(&c, fake_getenv, w, sizeof(w));
    CHECK(n == 2);
    CHECK(c.buffer_events == 65536);
    CHECK_STR(c.output, "gputrace-%n-%p.db");

    env_n = 0;
    CHECK(gt_config_load(&c, fake_getenv, w, sizeof(w)) == 0 && c.gpu_timing == 1);
    set_env("GPUTRACE_GPU_TIMING", "off");
    CHECK(gt_config_load(&c, fake_getenv, w, sizeof(w)) == 0 && c.gpu_timing == 0);
    env_n = 0;
    set_env("GPUTRACE_GPU_TIMING", "nsys");
    n = gt_config_load(&c, fake_getenv, w, sizeof(w));
    CHECK(n == 1 && c.gpu_timing == 1);
    CHECK(count_lines(w, n, "GPUTRACE_GPU_TIMING='nsys'") == 1);

    struct gt_path_vars v = {1234, "train", "node7", "3", 0};
    CHECK(gt_expand_output("gputrace-%n-%p.db", &v, out, sizeof(out), err, sizeof(err)) == 0);
    CHECK_STR(out, "gputrace-train-1234.db");
    CHECK(gt_expand_output("/t/%h/r%r-%p-%%.db", &v, out, sizeof(out), err, sizeof(err)) == 0);
    CHECK_STR(out, "/t/node7/r3-1234-%.db");
    CHECK(gt_expand_output("x-%q.db", &v, out, sizeof(out), err, sizeof(err)) == -1);
    CHECK(strstr(err, "%q") != NULL);
    CHECK(gt_expand_output("x-%", &v, out, sizeof(out), err, sizeof(err)) == -1);
    char small[8];
    CHECK(gt_expand_output("abcdefghijk", &v, small, sizeof(small), err, sizeof(err)) == -1);
    /* Environment values never add directories. */
    struct gt_path_vars evil = {1, "a/b", "..", "../../etc", 0};
    CHECK(gt_expand_output("%n_%h_%r", &evil, out, sizeof(out), err, sizeof(err)) == 0);
    CHECK(strchr(out, '/') == NULL);

    /* %w: the standby window's number (1 outside standby). */
    CHECK(gt_expand_output("t-%w.db", &v, out, sizeof(out), err, sizeof(err)) == 0);
    CHECK_STR(out, "t-1.db");
    struct gt_path_vars w7 = {1, "p", "h", "0", 7};
    CHECK(gt_expand_output("t-%p-w%w.db", &w7, out, sizeof(out), err, sizeof(err)) == 0);
    CHECK_STR(out, "t-1-w7.db");
    /* A standby pattern without %w gains -w%w before its extension. */
    CHECK(gt_output_per_window("gputrace-%n-%p.db", out, sizeof(out)) == 0);
    CHECK_STR(out, "gputrace-%n-%p-w%w.db");
    CHECK(gt_output_per_window("/a.b/trace", out, sizeof(out)) == 0);
    CHECK_STR(out, "/a.b/trace-w%w");
    CHECK(gt_output_per_window("x/.hidden", out, sizeof(out)) == 0);
    CHECK_STR(out, "x/.hidden-w%w");
    CHECK(gt_output_per_window("t-%w-%p.db", out, sizeof(out)) == 0);
    CHECK_STR(out, "t-%w-%p.db");
    CHECK(gt_output_per_window("100%%w.db", out, sizeof(out)) == 0);
    CHECK_STR(out, "100%%w-w%w.db");
    CHECK(gt_output_per_window("abcdefghijk.db", small, sizeof(small)) == -1);
    /* GPUTRACE_MODE */
    env_n = 0;
    CHECK(gt_config_load(&c, fake_getenv, w, sizeof(w)) == 0 && c.standby == 0);
    set_env("GPUTRACE_MODE", "standby");
    CHECK(gt_config_load(&c, fake_getenv, w, sizeof(w)) == 0 && c.standby == 1);
    env_n = 0;
    set_env("GPUTRACE_MODE", "stanby");
    n = gt_config_load(&c, fake_getenv, w, sizeof(w));
    CHECK(n == 1 && c.standby == 0);
    CHECK(count_lines(w, n, "GPUTRACE_MODE='stanby'") == 1);

    env_n = 0;
    CHECK_STR(gt_rank_from_env(fake_getenv), "0");
    set_env("SLURM_PROCID", "5");
    CHECK_STR(gt_rank_from_env(fake_getenv), "5");
    set_env("RANK", "2");
    CHECK_STR(gt_rank_from_env(fake_getenv), "2");
    /* steps and the trigger's settings */
    CHECK(gt_is_step_name("step", "") && gt_is_step_name("Step 12", "") && gt_is_step_name("train_step_3", ""));
    CHECK(gt_is_step_name("ProfilerStep#812", "") && gt_is_step_name("TRAINING_STEP-7", ""));
    CHECK(gt_is_step_name("step12", "") && !gt_is_step_name("step_", "") && !gt_is_step_name("step 1a", ""));
    CHECK(!gt_is_step_name("forward", "") && !gt_is_step_name("stepper", "") && !gt_is_step_name("12", ""));
    CHECK(!gt_is_step_name(NULL, "") && gt_is_step_name("iter 5", "iter *") && !gt_is_step_name("step", "iter *"));
    uint64_t ns = 0;
    CHECK(gt_parse_duration_ns("250ms", &ns) == 0 && ns == 250000000ull);
    CHECK(gt_parse_duration_ns("10m", &ns) == 0 && ns == 600000000000ull);
    CHECK(gt_parse_duration_ns("2", &ns) == 0 && ns == 2000000000ull);
    CHECK(gt_parse_duration_ns("-1s", &ns) < 0 && gt_parse_duration_ns("5 parsecs", &ns) < 0);
    CHECK(gt_parse_duration_ns("0", &ns) < 0 && gt_parse_duration_ns("", &ns) < 0);
    {
        struct gt_config c;
        char w[1024];
        env_n = 0;
        set_env("GPUTRACE_MODE", "standby");
        set_env("GPUTRACE_TRIGGER", "step-time>2.5x");
        set_env("GPUTRACE_TRIGGER_COOLDOWN", "1h");
        CHECK(gt_config_load(&c, fake_getenv, w, sizeof(w)) == 0);
        CHECK(c.trigger_step_factor == 2.5 && c.trigger_cooldown_ns == 3600000000000ull);
        CHECK(c.trigger_duration_ns == GT_DEFAULT_TRIGGER_DURATION_NS);
        env_n = 0;
        set_env("GPUTRACE_TRIGGER", "step-time>2x"); /* record mode: ignored, said once */
        set_env("GPUTRACE_TRIGGER_DURATION", "soon");
        int n = gt_config_load(&c, fake_getenv, w, sizeof(w));
        CHECK(n == 2 && c.trigger_step_factor == 0 && c.trigger_duration_ns == GT_DEFAULT_TRIGGER_DURATION_NS);
        CHECK(count_lines(w, n, "applies in standby") == 1 && count_lines(w, n, "GPUTRACE_TRIGGER_DURATION") == 1);
        env_n = 0;
        set_env("GPUTRACE_MODE", "standby");
        set_env("GPUTRACE_TRIGGER", "step-time>1x");
        n = gt_config_load(&c, fake_getenv, w, sizeof(w));
        CHECK(n == 1 && c.trigger_step_factor == 0);
        /* the idle rule, alone and beside the step rule */
        static const struct {
            const char *v;
            double k;
            int pct, ok;
        } rules[] = {
            {"idle>50%", 0, 50, 1}, {"idle>7", 0, 7, 1}, {"step-time>3x, idle>40%", 3, 40, 1},
            {"idle>40%,step-time>3x", 3, 40, 1}, {"idle>0%", 0, 0, 0}, {"idle>100%", 0, 0, 0},
            {"idle>-5%", 0, 0, 0}, {"idle>50%%", 0, 0, 0}, {"idle>50%,idle>60%", 0, 0, 0}, {",", 0, 0, 0},
            {"idle>50%,", 0, 50, 1}, {"idle>", 0, 0, 0},
        };
        for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
            env_n = 0;
            set_env("GPUTRACE_MODE", "standby");
            set_env("GPUTRACE_TRIGGER", rules[i].v);
            n = gt_config_load(&c, fake_getenv, w, sizeof(w));
            CHECK(n == !rules[i].ok && c.trigger_step_factor == rules[i].k && c.trigger_idle_pct == rules[i].pct);
            if (rules[i].ok != (n == 0))
                fprintf(stderr, "GPUTRACE_TRIGGER=%s: %d warnings\n", rules[i].v, n);
        }
    }
    {
        /* the flight recorder, the hang rule and the size bound (issue 38) */
        struct gt_config c;
        char w[1024];
        uint64_t a, b;
        int last;
        CHECK(gt_parse_size_bytes("256MiB", &a) == 0 && a == 256ull << 20);
        CHECK(gt_parse_size_bytes("1.5G", &a) == 0 && a == 3ull << 29);
        CHECK(gt_parse_size_bytes("256", &a) < 0 && gt_parse_size_bytes("10s", &a) < 0);
        CHECK(gt_parse_flight("30s", &a, &b) == 0 && a == 30000000000ull && b == 0);
        CHECK(gt_parse_flight("64MiB", &a, &b) == 0 && a == 0 && b == 64ull << 20);
        CHECK(gt_parse_flight("30s,512MiB", &a, &b) == 0 && a == 30000000000ull && b == 512ull << 20);
        CHECK(gt_parse_flight("30", &a, &b) < 0 && gt_parse_flight("512KiB", &a, &b) < 0);
        CHECK(gt_parse_flight("30s,1m", &a, &b) < 0 && gt_parse_flight("", &a, &b) < 0);
        CHECK(gt_parse_max_size("1GiB", &a, &last) == 0 && a == 1ull << 30 && !last);
        CHECK(gt_parse_max_size("64MiB:last", &a, &last) == 0 && a == 64ull << 20 && last);
        CHECK(gt_parse_max_size("64MiB:stop", &a, &last) == 0 && !last);
        CHECK(gt_parse_max_size("64MiB:first", &a, &last) < 0 && gt_parse_max_size("100K", &a, &last) < 0);
        env_n = 0;
        set_env("GPUTRACE_MODE", "standby");
        set_env("GPUTRACE_FLIGHT", "10s");
        set_env("GPUTRACE_TRIGGER", "hang>60s,step-time>2x");
        CHECK(gt_config_load(&c, fake_getenv, w, sizeof(w)) == 0);
        CHECK(c.flight_ns == 10000000000ull && c.flight_bytes == GT_DEFAULT_FLIGHT_BYTES);
        CHECK(c.trigger_hang_ns == 60000000000ull && c.trigger_step_factor == 2);
        env_n = 0;
        set_env("GPUTRACE_FLIGHT", "10s"); /* record mode: ignored, said once */
        set_env("GPUTRACE_MAX_SIZE", "2MiB:last");
        int n = gt_config_load(&c, fake_getenv, w, sizeof(w));
        CHECK(n == 1 && c.flight_bytes == 0 && count_lines(w, n, "applies in standby") == 1);
        CHECK(c.max_size_bytes == 2ull << 20 && c.max_size_keep_last);
        env_n = 0;
        set_env("GPUTRACE_MODE", "standby");
        set_env("GPUTRACE_TRIGGER", "hang>60"); /* a bare number: no unit, refused */
        n = gt_config_load(&c, fake_getenv, w, sizeof(w));
        CHECK(n == 1 && c.trigger_hang_ns == 0);
    }
    {
        /* capture ranges (docs/standby.md, Capture ranges) */
        struct gt_config c;
        struct gt_capture_range cr;
        char w[1024], why[256];
        CHECK(gt_parse_capture_range("cudaProfilerApi", &cr, why, sizeof(why)) == 0 && cr.kind == GT_CAPTURE_PROFILER);
        CHECK(gt_parse_capture_range("nvtx:step*", &cr, why, sizeof(why)) == 0 && cr.kind == GT_CAPTURE_NVTX);
        CHECK_STR(cr.name, "step*");
        CHECK_STR(cr.domain, "");
        CHECK(gt_parse_capture_range("nvtx:a@b@dom", &cr, why, sizeof(why)) == 0); /* the last '@' splits */
        CHECK_STR(cr.name, "a@b");
        CHECK_STR(cr.domain, "dom");
        const char *bad[] = {"", "cudaprofilerapi", "nvtx", "nvtx:", "nvtx:@d", "nvtx:x@", "NVTX:x"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
            CHECK(gt_parse_capture_range(bad[i], &cr, why, sizeof(why)) < 0 && why[0]);
        CHECK(gt_parse_capture_end("repeat:3", &cr, why, sizeof(why)) == 0 && cr.end == GT_CAPTURE_END_REPEAT &&
              cr.max == 3);
        CHECK(gt_parse_capture_end("repeat", &cr, why, sizeof(why)) == 0 && cr.max == 0);
        CHECK(gt_parse_capture_end("none", &cr, why, sizeof(why)) == 0 && cr.end == GT_CAPTURE_END_NONE);
        const char *bad_end[] = {"", "repeat:0", "repeat:", "repeat:x", "stop-shutdown", "repeat-shutdown:2"};
        for (size_t i = 0; i < sizeof(bad_end) / sizeof(*bad_end); i++)
            CHECK(gt_parse_capture_end(bad_end[i], &cr, why, sizeof(why)) < 0 && why[0]);
        env_n = 0;
        set_env("GPUTRACE_CAPTURE_RANGE", "nvtx:phase@*");
        set_env("GPUTRACE_CAPTURE_RANGE_END", "repeat:2");
        CHECK(gt_config_load(&c, fake_getenv, w, sizeof(w)) == 0);
        CHECK(c.standby == 1 && c.capture.kind == GT_CAPTURE_NVTX && c.capture.end == GT_CAPTURE_END_REPEAT &&
              c.capture.max == 2);
        CHECK_STR(c.capture.domain, "*");
        env_n = 0;
        set_env("GPUTRACE_CAPTURE_RANGE", "soon");
        set_env("GPUTRACE_CAPTURE_RANGE_END", "stop-shutdown");
        int n = gt_config_load(&c, fake_getenv, w, sizeof(w));
        CHECK(n == 2 && c.standby == 0 && c.capture.kind == GT_CAPTURE_NONE && c.capture.end == GT_CAPTURE_END_STOP);
        CHECK(count_lines(w, n, "GPUTRACE_CAPTURE_RANGE='soon' is not cudaProfilerApi") == 1);
        CHECK(count_lines(w, n, "gputrace never does") == 1);
    }
    return unit_report("test_config");
}
