# The preload shim: build/libgputrace.so (and sanitizer builds for the tests).
# Sources live in one folder per thread that runs them (preload/README.md);
# includes name the folder ("hot/gt_ring.h"), so the layering shows.
PRELOAD_LAYERS := base cupti hot writer session
PRELOAD_SRC := $(foreach d,$(PRELOAD_LAYERS),$(wildcard preload/$(d)/*.c))
PRELOAD_HDR := $(foreach d,$(PRELOAD_LAYERS),$(wildcard preload/$(d)/*.h)) preload/hot/gt_hooks.def \
               $(BUILD)/gen/gt_schema_sql.h
PRELOAD_CFLAGS := $(CFLAGS_BASE) -fPIC -fvisibility=hidden $(CUDA_INC) -I$(BUILD)/gen -Ipreload
PRELOAD_LIBS := -lsqlite3 -lunwind -ldl -lpthread

$(BUILD)/gen/gt_schema_sql.h: schema/gputrace.sql
	@mkdir -p $(dir $@)
	cd schema && xxd -i gputrace.sql | sed 's/gputrace_sql/gt_schema_sql/g; s/^unsigned/static const unsigned/' > ../$@.tmp
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
