# Test programs (run on the simulated GPU) and C unit tests of the shim's core.
TPROG := $(BUILD)/tests/progs
TUNIT := $(BUILD)/tests/unit
TEST_CFLAGS := $(CFLAGS_BASE) -O1 -g $(CUDA_INC) -Itests/fakecuda
# The test programs find the simulated GPU beside them (build/tests/progs ->
# build/fakecuda) without LD_LIBRARY_PATH: a machine with the toolkit has its
# real libcudart on the library path, which has no simulated GPU behind it.
# An RPATH, not a RUNPATH: the tracer's own dlopen of NVML (and CUPTI) in
# the program searches the program's RPATH too, so it finds the simulated
# NVML beside the simulated driver, as a real machine has both together.
TEST_RPATH := -Wl,--disable-new-dtags,-rpath,'$$ORIGIN/../../fakecuda'
TEST_LIBS := -L$(BUILD)/fakecuda -lcudart -lcuda -lpthread -ldl $(TEST_RPATH)
FAKECUDA_LIBS := $(BUILD)/fakecuda/libcudart.so.13 $(BUILD)/fakecuda/libcuda.so.1

TEST_PROGS := $(TPROG)/rt_basic $(TPROG)/rt_basic_ptsz $(TPROG)/drv_basic $(TPROG)/drv_basic_ptds \
              $(TPROG)/threads $(TPROG)/fork_child $(TPROG)/no_cuda $(TPROG)/timing $(TPROG)/vecadd \
              $(TPROG)/unhooked $(TPROG)/stall $(TPROG)/entry_point $(TPROG)/endings $(TPROG)/bad_args \
              $(TPROG)/many_configs $(TPROG)/standby_loop $(TPROG)/nvtx_basic $(TPROG)/nvtx_phases $(TPROG)/diff_work $(TPROG)/steps_work \
              $(TPROG)/standby_steps $(TPROG)/flight_steps $(TPROG)/rank_work $(TPROG)/host_wait $(TPROG)/dl_race $(TPROG)/capture_range \
              $(TPROG)/no_perf $(TPROG)/cupti_client $(TPROG)/cupti_client_dl $(TPROG)/odd_names \
              $(TPROG)/alloc_loop $(TPROG)/launch_fail $(TPROG)/unrecorded_only $(TPROG)/two_gpus \
              $(TPROG)/thread_relay
# before/after pairs for diff and audit --baseline (tests/test_diff.py)
TEST_PROGS += $(TPROG)/gate_work
# kernels named as real libraries name theirs (tests/test_categories.py)
TEST_PROGS += $(TPROG)/kinds_work

UNIT_TESTS :=

UNIT_TESTS += $(TUNIT)/test_config $(TUNIT)/test_stacks $(TUNIT)/test_ranges $(TUNIT)/test_symbols \
              $(TUNIT)/test_config_fuzz

$(TPROG)/%: tests/progs/%.c tests/fakecuda/fakecuda.h $(FAKECUDA_LIBS) tests/tests.mk
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(TEST_LIBS)

# host_wait keeps frame pointers: with GPUTRACE_SAMPLE_NATIVE=perf the
# kernel walks them for a running thread's callers (test_samples.py).
$(TPROG)/host_wait: TEST_CFLAGS += -fno-omit-frame-pointer

# A program with a CUPTI collector of its own: linked to the simulated
# CUPTI, and (_dl) finding it with dlopen and dlsym.
$(TPROG)/cupti_client: tests/progs/cupti_client.c tests/fakecuda/fakecuda.h $(FAKECUDA_LIBS) $(BUILD)/fakecuda/libcupti.so.13
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(BUILD)/fakecuda/libcupti.so.13 $(TEST_LIBS)
$(TPROG)/cupti_client_dl: tests/progs/cupti_client.c tests/fakecuda/fakecuda.h $(FAKECUDA_LIBS) $(BUILD)/fakecuda/libcupti.so.13
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -DCUPTI_DLOPEN -o $@ $< $(TEST_LIBS)
# A C++ program blocked in its own functions (test_samples_native.py), built
# as users build a program they profile (-O2 -g), as they ship it (-O3, no
# -g) and debug it (-O0 -g: frames found through rbp): the sampler unwinds
# from .eh_frame, which all keep.
TEST_CXXFLAGS := -std=gnu++17 -Wall -Wextra -Werror -D_GNU_SOURCE $(CUDA_INC) -Itests/fakecuda
$(TPROG)/native_wait_g: tests/progs/native_wait.cpp tests/fakecuda/fakecuda.h $(FAKECUDA_LIBS)
	@mkdir -p $(dir $@)
	$(CXX) $(TEST_CXXFLAGS) -O2 -g -o $@ $< $(TEST_LIBS)
$(TPROG)/native_wait_O3: tests/progs/native_wait.cpp tests/fakecuda/fakecuda.h $(FAKECUDA_LIBS)
	@mkdir -p $(dir $@)
	$(CXX) $(TEST_CXXFLAGS) -O3 -o $@ $< $(TEST_LIBS)
$(TPROG)/native_wait_O0g: tests/progs/native_wait.cpp tests/fakecuda/fakecuda.h $(FAKECUDA_LIBS)
	@mkdir -p $(dir $@)
	$(CXX) $(TEST_CXXFLAGS) -O0 -g -o $@ $< $(TEST_LIBS)
tests-build: $(TPROG)/native_wait_g $(TPROG)/native_wait_O3 $(TPROG)/native_wait_O0g
# A C++ pipeline whose launching thread waits on a loader thread
# (test_idle_threads.py), as shipped (-O3, no -g) and debugged (-O0 -g).
$(TPROG)/queue_loader_O3: tests/progs/queue_loader.cpp tests/fakecuda/fakecuda.h $(FAKECUDA_LIBS)
	@mkdir -p $(dir $@)
	$(CXX) $(TEST_CXXFLAGS) -O3 -o $@ $< $(TEST_LIBS)
$(TPROG)/queue_loader_O0g: tests/progs/queue_loader.cpp tests/fakecuda/fakecuda.h $(FAKECUDA_LIBS)
	@mkdir -p $(dir $@)
	$(CXX) $(TEST_CXXFLAGS) -O0 -g -o $@ $< $(TEST_LIBS)
tests-build: $(TPROG)/queue_loader_O3 $(TPROG)/queue_loader_O0g

# The same programs built for the per-thread default stream: they call the
# _ptsz/_ptds entry points.
$(TPROG)/%_ptsz: tests/progs/%.c tests/fakecuda/fakecuda.h $(FAKECUDA_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -DCUDA_API_PER_THREAD_DEFAULT_STREAM -o $@ $< $(TEST_LIBS)
$(TPROG)/%_ptds: tests/progs/%.c tests/fakecuda/fakecuda.h $(FAKECUDA_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -DCUDA_API_PER_THREAD_DEFAULT_STREAM -o $@ $< $(TEST_LIBS)

# Built the way users build: nvcc against the real toolkit, shared runtime.
$(TPROG)/%: tests/progs/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) -cudart shared -O1 -Xlinker -rpath -Xlinker '$$ORIGIN/../../fakecuda' -o $@ $<

GT_CORE_FOR_UNIT := preload/base/gt_config.c preload/base/gt_config_flight.c preload/hot/gt_stacks.c preload/base/gt_idtab.c preload/hot/gt_ranges.c \
                    preload/writer/gt_symbols.c
UNIT_CFLAGS := $(CFLAGS_BASE) -O1 -g -Ipreload -fsanitize=address,undefined -fno-sanitize-recover=undefined

$(TUNIT)/test_%: tests/unit/test_%.c $(GT_CORE_FOR_UNIT) $(PRELOAD_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -o $@ $< $(GT_CORE_FOR_UNIT) -lunwind -ldl -lpthread

# The rings alone, their writer's wake-up a counter in the test.
UNIT_TESTS += $(TUNIT)/test_ring
$(TUNIT)/test_ring: tests/unit/test_ring.c preload/hot/gt_ring.c preload/hot/gt_threads.c $(PRELOAD_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -o $@ $< preload/hot/gt_ring.c preload/hot/gt_threads.c -lpthread

.PHONY: tests-build
tests-build: $(TEST_PROGS) $(UNIT_TESTS) $(BUILD)/asan/libgputrace.so $(BUILD)/tsan/libgputrace.so
-include tests/unit/budget.mk
-include tests/unit/timeline.mk
-include tests/unit/utf8.mk
-include tests/unit/extsort.mk
-include tests/unit/sampler_budget.mk

# Call paths beyond symbol interposition.
tests-build: $(TPROG)/dl_launcher $(TPROG)/rt_basic_static $(TPROG)/rtld_next $(TPROG)/graph $(TPROG)/copy3d $(TPROG)/batch
# CUDA Graphs built every way, and mapped host memory (tests/test_graphs.py).
tests-build: $(TPROG)/graph_build $(TPROG)/graph_nvcc $(TPROG)/mapped_mem $(TPROG)/graph_fork $(TPROG)/polls $(TPROG)/first_call

$(TPROG)/dl_launcher: tests/progs/dl_launcher.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -ldl

# The runtime linked statically, as nvcc does by default: only the driver
# is a shared library.
$(TPROG)/rt_basic_static: tests/progs/rt_basic.c tests/fakecuda/fakecuda.h $(BUILD)/fakecuda/libcudart_static.a
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(BUILD)/fakecuda/libcudart_static.a -ldl -lpthread

# NVIDIA's own static runtime, as nvcc links it by default, built as users
# build: release (-O3, no -g) and debug. It runs on the simulated driver,
# which serves its private tables (tests/fakecuda/README.md).
$(TPROG)/static_runtime: tests/progs/static_runtime.cu
	@mkdir -p $(dir $@)
	$(NVCC) -O3 -Xlinker -rpath -Xlinker '$$ORIGIN/../../fakecuda' -o $@ $<
$(TPROG)/static_runtime_g: tests/progs/static_runtime.cu
	@mkdir -p $(dir $@)
	$(NVCC) -O0 -g -Xlinker -rpath -Xlinker '$$ORIGIN/../../fakecuda' -o $@ $<
tests-build: $(TPROG)/static_runtime $(TPROG)/static_runtime_g

$(TPROG)/libcu_interposer.so: tests/progs/next/cu_interposer.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -fPIC -shared -o $@ $<
$(TPROG)/procaddr_probe: tests/progs/procaddr_probe.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -o $@ $< -ldl
tests-build: $(TPROG)/libcu_interposer.so $(TPROG)/procaddr_probe

$(TPROG)/libnext_a.so: tests/progs/next/next_a.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -fPIC -shared -o $@ $< -ldl
$(TPROG)/libnext_b.so: tests/progs/next/next_b.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -fPIC -shared -o $@ $<
$(TPROG)/rtld_next: tests/progs/rtld_next.c $(TPROG)/libnext_a.so $(TPROG)/libnext_b.so
	$(CC) $(CFLAGS_BASE) -o $@ $< -L$(TPROG) -Wl,--no-as-needed -lnext_a -lnext_b -Wl,--as-needed -Wl,-rpath,'$$ORIGIN' -ldl

# Python: the line-table decoder, driven against each interpreter's own.
$(TPROG)/py_lines: tests/progs/py_lines.c preload/writer/gt_pylines.c preload/writer/gt_pylines.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -O1 -g -Ipreload -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	    -o $@ tests/progs/py_lines.c preload/writer/gt_pylines.c
tests-build: $(TPROG)/py_lines

# The C workload of bench/run.py.
$(TPROG)/launch_loop: bench/launch_loop.c tests/fakecuda/fakecuda.h $(FAKECUDA_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -O2 -g $(CUDA_INC) -Itests/fakecuda -o $@ $< $(TEST_LIBS)
tests-build: $(TPROG)/launch_loop
# The sampler bench's native threads, built as shipped (-O2, no -g).
$(TPROG)/native_threads: bench/native_threads.c tests/fakecuda/fakecuda.h $(FAKECUDA_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -g,$(CFLAGS_BASE)) -O2 $(CUDA_INC) -Itests/fakecuda -o $@ $< $(TEST_LIBS)
tests-build: $(TPROG)/native_threads
-include tests/truth.mk

# NVTX (tests/test_nvtx.py): the library Python drives through ctypes and
# the bench's push/pop loop; nvtx_basic and the nvcc-built nvtx_cuda.
$(TPROG)/libnvtx_lib.so: tests/progs/nvtx_lib.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -O2 -fPIC -shared -fvisibility=hidden $(CUDA_INC) -o $@ $< -ldl
tests-build: $(TPROG)/libnvtx_lib.so $(TPROG)/nvtx_cuda
$(TPROG)/nvtx_loop: bench/nvtx_loop.c $(FAKECUDA_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -O2 -g $(CUDA_INC) -o $@ $< $(TEST_LIBS)
tests-build: $(TPROG)/nvtx_loop
-include tests/sim.mk
-include tests/lines.mk

# standby_steps with a RUNPATH to the simulated driver only: the tracer's
# dlopen does not search it, so without LD_LIBRARY_PATH it finds no NVML
# (test_standby.test_idle_rule_without_nvml_says_so_once).
tests-build: $(TPROG)/nvml_hidden/standby_steps
$(TPROG)/nvml_hidden/standby_steps: tests/progs/standby_steps.c tests/fakecuda/fakecuda.h $(FAKECUDA_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -L$(BUILD)/fakecuda -lcudart -lcuda -lpthread -ldl \
	    -Wl,--enable-new-dtags,-rpath,'$$ORIGIN/../../../fakecuda'

# diff_work without debug information, built twice with frames at other
# offsets (DIFF_WORK_SHIFT): sites must match between the two builds.
tests-build: $(TPROG)/nodebug_a/diff_work $(TPROG)/nodebug_b/diff_work
NODEBUG_LIBS := -L$(BUILD)/fakecuda -lcudart -lcuda -lpthread -Wl,-rpath,'$$ORIGIN/../../../fakecuda'
$(TPROG)/nodebug_a/diff_work: tests/progs/diff_work.c tests/fakecuda/fakecuda.h $(FAKECUDA_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -O1 -g0 $(CUDA_INC) -Itests/fakecuda -o $@ $< $(NODEBUG_LIBS)
$(TPROG)/nodebug_b/diff_work: tests/progs/diff_work.c tests/fakecuda/fakecuda.h $(FAKECUDA_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -O1 -g0 -DDIFF_WORK_SHIFT -fno-toplevel-reorder $(CUDA_INC) -Itests/fakecuda -o $@ $< $(NODEBUG_LIBS)

# The same graphs through a statically linked runtime: the driver's cuGraph*
# entry points, reached through cuGetProcAddress, are what is caught.
tests-build: $(TPROG)/graph_build_static
$(TPROG)/graph_build_static: tests/progs/graph_build.c tests/fakecuda/fakecuda.h $(BUILD)/fakecuda/libcudart_static.a $(FAKECUDA_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(BUILD)/fakecuda/libcudart_static.a -L$(BUILD)/fakecuda -lcuda -ldl -lpthread $(TEST_RPATH)

# make demo's program, built as the Makefile builds it (tests/test_demo.py).
tests-build: $(BUILD)/demo/train

# Modules as JIT users load them (tests/test_modules.py): PTX from the real
# NVRTC at run time, a cubin nvcc built here.
tests-build: $(TPROG)/module_jit $(TPROG)/module_cubin.cubin $(TPROG)/module_cubin.fatbin
$(TPROG)/module_jit: tests/progs/module_jit.c $(FAKECUDA_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(TEST_LIBS) -L$(CUDA)/lib64 -lnvrtc -Wl,-rpath,$(CUDA)/lib64
$(TPROG)/module_cubin.cubin: tests/progs/module_cubin.cu
	@mkdir -p $(dir $@)
	$(NVCC) -cubin -arch=sm_90 -o $@ $<
$(TPROG)/module_cubin.fatbin: tests/progs/module_cubin.cu
	@mkdir -p $(dir $@)
	$(NVCC) -fatbin -arch=sm_90 -o $@ $<

# alloc_loop as users build a release: -O3, no debug info (tests/test_idle_sites.py).
tests-build: $(TPROG)/alloc_loop_O3
$(TPROG)/alloc_loop_O3: tests/progs/alloc_loop.c tests/fakecuda/fakecuda.h $(FAKECUDA_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -O3 -g0 $(CUDA_INC) -Itests/fakecuda -o $@ $< $(TEST_LIBS)
