# analyzer.mk: the `gputrace` command-line tool (record, info, ...).
# Included from the top Makefile; paths are relative to the repository root.

GT_ANALYZER_SRCS := $(wildcard analyzer/*.c)
# gt_config.c is shared with the shim so `record` checks -o and
# --stack-depth exactly as the traced processes will read them.
GT_ANALYZER_OBJS := $(patsubst analyzer/%.c,$(BUILD)/analyzer/%.o,$(GT_ANALYZER_SRCS)) \
                    $(BUILD)/analyzer/shared_gt_config.o

all: $(BUILD)/gputrace

$(BUILD)/gputrace: $(GT_ANALYZER_OBJS)
	$(CC) $(CFLAGS_BASE) -o $@ $^ -lsqlite3

$(BUILD)/analyzer/%.o: analyzer/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -Ianalyzer -Ipreload -MMD -MP -c $< -o $@

$(BUILD)/analyzer/shared_gt_config.o: preload/gt_config.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -Ipreload -MMD -MP -c $< -o $@

-include $(GT_ANALYZER_OBJS:.o=.d)

# The same tool under ASan+UBSan, for the fuzz test of the trace reader
# (tests/fuzz_trace.py).
GT_ANALYZER_ASAN_FLAGS := $(CFLAGS_BASE) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
                          -fno-sanitize-recover=undefined
$(BUILD)/asan/gputrace: $(GT_ANALYZER_SRCS) preload/gt_config.c $(wildcard analyzer/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(GT_ANALYZER_ASAN_FLAGS) -Ianalyzer -Ipreload -o $@ $(GT_ANALYZER_SRCS) preload/gt_config.c -lsqlite3
tests-build: $(BUILD)/asan/gputrace
