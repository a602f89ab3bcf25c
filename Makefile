# gputrace: `make` builds everything into build/, `make test` runs every test.
CC       ?= gcc
CUDA     ?= /usr/local/cuda
NVCC     ?= $(CUDA)/bin/nvcc
PYTHON   ?= python3
PREFIX   ?= /usr/local
BUILD    := build

WARN     := -Wall -Wextra -Werror
CFLAGS_BASE := -std=gnu11 -O2 -g $(WARN) -D_GNU_SOURCE
CUDA_INC := -I$(CUDA)/include -I$(CUDA)/extras/CUPTI/include

.PHONY: all test demo bench install clean
all:

include tests/fakecuda/fakecuda.mk
include preload/preload.mk
include analyzer/analyzer.mk
include tests/tests.mk

# The analyzer includes headers the shim's build generates (gt_error_names.h):
# they are made before any of its objects.
$(GT_ANALYZER_OBJS) $(BUILD)/asan/gputrace: | $(GT_GEN_HEADERS)

# Each installs what a fresh machine lacks first (scripts/setup-debian.sh does
# nothing when all is there).
test:
	scripts/setup-debian.sh
	scripts/setup-python.sh
	$(MAKE) all tests-build
	$(PYTHON) tests/run_tests.py

demo:
	scripts/setup-debian.sh
	$(MAKE) all $(BUILD)/demo/train
	scripts/demo.sh

# Built as a program is built to be profiled: optimized, with -g for its
# source lines (the report then names train.cu:LINE in function).
$(BUILD)/demo/train: demo/train.cu
	@mkdir -p $(dir $@)
	$(NVCC) -cudart shared -O2 -g -Xlinker -rpath -Xlinker '$$ORIGIN/../fakecuda' -o $@ $<

# Tracer cost against untraced runs measured in the same invocation.
bench: all tests-build
	$(PYTHON) bench/run.py

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/share/gputrace
	install -m 0755 $(BUILD)/gputrace $(DESTDIR)$(PREFIX)/bin/gputrace
	install -m 0755 $(BUILD)/libgputrace.so $(DESTDIR)$(PREFIX)/lib/libgputrace.so
	install -m 0644 schema/gputrace.sql $(DESTDIR)$(PREFIX)/share/gputrace/gputrace.sql

clean:
	rm -rf $(BUILD)
