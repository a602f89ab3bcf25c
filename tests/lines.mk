# Native source lines (tests/test_native_lines.py): the same known stacks
# built with DWARF (C and nvcc) and without; the stripped variants with
# separate debug information are made by the test itself (objcopy).
tests-build: $(TPROG)/lines $(TPROG)/lines_nodebug $(TPROG)/lines_cu

$(TPROG)/lines: tests/progs/lines.c tests/fakecuda/fakecuda.h $(FAKECUDA_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -O1 -g -Wl,--build-id $(CUDA_INC) -Itests/fakecuda -o $@ $< $(TEST_LIBS)

$(TPROG)/lines_nodebug: tests/progs/lines.c tests/fakecuda/fakecuda.h $(FAKECUDA_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_BASE) -O1 -g0 $(CUDA_INC) -Itests/fakecuda -o $@ $< $(TEST_LIBS)

$(TPROG)/lines_cu: tests/progs/lines_cu.cu
	@mkdir -p $(dir $@)
	$(NVCC) -cudart shared -O1 -g -o $@ $<

# Launch sites on release builds (tests/test_sites.py): one program launching
# from every kind of caller, built the five ways users build it.
SITES_CU := $(addprefix $(TPROG)/sites_cu_,O0g O2 O3 O3g O3lineinfo)
tests-build: $(SITES_CU)
$(TPROG)/sites_cu_O0g: SITES_CU_FLAGS := -O0 -g
$(TPROG)/sites_cu_O2: SITES_CU_FLAGS := -O2
$(TPROG)/sites_cu_O3: SITES_CU_FLAGS := -O3
$(TPROG)/sites_cu_O3g: SITES_CU_FLAGS := -O3 -g
$(TPROG)/sites_cu_O3lineinfo: SITES_CU_FLAGS := -O3 -lineinfo
$(SITES_CU): tests/progs/sites_cu.cu
	@mkdir -p $(dir $@)
	$(NVCC) -cudart shared $(SITES_CU_FLAGS) -Xlinker -rpath -Xlinker '$$ORIGIN/../../fakecuda' -o $@ $<
