# sim.mk: programs of tests/test_simulator.py, which checks the simulated
# GPU itself (blocking rules, timeline, functions). Included from
# tests/tests.mk; built by the pattern rule there.
SIM_PROGS := $(TPROG)/sim_sync $(TPROG)/sim_api $(TPROG)/sim_fail $(TPROG)/sim_graph $(TPROG)/sim_nvcc \
             $(TPROG)/sim_module $(TPROG)/sim_mempool

tests-build: $(SIM_PROGS)
