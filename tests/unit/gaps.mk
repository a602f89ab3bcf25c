# gaps.mk: the unit test of analyzer/analysis/gt_gaps.c (GPU busy time, idle gaps and
# their causes) against a plain reference. Included from tests/tests.mk.
UNIT_TESTS += $(TUNIT)/test_gaps

GAPS_FOR_UNIT := analyzer/analysis/gt_gaps.c analyzer/analysis/gt_site.c analyzer/base/gt_fmt.c \
                 analyzer/analysis/gt_analyze.c analyzer/trace/gt_scan.c analyzer/base/gt_map.c \
                 analyzer/trace/gt_trace.c analyzer/base/gt_err.c

$(TUNIT)/test_gaps: tests/unit/test_gaps.c $(GAPS_FOR_UNIT) $(GT_ANALYZER_HDRS) tests/unit/unit.h \
                    $(BUILD)/gen/gt_schema_sql.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -O1 -g -Ianalyzer -I$(BUILD)/gen -fsanitize=address,undefined \
		-fno-sanitize-recover=undefined -o $@ $< $(GAPS_FOR_UNIT) -lsqlite3

tests-build: $(TUNIT)/test_gaps
