# budget.mk: the unit test of analyzer/analysis/gt_budget.c (budget values and budget
# files for `gputrace audit`). Included from tests/tests.mk; it needs none
# of the shim's core, so it has its own rule ahead of the test_% pattern.
UNIT_TESTS += $(TUNIT)/test_budget

$(TUNIT)/test_budget: tests/unit/test_budget.c analyzer/analysis/gt_budget.c analyzer/analysis/gt_budget.h tests/unit/unit.h \
		analyzer/base/gt_fmt.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -O1 -g -Ianalyzer -fsanitize=address,undefined -fno-sanitize-recover=undefined \
		-o $@ $< analyzer/analysis/gt_budget.c analyzer/base/gt_fmt.c

tests-build: $(TUNIT)/test_budget
