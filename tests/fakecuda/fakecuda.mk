# The simulated GPU: build/fakecuda/{libcuda.so.1, libcudart.so.13, libcudart_static.a, libcupti.so.13}.
FAKECUDA_DIR := $(BUILD)/fakecuda
FAKECUDA_CFLAGS := $(CFLAGS_BASE) -fPIC -fvisibility=hidden $(CUDA_INC) -Itests/fakecuda

# ---- driver ----
FK_DRIVER_SRC := $(wildcard tests/fakecuda/driver/*.c)
FK_DRIVER_HDR := $(wildcard tests/fakecuda/driver/*.h tests/fakecuda/driver/*.def) tests/fakecuda/fakecuda.h

# cuGetErrorName/cuGetErrorString's table, from the toolkit's cuda.h.
$(BUILD)/gen/fk_errors.h: tests/fakecuda/driver/gen_fk_errors.py scripts/gen_error_names.py $(CUDA)/include/cuda.h
	@mkdir -p $(dir $@)
	$(PYTHON) tests/fakecuda/driver/gen_fk_errors.py $(CUDA)/include $@.tmp
	mv $@.tmp $@

# -Bsymbolic, as NVIDIA's libcuda.so.1 is linked (DT_SYMBOLIC; seen on an
# H100's driver 580, docs/validation.md): the driver's own references to
# its entry points, and the functions cuGetProcAddress hands out, are its
# own even when a preloaded library (the tracer) defines the same names.
$(FAKECUDA_DIR)/libcuda.so.1: $(FK_DRIVER_SRC) $(FK_DRIVER_HDR) $(BUILD)/gen/fk_errors.h tests/fakecuda/fakecuda.mk
	@mkdir -p $(dir $@)
	$(CC) $(FAKECUDA_CFLAGS) -I$(BUILD)/gen -shared -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic -o $@ $(FK_DRIVER_SRC) \
		-lpthread
	ln -sf libcuda.so.1 $(FAKECUDA_DIR)/libcuda.so

all: $(FAKECUDA_DIR)/libcuda.so.1

# ---- runtime ----
# Exported under the version node the real libcudart.so.13 defines, so
# programs nvcc linked against the real toolkit load it unchanged.
FK_RUNTIME_SRC := $(wildcard tests/fakecuda/runtime/*.c)
FK_RUNTIME_HDR := $(wildcard tests/fakecuda/runtime/*.h tests/fakecuda/runtime/*.def) tests/fakecuda/fakecuda.h
FK_RUNTIME_OBJ := $(patsubst tests/fakecuda/runtime/%.c,$(FAKECUDA_DIR)/obj/%.o,$(FK_RUNTIME_SRC))

$(FAKECUDA_DIR)/obj/%.o: tests/fakecuda/runtime/%.c $(FK_RUNTIME_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(FAKECUDA_CFLAGS) -c -o $@ $<

$(FAKECUDA_DIR)/libcudart.so.13: $(FK_RUNTIME_OBJ) tests/fakecuda/runtime/libcudart.map
	$(CC) -shared -Wl,-soname,libcudart.so.13 -Wl,--version-script=tests/fakecuda/runtime/libcudart.map \
	    -Wl,-rpath,'$$ORIGIN' -o $@ $(FK_RUNTIME_OBJ) -ldl -lpthread
	ln -sf libcudart.so.13 $(FAKECUDA_DIR)/libcudart.so

# The static runtime still finds the driver with dlopen + cuGetProcAddress.
# The weak stubs (fr_stubs.c) stay out of it: an archive member pulled in
# for a stub would not be replaced by the real function.
$(FAKECUDA_DIR)/libcudart_static.a: $(FK_RUNTIME_OBJ)
	rm -f $@
	ar rcs $@ $(filter-out %/fr_stubs.o,$(FK_RUNTIME_OBJ))

all: $(FAKECUDA_DIR)/libcudart.so.13 $(FAKECUDA_DIR)/libcudart_static.a

# ---- CUPTI ----
FK_CUPTI_SRC := $(wildcard tests/fakecuda/cupti/*.c)

$(BUILD)/gen/fu_cbids.h: tests/fakecuda/cupti/gen_fu_cbids.py $(CUDA)/include/cupti_driver_cbid.h
	@mkdir -p $(dir $@)
	$(PYTHON) tests/fakecuda/cupti/gen_fu_cbids.py $(CUDA)/include $@.tmp
	mv $@.tmp $@

$(FAKECUDA_DIR)/libcupti.so.13: $(FK_CUPTI_SRC) tests/fakecuda/fakecuda.h tests/fakecuda/cupti/libcupti.map $(BUILD)/gen/fu_cbids.h
	@mkdir -p $(dir $@)
	$(CC) $(FAKECUDA_CFLAGS) -I$(BUILD)/gen -shared -Wl,-soname,libcupti.so.13 -Wl,--version-script=tests/fakecuda/cupti/libcupti.map \
	    -Wl,-rpath,'$$ORIGIN' -o $@ $(FK_CUPTI_SRC) -ldl -lpthread

all: $(FAKECUDA_DIR)/libcupti.so.13

# ---- NVML ----
# Needs the simulated driver's kernel intervals: linked against it, so the
# copy the program already loaded (same soname) is the one it asks.
FK_NVML_SRC := $(wildcard tests/fakecuda/nvml/*.c)

$(FAKECUDA_DIR)/libnvidia-ml.so.1: $(FK_NVML_SRC) tests/fakecuda/fakecuda.h $(FAKECUDA_DIR)/libcuda.so.1
	$(CC) $(FAKECUDA_CFLAGS) -shared -Wl,-soname,libnvidia-ml.so.1 -o $@ $(FK_NVML_SRC) \
	    -L$(FAKECUDA_DIR) -lcuda -Wl,-rpath,'$$ORIGIN'

all: $(FAKECUDA_DIR)/libnvidia-ml.so.1
