# gaps.mk: the unit test of analyzer/gt_gaps.c (GPU busy time, idle gaps and
# their causes) against a plain reference. Included from tests/tests.mk.
UNIT_TESTS += $(TUNIT)/test_gaps

GAPS_FOR_UNIT := analyzer/gt_gaps.c analyzer/gt_site.c analyzer/gt_fmt.c analyzer/gt_analyze.c analyzer/gt_scan.c \
                 analyzer/gt_map.c \
                 analyzer/gt_trace.c

$(TUNIT)/test_gaps: tests/unit/test_gaps.c $(GAPS_FOR_UNIT) $(wildcard analyzer/*.h) tests/unit/unit.h \
                    $(BUILD)/gen/gt_schema_sql.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -O1 -g -Ianalyzer -I$(BUILD)/gen -fsanitize=address,undefined \
		-fno-sanitize-recover=undefined -o $@ $< $(GAPS_FOR_UNIT) -lsqlite3

tests-build: $(TUNIT)/test_gaps
