# truth.mk: the planted-answer workloads of tests/test_truth.py (checked
# against the independent oracle, tests/oracle.py). Included from
# tests/tests.mk; built by the pattern rule there ($(TPROG)/%: tests/progs/%.c).
TRUTH_PROGS := $(TPROG)/truth_train $(TPROG)/truth_graph $(TPROG)/truth_batch $(TPROG)/truth_streams \
               $(TPROG)/truth_fail $(TPROG)/truth_random

tests-build: $(TRUTH_PROGS)
