# tests/fuzz/: libFuzzer harnesses for the three readers of untrusted bytes,
# and the sanitizer build of the other suites (included last by Makefile).
#
#   make fuzz-short   each harness for $(FUZZ_SHORT_TIME) s over its committed
#                     corpus (tests/fuzz/corpus/) after replaying the known
#                     crashers (tests/fuzz/crashes/); part of make test
#   make fuzz         the long run, $(FUZZ_TIME) s per harness; what it finds
#                     goes to $(BUILD)/fuzz/corpus-*/, kept between runs
#   make fuzz-merge   folds $(BUILD)/fuzz/corpus-*/ into tests/fuzz/corpus/,
#                     keeping only inputs that add coverage
#   make fuzz-corpus  rewrites the seeds: tests/fuzz/corpus/decode/ from
#                     make_decode_corpus.c, tests/fuzz/corpus/event/ from real
#                     git and tr2-bpf runs (make_event_corpus.sh; root for tr2-bpf)
#   make test-asan    unit, loader, tr2-fmt, end-to-end and summary tests, every
#                     program built with ASan+UBSan into $(ASAN_BUILD)/;
#                     part of make test
#
# The harnesses are built by clang (libFuzzer) from the sources, not from
# $(BUILD)/libtr2fmt.a, into $(BUILD)/fuzz/.  Reproduce a crash with
#   $(BUILD)/fuzz/fuzz_decode FILE, $(BUILD)/fuzz/fuzz_read_event FILE or
#   $(BUILD)/fuzz/fuzz_record FILE

FUZZ_DIR := $(BUILD)/fuzz
FUZZ_SHORT_TIME ?= 20
FUZZ_TIME ?= 600
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS := -g -O1 -fno-omit-frame-pointer -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
	$(FUZZ_SAN) -D_GNU_SOURCE -Iusdt -Iformatter -Ibpf -Iloader -Itests/fuzz
# The JSON layer (formatter/tr2_read_json.cc, simdjson), as formatter/build.mk
# builds it but with simdjson's own assertions on (no NDEBUG).
CLANGXX ?= clang++
FUZZ_CXXFLAGS := -g -O1 -fno-omit-frame-pointer -std=gnu++17 -fno-exceptions -fno-rtti -Wall -Wextra \
	$(FUZZ_SAN) -D_GNU_SOURCE -Iformatter $(SIMDJSON_CFLAGS)
FUZZ_LIBS := $(FMT_LIBS) -lm
FUZZ_LIB_SRCS := $(FMT_SRCS) $(FMT_CXX_SRCS) formatter/tr2_read_event.c \
	loader/tr2_decode.c loader/tr2_session.c loader/tr2_summary.c loader/tr2_replay.c
FUZZ_LIB_OBJS := $(patsubst %.cc,$(FUZZ_DIR)/obj/%.o,$(FUZZ_LIB_SRCS:%.c=$(FUZZ_DIR)/obj/%.o))
FUZZ_BINS := $(FUZZ_DIR)/fuzz_decode $(FUZZ_DIR)/fuzz_read_event $(FUZZ_DIR)/fuzz_record

$(FUZZ_DIR)/obj/%.o: %.c tests/fuzz/build.mk
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(FUZZ_DIR)/obj/%.o: %.cc tests/fuzz/build.mk
	@mkdir -p $(@D)
	$(CLANGXX) $(FUZZ_CXXFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

-include $(FUZZ_LIB_OBJS:.o=.d) $(FUZZ_BINS:$(FUZZ_DIR)/%=$(FUZZ_DIR)/obj/tests/fuzz/%.d)

$(FUZZ_DIR)/libfuzzed.a: $(FUZZ_LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

.SECONDARY: $(FUZZ_BINS:$(FUZZ_DIR)/%=$(FUZZ_DIR)/obj/tests/fuzz/%.o)
$(FUZZ_DIR)/fuzz_%: $(FUZZ_DIR)/obj/tests/fuzz/fuzz_%.o $(FUZZ_DIR)/libfuzzed.a
	$(CLANG) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(FUZZ_LIBS)

# Built with the host compiler: it only writes files, whose calls the
# runtime's encoder writes.  -no-pie: literal ids follow the strings'
# addresses, the same from run to run without ASLR.
$(FUZZ_DIR)/make_decode_corpus: tests/fuzz/make_decode_corpus.c tests/loader/tr2_rec_build.h usdt/tr2_wire.c \
				usdt/tr2_wire.h bpf/tr2_record.h formatter/tr2_call.h loader/tr2_decode.h
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -Wall -Wextra -O1 -fno-pie -no-pie -D_GNU_SOURCE -Iusdt -Iformatter -Ibpf -Iloader \
		-Itests/loader -o $@ $< usdt/tr2_wire.c

.PHONY: fuzz-build fuzz-short fuzz fuzz-merge fuzz-corpus test-asan
fuzz-build: $(FUZZ_BINS)

fuzz-short: $(FUZZ_BINS)
	@tests/fuzz/run.sh short $(FUZZ_DIR) $(FUZZ_SHORT_TIME)

fuzz: $(FUZZ_BINS)
	@tests/fuzz/run.sh long $(FUZZ_DIR) $(FUZZ_TIME)

fuzz-merge: $(FUZZ_BINS)
	@tests/fuzz/run.sh merge $(FUZZ_DIR)

fuzz-corpus: $(FUZZ_DIR)/make_decode_corpus all
	rm -f tests/fuzz/corpus/decode/* tests/fuzz/crashes/decode/*
	$(FUZZ_DIR)/make_decode_corpus tests/fuzz/corpus/decode tests/fuzz/crashes/decode
	tests/fuzz/make_event_corpus.sh $(BUILD)

# The sanitizer build: everything but the BPF object (bpf/build.mk compiles
# it with $(BPF_CFLAGS), never $(CFLAGS)) gets SAN_FLAGS through CFLAGS and
# LDFLAGS, in $(ASAN_BUILD)/.  Every suite runs even when one fails.
# tests/e2e/run.sh takes its binaries from $TR2_BUILD; the program it builds
# against the installed libtr2.so needs $TR2_SAN_FLAGS too, since that
# library is instrumented.
ASAN_BUILD ?= $(BUILD)-asan
ASAN_SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
ASAN_SUITES := test-unit test-loader test-fmt test-e2e test-summary

test-asan:
	@$(MAKE) --no-print-directory BUILD=$(ASAN_BUILD) SAN_FLAGS="$(ASAN_SAN_FLAGS)" all $(ASAN_BUILD)/tests/test_decode
	@failed=""; for t in $(ASAN_SUITES); do \
		ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		TR2_BUILD=$(ASAN_BUILD) TR2_SAN_FLAGS="$(ASAN_SAN_FLAGS)" \
		$(MAKE) --no-print-directory BUILD=$(ASAN_BUILD) SAN_FLAGS="$(ASAN_SAN_FLAGS)" $$t || \
			failed="$$failed $$t"; done; \
	if [ -n "$$failed" ]; then echo "test-asan: failed:$$failed"; exit 1; fi; \
	echo "test-asan: all suites passed under ASan+UBSan"

clean: clean-asan
.PHONY: clean-asan
clean-asan:
	rm -rf $(ASAN_BUILD)

TESTS += fuzz-short test-asan
