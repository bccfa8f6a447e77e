# formatter/: the Trace2 targets (NORMAL, PERF, EVENT) and destinations, built
# as $(BUILD)/libtr2fmt.a, and their cmocka unit tests (make test-unit).
# tr2-fmt's own files are built by formatter/tr2fmt.mk.
#
# JSON is parsed by simdjson's On Demand API, which is C++: tr2_read_json.cc
# (tr2-fmt's line reader, and tr2_json_is_valid for the EVENT target's
# data_json values) is the one C++ file, behind a C interface, built without
# exceptions or RTTI.  Programs linking libtr2fmt.a add $(FMT_LIBS).

FMT_SRCS := $(filter-out formatter/tr2_fmt_main.c formatter/tr2_read_event.c,$(wildcard formatter/*.c))
FMT_CXX_SRCS := formatter/tr2_read_json.cc
FMT_OBJS := $(FMT_SRCS:%.c=$(BUILD)/%.o) $(FMT_CXX_SRCS:%.cc=$(BUILD)/%.o)
SIMDJSON_CFLAGS := $(shell pkg-config --cflags simdjson)
FMT_LIBS := $(shell pkg-config --libs simdjson) -lstdc++
CXXFLAGS ?= -O2 -g
# simdjson.h asserts its own invariants (SIMDJSON_ASSUME) on every iterator
# step unless NDEBUG: kept in sanitizer builds, left out otherwise (they cost
# about a tenth of a line's instructions).
FMT_CXXFLAGS := -std=gnu++17 -fno-exceptions -fno-rtti -Wall -Wextra $(if $(SAN_FLAGS),,-DNDEBUG) \
	$(CXXFLAGS) $(SAN_FLAGS)

$(BUILD)/formatter/%.o: formatter/%.c formatter/build.mk
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/formatter/%.o: formatter/%.cc formatter/build.mk
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(SIMDJSON_CFLAGS) $(FMT_CXXFLAGS) -MMD -MP -c -o $@ $<

-include $(FMT_OBJS:.o=.d)

$(BUILD)/libtr2fmt.a: $(FMT_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

ALL += $(BUILD)/libtr2fmt.a

# Unit tests: one cmocka program per tests/unit/test_*.c, each linked with
# the library; run with TZ=UTC so the local-time columns are predictable.
UNIT_TEST_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_TESTS := $(UNIT_TEST_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)

$(BUILD)/tests/unit/%: tests/unit/%.c tests/unit/unit.h $(BUILD)/libtr2fmt.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) -o $@ $< $(BUILD)/libtr2fmt.a $(LDFLAGS) $(FMT_LIBS) -lcmocka

.PHONY: test-unit
test-unit: $(UNIT_TESTS)
	@rc=0; for t in $(UNIT_TESTS); do TZ=UTC $$t || rc=1; done; exit $$rc

TESTS += test-unit
