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

.PHONY: all test bench install clean
all:

include tests/fakecuda/fakecuda.mk
include preload/preload.mk
include analyzer/analyzer.mk
include tests/tests.mk

# The analyzer includes headers the shim's build generates (gt_error_names.h):
# they are made before any of its objects.
$(GT_ANALYZER_OBJS) $(BUILD)/asan/gputrace: | $(GT_GEN_HEADERS)

test: all tests-build
	$(PYTHON) tests/run_tests.py

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
