# sampler_budget.mk: the unit test of preload/sampler/gt_sampler_budget.c
# (the sampler's period under GPUTRACE_SAMPLE_BUDGET), on simulated clocks.
# Included from tests/tests.mk; it needs none of the shim's core.
UNIT_TESTS += $(TUNIT)/test_sampler_budget

$(TUNIT)/test_sampler_budget: tests/unit/test_sampler_budget.c preload/sampler/gt_sampler_budget.c \
		preload/sampler/gt_sampler_budget.h tests/unit/unit.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -O1 -g -Ipreload -fsanitize=address,undefined -fno-sanitize-recover=undefined \
		-o $@ $< preload/sampler/gt_sampler_budget.c

tests-build: $(TUNIT)/test_sampler_budget
