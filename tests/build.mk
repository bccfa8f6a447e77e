# tests/: loader unit tests (cmocka) and end-to-end tests that trace real
# programs with tr2-bpf.  Formatter unit tests are in formatter/build.mk,
# tr2-fmt tests in formatter/tr2fmt.mk.

-include tests/progs/build.mk

LOADER_TESTS := $(BUILD)/tests/test_decode

$(BUILD)/tests/test_decode: tests/loader/test_decode.c loader/tr2_decode.c loader/tr2_decode.h bpf/tr2_record.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Iloader $(CFLAGS) -o $@ tests/loader/test_decode.c loader/tr2_decode.c $(LDFLAGS) -lcmocka

.PHONY: test-loader test-e2e test-reliability test-viewers
test-loader: $(LOADER_TESTS)
	@for t in $(LOADER_TESTS); do $$t || exit 1; done

test-e2e: all
	tests/e2e/run.sh

test-reliability: all ; tests/e2e/reliability.sh

# --chrome and --folded in speedscope, in headless Chromium (skips without)
test-viewers: all ; tests/e2e/viewers.sh

TESTS += test-loader test-e2e test-reliability test-viewers
