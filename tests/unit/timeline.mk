# timeline.mk: the unit test of analyzer/analysis/gt_timeline.c (busy time,
# gaps and their causes, blame, launch-bound, overlap) against a plain,
# quadratic reference. Included from tests/tests.mk.
UNIT_TESTS += $(TUNIT)/test_timeline

TIMELINE_FOR_UNIT := analyzer/analysis/gt_timeline.c analyzer/analysis/gt_ops.c analyzer/analysis/gt_window_iv.c \
                     analyzer/analysis/gt_opsort.c analyzer/base/gt_extsort.c analyzer/base/gt_err.c

$(TUNIT)/test_timeline: tests/unit/test_timeline.c $(TIMELINE_FOR_UNIT) $(GT_ANALYZER_HDRS) tests/unit/unit.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -O1 -g -Ianalyzer -fsanitize=address,undefined \
		-fno-sanitize-recover=undefined -o $@ $< $(TIMELINE_FOR_UNIT)

tests-build: $(TUNIT)/test_timeline
