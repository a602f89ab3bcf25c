# utf8.mk: the unit test of analyzer/base/gt_utf8.c (the filter that keeps
# text outputs valid UTF-8). Included from tests/tests.mk; it needs none of
# the shim's core, so it has its own rule ahead of the test_% pattern.
UNIT_TESTS += $(TUNIT)/test_utf8

$(TUNIT)/test_utf8: tests/unit/test_utf8.c analyzer/base/gt_utf8.c analyzer/base/gt_utf8.h tests/unit/unit.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -O1 -g -Ianalyzer -fsanitize=address,undefined -fno-sanitize-recover=undefined \
		-o $@ $< analyzer/base/gt_utf8.c

tests-build: $(TUNIT)/test_utf8
