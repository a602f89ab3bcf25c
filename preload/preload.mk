# The preload shim: build/libgputrace.so (and sanitizer builds for the tests).
# Sources live in one folder per thread that runs them (preload/README.md);
# includes name the folder ("hot/gt_ring.h"), so the layering shows.
PRELOAD_LAYERS := base cupti hot sampler writer session
PRELOAD_SRC := $(foreach d,$(PRELOAD_LAYERS),$(wildcard preload/$(d)/*.c))
# Headers generated at build time, into $(BUILD)/gen/: the schema as a C
# array and as an empty trace file, and NVIDIA's result names from the toolkit's own headers (the
# analyzer includes gt_error_names.h too, so `make` builds these first).
GT_GEN_HEADERS := $(BUILD)/gen/gt_schema_sql.h $(BUILD)/gen/gt_schema_db.h $(BUILD)/gen/gt_error_names.h
PRELOAD_HDR := $(foreach d,$(PRELOAD_LAYERS),$(wildcard preload/$(d)/*.h)) preload/hot/gt_hooks.def \
               $(GT_GEN_HEADERS)
PRELOAD_CFLAGS := $(CFLAGS_BASE) -fPIC -fvisibility=hidden $(CUDA_INC) -I$(BUILD)/gen -Ipreload
PRELOAD_LIBS := -lsqlite3 -lunwind -lunwind-x86_64 -ldl -lpthread -ldw -lelf

$(BUILD)/gen/gt_schema_sql.h: schema/gputrace.sql
	@mkdir -p $(dir $@)
	cd schema && xxd -i gputrace.sql | sed 's/gputrace_sql/gt_schema_sql/g; s/^unsigned/static const unsigned/' > ../$@.tmp
	mv $@.tmp $@

# The same schema as an empty trace file the writer copies (faster than
# running its SQL at the program's start).
$(BUILD)/gen/gt_schema_db.h: schema/gputrace.sql scripts/gen_schema_db.py
	@mkdir -p $(dir $@)
	$(PYTHON) scripts/gen_schema_db.py schema/gputrace.sql $@.tmp
	mv $@.tmp $@

$(BUILD)/gen/gt_error_names.h: scripts/gen_error_names.py $(CUDA)/include/driver_types.h $(CUDA)/include/cuda.h
	@mkdir -p $(dir $@)
	$(PYTHON) scripts/gen_error_names.py $(CUDA)/include $@.tmp
	mv $@.tmp $@

# One object per source (tests/test_layout.py reads their symbols to check
# that no layer calls one above it).
PRELOAD_OBJS := $(patsubst preload/%.c,$(BUILD)/preload/%.o,$(PRELOAD_SRC))

$(BUILD)/preload/%.o: preload/%.c $(PRELOAD_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(PRELOAD_CFLAGS) -c -o $@ $<

$(BUILD)/libgputrace.so: $(PRELOAD_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(PRELOAD_CFLAGS) -shared -o $@ $(PRELOAD_OBJS) $(PRELOAD_LIBS)

# The same shim under ASan+UBSan and under TSan, preloaded by the tests
# behind their sanitizer runtimes.
$(BUILD)/asan/libgputrace.so: $(PRELOAD_SRC) $(PRELOAD_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(PRELOAD_CFLAGS) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	    -shared -o $@ $(PRELOAD_SRC) $(PRELOAD_LIBS)

$(BUILD)/tsan/libgputrace.so: $(PRELOAD_SRC) $(PRELOAD_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(PRELOAD_CFLAGS) -O1 -fsanitize=thread -DGT_UNW_STEP -shared -o $@ $(PRELOAD_SRC) $(PRELOAD_LIBS)

all: $(BUILD)/libgputrace.so
