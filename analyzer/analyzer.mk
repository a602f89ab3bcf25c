# analyzer.mk: the `gputrace` command-line tool (record, info, report, ...).
# Included from the top Makefile; paths are relative to the repository root.
# Sources live in one folder per role, lowest first (analyzer/README.md):
# base (formatting, maps, errors) < trace (reading a trace) < analysis <
# output (text, JSON, HTML, timeline formats) < cmd (the subcommands).
# Includes name the folder ("trace/gt_scan.h"), so the layering shows.

GT_ANALYZER_LAYERS := base trace analysis output cmd
GT_ANALYZER_SRCS := $(foreach d,$(GT_ANALYZER_LAYERS),$(wildcard analyzer/$(d)/*.c))
GT_ANALYZER_HDRS := $(foreach d,$(GT_ANALYZER_LAYERS),$(wildcard analyzer/$(d)/*.h))
GT_ANALYZER_CFLAGS := $(CFLAGS_BASE) -Ianalyzer -I. -I$(BUILD)/gen
# preload/base/gt_config.c is shared with the shim so `record` checks -o and
# --stack-depth exactly as the traced processes will read them.
GT_ANALYZER_OBJS := $(patsubst analyzer/%.c,$(BUILD)/analyzer/%.o,$(GT_ANALYZER_SRCS)) \
                    $(BUILD)/analyzer/shared_gt_config.o $(BUILD)/analyzer/shared_gt_config_flight.o
# Perfetto's trace messages (output/perfetto_trace.proto) as C, made by
# protoc-c into $(BUILD)/gen/ and encoded by libprotobuf-c.
GT_PROTO_C := $(BUILD)/gen/perfetto_trace.pb-c.c
GT_PROTO_O := $(BUILD)/gen/perfetto_trace.pb-c.o
GT_ANALYZER_LIBS := -lsqlite3 -lprotobuf-c -lz -lm -pthread

$(GT_PROTO_C): analyzer/output/perfetto_trace.proto
	@mkdir -p $(dir $@)
	protoc-c --c_out=$(BUILD)/gen -Ianalyzer/output $<
$(BUILD)/gen/perfetto_trace.pb-c.h: $(GT_PROTO_C)
$(GT_PROTO_O): $(GT_PROTO_C)
	$(CC) $(CFLAGS_BASE) -c $< -o $@
$(GT_ANALYZER_OBJS): | $(BUILD)/gen/perfetto_trace.pb-c.h
# The HTML report's timeline script and style, kept readable in their own
# files (output/gt_report_html_timeline.{js,css}) and embedded by xxd -i.
GT_HTML_ASSETS := $(BUILD)/gen/gt_report_html_timeline_js.h $(BUILD)/gen/gt_report_html_timeline_css.h
$(BUILD)/gen/gt_report_html_timeline_%.h: analyzer/output/gt_report_html_timeline.%
	@mkdir -p $(dir $@)
	cd analyzer/output && xxd -i gt_report_html_timeline.$* | sed 's/^unsigned/static const unsigned/' > ../../$@.tmp
	mv $@.tmp $@
$(GT_ANALYZER_OBJS): | $(GT_HTML_ASSETS)
# The default kernel category rules (trace/kernel_categories.tsv), compiled in
# the same way.
$(BUILD)/gen/gt_kernel_categories_tsv.h: analyzer/trace/kernel_categories.tsv
	@mkdir -p $(dir $@)
	cd analyzer/trace && xxd -i kernel_categories.tsv | sed 's/^unsigned/static const unsigned/' > ../../$@.tmp
	mv $@.tmp $@
$(GT_ANALYZER_OBJS): | $(BUILD)/gen/gt_kernel_categories_tsv.h

all: $(BUILD)/gputrace

$(BUILD)/gputrace: $(GT_ANALYZER_OBJS) $(GT_PROTO_O)
	$(CC) $(CFLAGS_BASE) -o $@ $^ $(GT_ANALYZER_LIBS)

$(BUILD)/analyzer/%.o: analyzer/%.c
	@mkdir -p $(dir $@)
	$(CC) $(GT_ANALYZER_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/analyzer/shared_gt_config.o: preload/base/gt_config.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -Ipreload -MMD -MP -c $< -o $@
$(BUILD)/analyzer/shared_gt_config_flight.o: preload/base/gt_config_flight.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -Ipreload -MMD -MP -c $< -o $@

-include $(GT_ANALYZER_OBJS:.o=.d)

# The same tool under ASan+UBSan, for the fuzz test of the trace reader
# (tests/fuzz_trace.py).
GT_ANALYZER_ASAN_FLAGS := $(GT_ANALYZER_CFLAGS) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
                          -fno-sanitize-recover=undefined
$(BUILD)/asan/gputrace: $(GT_ANALYZER_SRCS) preload/base/gt_config.c preload/base/gt_config_flight.c $(GT_ANALYZER_HDRS) $(GT_PROTO_C) $(GT_HTML_ASSETS)
	@mkdir -p $(dir $@)
	$(CC) $(GT_ANALYZER_ASAN_FLAGS) -o $@ $(GT_ANALYZER_SRCS) $(GT_PROTO_C) preload/base/gt_config.c preload/base/gt_config_flight.c -Ipreload \
	    $(GT_ANALYZER_LIBS)
tests-build: $(BUILD)/asan/gputrace
