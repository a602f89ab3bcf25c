# extsort.mk: the unit test of analyzer/base/gt_extsort.c (sorting in
# bounded memory through runs on disk) against qsort. Included from
# tests/tests.mk; it needs none of the shim's core.
UNIT_TESTS += $(TUNIT)/test_extsort

$(TUNIT)/test_extsort: tests/unit/test_extsort.c analyzer/base/gt_extsort.c analyzer/base/gt_err.c \
		analyzer/base/gt_extsort.h tests/unit/unit.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -O1 -g -Ianalyzer -fsanitize=address,undefined -fno-sanitize-recover=undefined \
		-o $@ $< analyzer/base/gt_extsort.c analyzer/base/gt_err.c

tests-build: $(TUNIT)/test_extsort
