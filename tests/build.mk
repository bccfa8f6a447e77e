# tests/: loader unit tests (cmocka) and end-to-end tests that trace real
# programs with tr2-bpf.  Formatter unit tests are in formatter/build.mk,
# tr2-fmt tests in formatter/tr2fmt.mk.

-include tests/progs/build.mk

LOADER_TESTS := $(BUILD)/tests/test_decode $(BUILD)/tests/test_summary

$(BUILD)/tests/test_decode: tests/loader/test_decode.c loader/tr2_decode.c loader/tr2_decode.h bpf/tr2_record.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iloader $(CFLAGS) -o $@ tests/loader/test_decode.c loader/tr2_decode.c $(LDFLAGS) -lcmocka

$(BUILD)/tests/test_summary: tests/loader/test_summary.c loader/tr2_summary.c loader/tr2_summary.h \
			     bpf/tr2_record.h $(BUILD)/libtr2fmt.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iloader $(CFLAGS) -o $@ tests/loader/test_summary.c loader/tr2_summary.c \
		$(BUILD)/libtr2fmt.a $(LDFLAGS) -lcmocka -lbpf $(FMT_LIBS)

.PHONY: test-loader test-e2e test-reliability test-shapes test-summary test-viewers
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

test-summary: all ; tests/e2e/summary.sh

# --chrome and --folded in speedscope, in headless Chromium (skips without)
test-viewers: all ; tests/e2e/viewers.sh

TESTS += test-loader test-e2e test-reliability test-shapes test-summary test-viewers

# README's install-and-build steps as written, into /usr/local (then make
# uninstall) and into a private prefix.  Leaves /usr/local as it found it.
.PHONY: test-install
test-install: all
	tests/install/run.sh
TESTS += test-install
