# tests/progs/: programs the end-to-end tests trace, built into
# $(BUILD)/tests/progs/ (included by tests/build.mk).
#   tr2_allapi        every trace2.h API, static libtr2.a
#   tr2_shared        probes in the program, in libtr2_shlib.so and in
#                     libtr2.so (all linked dynamically; rpath finds them)
#   check_nop5.sh     checks that every trace2 probe site is a 5-byte nop

TEST_PROGS_DIR := $(BUILD)/tests/progs
TEST_PROGS := $(TEST_PROGS_DIR)/tr2_allapi $(TEST_PROGS_DIR)/tr2_shared \
	      $(TEST_PROGS_DIR)/libtr2_shlib.so

ALL += $(TEST_PROGS)

$(TEST_PROGS_DIR)/tr2_allapi: tests/progs/tr2_allapi.c $(BUILD)/libtr2.a usdt/trace2.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -pthread $(LDFLAGS) -o $@ $< $(BUILD)/libtr2.a

$(TEST_PROGS_DIR)/libtr2_shlib.so: tests/progs/tr2_shlib.c tests/progs/tr2_shlib.h \
				   $(BUILD)/libtr2.so usdt/trace2.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -shared $(LDFLAGS) -o $@ $< \
		-L$(BUILD) -ltr2 -Wl,-rpath,'$$ORIGIN/../..'

$(TEST_PROGS_DIR)/tr2_shared: tests/progs/tr2_shared.c tests/progs/tr2_shlib.h \
			      $(TEST_PROGS_DIR)/libtr2_shlib.so $(BUILD)/libtr2.so usdt/trace2.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< \
		-L$(TEST_PROGS_DIR) -ltr2_shlib -L$(BUILD) -ltr2 \
		-Wl,-rpath,'$$ORIGIN:$$ORIGIN/../..'

# tr2_stress: floods, long runs, exec, fork and many threads, for
# tests/e2e/reliability.sh (static libtr2.a, as tr2_allapi).
TEST_PROGS += $(TEST_PROGS_DIR)/tr2_stress
ALL += $(TEST_PROGS_DIR)/tr2_stress

$(TEST_PROGS_DIR)/tr2_stress: tests/progs/tr2_stress.c $(BUILD)/libtr2.a usdt/trace2.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -pthread $(LDFLAGS) -o $@ $< $(BUILD)/libtr2.a

# tr2_ancestry: a cmd_ancestry that tr2-bpf names (tests/e2e/cmd.sh).
TEST_PROGS += $(TEST_PROGS_DIR)/tr2_ancestry
ALL += $(TEST_PROGS_DIR)/tr2_ancestry

$(TEST_PROGS_DIR)/tr2_ancestry: tests/progs/tr2_ancestry.c $(BUILD)/libtr2.a usdt/trace2.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -pthread $(LDFLAGS) -o $@ $< $(BUILD)/libtr2.a

# tr2_batch: the batched event path (tests/e2e/batch.sh): calls waiting in
# a buffer when a thread or process ends, liveness, thread churn, a process
# that scribbles over its buffer.  It reads bpf/tr2_record.h for the last.
TEST_PROGS += $(TEST_PROGS_DIR)/tr2_batch
ALL += $(TEST_PROGS_DIR)/tr2_batch

$(TEST_PROGS_DIR)/tr2_batch: tests/progs/tr2_batch.c tests/progs/tr2_find_tbuf.h $(BUILD)/libtr2.a usdt/trace2.h \
			     bpf/tr2_record.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -pthread $(LDFLAGS) -o $@ $< $(BUILD)/libtr2.a

# tr2_inproc: the in-process targets' own cases (tests/e2e/inproc.sh): what
# trace2_initialize() changes, a child that is git, fork, signals.
TEST_PROGS += $(TEST_PROGS_DIR)/tr2_inproc
ALL += $(TEST_PROGS_DIR)/tr2_inproc

$(TEST_PROGS_DIR)/tr2_inproc: tests/progs/tr2_inproc.c $(BUILD)/libtr2.a usdt/trace2.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -pthread $(LDFLAGS) -o $@ $< $(BUILD)/libtr2.a

# tr2_shapes: process trees, dlopen/dlclose cycles, thread churn, many
# timers (tests/e2e/shapes.sh, bench/run.sh's workload shapes), with the
# plugin it dlopens.  Dynamic libtr2.so, as an installed program would be.
TEST_PROGS += $(TEST_PROGS_DIR)/tr2_shapes $(TEST_PROGS_DIR)/libtr2_plugin.so \
	      $(TEST_PROGS_DIR)/libtr2_plain.so
ALL += $(TEST_PROGS_DIR)/tr2_shapes $(TEST_PROGS_DIR)/libtr2_plugin.so $(TEST_PROGS_DIR)/libtr2_plain.so

# tr2_dlhost: a program without the runtime that dlopens the plugin, so that
# libtr2.so is first mapped by dlopen (tests/e2e/shapes.sh).
TEST_PROGS += $(TEST_PROGS_DIR)/tr2_dlhost $(TEST_PROGS_DIR)/libtr2_plugix.so
ALL += $(TEST_PROGS_DIR)/tr2_dlhost $(TEST_PROGS_DIR)/libtr2_plugix.so

$(TEST_PROGS_DIR)/tr2_dlhost: tests/progs/tr2_dlhost.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< -ldl

$(TEST_PROGS_DIR)/libtr2_plain.so: tests/progs/tr2_plain_plugin.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -shared $(LDFLAGS) -o $@ $<

$(TEST_PROGS_DIR)/libtr2_plugin.so: tests/progs/tr2_plugin.c $(BUILD)/libtr2.so usdt/trace2.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -shared $(LDFLAGS) -o $@ $< \
		-L$(BUILD) -ltr2 -Wl,-rpath,'$$ORIGIN/../..'

# The same plugin with category "plugix": same size, same addresses.
$(TEST_PROGS_DIR)/libtr2_plugix.so: tests/progs/tr2_plugin.c $(BUILD)/libtr2.so usdt/trace2.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -shared $(LDFLAGS) -DTR2_PLUGIN_CATEGORY='"plugix"' -o $@ $< \
		-L$(BUILD) -ltr2 -Wl,-rpath,'$$ORIGIN/../..'

$(TEST_PROGS_DIR)/tr2_shapes: tests/progs/tr2_shapes.c $(BUILD)/libtr2.so usdt/trace2.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -pthread $(LDFLAGS) -o $@ $< -L$(BUILD) -ltr2 -ldl \
		-Wl,-rpath,'$$ORIGIN/../..'

# tr2_summary: known counts for tests/e2e/summary.sh (tr2-bpf --summary).
TEST_PROGS += $(TEST_PROGS_DIR)/tr2_summary
ALL += $(TEST_PROGS_DIR)/tr2_summary

$(TEST_PROGS_DIR)/tr2_summary: tests/progs/tr2_summary.c $(BUILD)/libtr2.a usdt/trace2.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -pthread $(LDFLAGS) -o $@ $< $(BUILD)/libtr2.a

# tr2_leaf: a trace2 call of each kind between filling a local array and
# summing it, and the callee-saved registers across a runtime call
# (tests/e2e/harm.sh), from gcc and clang at -O2 and -O3.
TR2_LEAF := $(foreach c,gcc clang,$(foreach o,O2 O3,$(TEST_PROGS_DIR)/tr2_leaf-$(c)-$(o)))
TEST_PROGS += $(TR2_LEAF)
ALL += $(TR2_LEAF)

$(TEST_PROGS_DIR)/tr2_leaf-%: tests/progs/tr2_leaf.c $(BUILD)/libtr2.a usdt/trace2.h
	@mkdir -p $(@D)
	$(word 1,$(subst -, ,$*)) $(CPPFLAGS) -$(word 2,$(subst -, ,$*)) -g -Wall -o $@ $< $(BUILD)/libtr2.a $(SAN_FLAGS)

# tr2_inherit: prints what it inherited (ids, environment, signals, rlimits,
# fds, ...), for tests/e2e/cmd.sh (tr2-bpf -- CMD and -u).  No probes.
TEST_PROGS += $(TEST_PROGS_DIR)/tr2_inherit
ALL += $(TEST_PROGS_DIR)/tr2_inherit

$(TEST_PROGS_DIR)/tr2_inherit: tests/progs/tr2_inherit.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $<

# tr2_hostile: what another user's process may do to tr2-bpf -a, and a
# victim beside it (tests/e2e/hostile.sh).  It reads bpf/tr2_record.h.
TEST_PROGS += $(TEST_PROGS_DIR)/tr2_hostile
ALL += $(TEST_PROGS_DIR)/tr2_hostile

$(TEST_PROGS_DIR)/tr2_hostile: tests/progs/tr2_hostile.c tests/progs/tr2_find_tbuf.h $(BUILD)/libtr2.a \
			       usdt/trace2.h bpf/tr2_record.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -pthread $(LDFLAGS) -o $@ $< $(BUILD)/libtr2.a

# tr2_sched: four regions of known shape for tests/e2e/sched.sh (where a
# region's time went: on CPU, runnable, blocked, asleep).
TEST_PROGS += $(TEST_PROGS_DIR)/tr2_sched
ALL += $(TEST_PROGS_DIR)/tr2_sched

$(TEST_PROGS_DIR)/tr2_sched: tests/progs/tr2_sched.c $(BUILD)/libtr2.a usdt/trace2.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -pthread $(LDFLAGS) -o $@ $< $(BUILD)/libtr2.a
