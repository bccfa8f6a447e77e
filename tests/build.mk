# tests/: loader unit tests (cmocka) and end-to-end tests that trace real
# programs with tr2-bpf.  Formatter unit tests are in formatter/build.mk,
# tr2-fmt tests in formatter/tr2fmt.mk.

-include tests/progs/build.mk

LOADER_TESTS := $(BUILD)/tests/test_decode $(BUILD)/tests/test_summary

# Its records are written by the runtime's encoder (usdt/tr2_wire.c).
$(BUILD)/tests/test_decode: tests/loader/test_decode.c tests/loader/tr2_rec_build.h loader/tr2_decode.c \
			    loader/tr2_decode.h usdt/tr2_wire.c usdt/tr2_wire.h bpf/tr2_record.h formatter/tr2_call.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iloader $(CFLAGS) -o $@ tests/loader/test_decode.c loader/tr2_decode.c usdt/tr2_wire.c \
		$(LDFLAGS) -lcmocka

$(BUILD)/tests/test_summary: tests/loader/test_summary.c loader/tr2_summary.c loader/tr2_summary.h \
			     $(BUILD)/libtr2fmt.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iloader $(CFLAGS) -o $@ tests/loader/test_summary.c loader/tr2_summary.c \
		$(BUILD)/libtr2fmt.a $(LDFLAGS) -lcmocka $(FMT_LIBS)

.PHONY: test-loader test-e2e test-reliability test-shapes test-summary test-viewers test-harm test-host test-hostile test-cmd test-af-unix test-batch
test-loader: $(LOADER_TESTS)
	@for t in $(LOADER_TESTS); do $$t || exit 1; done

test-e2e: all
	tests/e2e/run.sh

# The in-process targets (GIT_TRACE2*), as an unprivileged user; the parts
# that compare with tr2-bpf need root and BPF, and skip without.
.PHONY: test-inproc
test-inproc: all ; tests/e2e/inproc.sh
TESTS += test-inproc

test-reliability: all ; tests/e2e/reliability.sh

test-shapes: all ; tests/e2e/shapes.sh

# Do no harm: memory, liveness, bystanders (issue 15)
test-harm: all ; tests/e2e/harm.sh

# tr2-bpf -a and the filters (issue 17)
test-host: all ; tests/e2e/host.sh

# tr2-bpf -a among untrusted processes (issue 33)
test-hostile: all ; tests/e2e/hostile.sh

test-summary: all ; tests/e2e/summary.sh

# The batched event path: nothing left behind, live, bounded (issue 26)
test-batch: all ; tests/e2e/batch.sh

# --record, tr2-fmt of a recording, SIGUSR1/SIGUSR2 pause and resume (issue 36)
.PHONY: test-record
test-record: all ; tests/e2e/record.sh
TESTS += test-record

# Where regions' time went: on CPU, runnable, D, S (issue 35)
.PHONY: test-sched
test-sched: all ; tests/e2e/sched.sh
TESTS += test-sched

# -- CMD as a parent: what CMD inherits, -u USER, tr2-bpf ending first
test-cmd: all ; tests/e2e/cmd.sh

# tr2-bpf tracers at once, starting and ending amid each other (issue 27)
.PHONY: test-concurrent
test-concurrent: all ; tests/e2e/concurrent.sh
TESTS += test-concurrent

# af_unix DESTs: one connection per traced process (issue 17)
test-af-unix: all ; tests/e2e/af_unix.sh

# --chrome and --folded in speedscope, in headless Chromium (skips without)
test-viewers: all ; tests/e2e/viewers.sh

TESTS += test-loader test-e2e test-reliability test-shapes test-summary test-batch test-cmd test-viewers test-harm test-host test-hostile test-af-unix

# The end-to-end suites in QEMU guests of Debian's kernels 5.10, 6.1 and
# 6.12 (issue 32; tests/kernels/run.sh says which suites on which kernel).
.PHONY: test-kernels
test-kernels: all ; tests/kernels/run.sh $(BUILD)
TESTS += test-kernels

# README's commands as written: its first ones as root without sudo and as a
# user with sudo (added, then removed); its install-and-build steps into
# /usr/local (then make uninstall) and into a private prefix.  Leaves
# /usr/local as it found it.
.PHONY: test-install
test-install: all
	tests/install/run.sh
TESTS += test-install
