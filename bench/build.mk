# bench/: `make bench` builds the benchmark programs into $(BUILD)/bench/ and
# runs bench/run.sh, which measures everything on this machine and rewrites
# BENCHMARKS.md. Never part of `make test`. Needs root and the packages of
# `scripts/install-deps.sh --bench`.

BENCH_DIR := $(BUILD)/bench
BENCH_SITES := $(foreach v,none tr2 nop1 lttng,$(BENCH_DIR)/sites-$(v).o)
# Programs with this many trace2 call sites, for the exec rows (section 7).
BENCH_CALLS := $(foreach n,1000 15,$(BENCH_DIR)/calls-$(n))
BENCH_PROGS := $(BENCH_DIR)/tr2bench $(BENCH_DIR)/bpf-attach $(BENCH_DIR)/empty.bpf.o \
	      $(BENCH_SITES) $(BENCH_CALLS) $(BENCH_DIR)/summary-bench
BENCH_CFLAGS := $(CPPFLAGS) -Ibench $(CFLAGS)

$(BENCH_DIR)/tr2bench: bench/tr2bench.c bench/nop1.c bench/lttng_loop.c bench/lttng_tp.c \
		       bench/bench.h bench/nop1.h bench/lttng_tp.h $(BUILD)/libtr2.a usdt/trace2.h
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -pthread $(LDFLAGS) -o $@ bench/tr2bench.c bench/nop1.c \
		bench/lttng_loop.c bench/lttng_tp.c $(BUILD)/libtr2.a -llttng-ust -ldl

$(BENCH_DIR)/sites-%.o: bench/sites.c bench/bench.h bench/nop1.h bench/lttng_tp.h usdt/trace2.h
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -DSITES_$(shell echo $* | tr a-z A-Z) -c -o $@ $<

# calls-N: generated, and linked with libtr2.a as README's static example
# (the program dynamically linked, the runtime inside it).
$(BENCH_DIR)/calls-%.c: bench/gen_calls.sh
	@mkdir -p $(@D)
	bench/gen_calls.sh $* > $@.tmp && mv $@.tmp $@

$(BENCH_DIR)/calls-%: $(BENCH_DIR)/calls-%.c $(BUILD)/libtr2.a usdt/trace2.h
	$(CC) $(CPPFLAGS) $(CFLAGS) -pthread $(LDFLAGS) -o $@ $< $(BUILD)/libtr2.a

# tr2-bpf --summary's cost per event in tr2-bpf, without the kernel.
$(BENCH_DIR)/summary-bench: bench/summary_bench.c loader/tr2_summary.c loader/tr2_summary.h $(BUILD)/libtr2fmt.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iloader $(CFLAGS) $(LDFLAGS) -o $@ bench/summary_bench.c loader/tr2_summary.c \
		$(BUILD)/libtr2fmt.a $(FMT_LIBS)

# The BPF object bpf-attach loads: empty programs, the kernel's floor.
$(BENCH_DIR)/empty.bpf.o: bench/empty.bpf.c $(BUILD)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# Attaches to tr2:batch with tr2-bpf's own code (loader/tr2_attach.c), so
# that the traps are measured on the same kind of link; to the public trace2
# probes as bpftrace does.
$(BENCH_DIR)/bpf-attach: bench/bpf_attach.c $(BUILD)/loader/tr2_attach.o $(BUILD)/loader/tr2_kernel.o loader/tr2_attach.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iloader $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/loader/tr2_attach.o \
		$(BUILD)/loader/tr2_kernel.o -lbpf -lelf -lz

# git and git-stock (contrib/git/build.mk): section 10, bench/git.sh.
bench: $(BUILD)/tr2-bpf $(BUILD)/tr2-fmt $(BENCH_PROGS) $(TEST_PROGS_DIR)/tr2_shapes \
       $(TEST_PROGS_DIR)/tr2_batch $(TEST_PROGS_DIR)/libtr2_plugin.so $(TEST_PROGS_DIR)/libtr2_plain.so \
       git git-stock
	bench/run.sh $(BUILD) BENCHMARKS.md
