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
