# formatter/: the Trace2 targets (NORMAL, PERF, EVENT) and destinations, built
# as $(BUILD)/libtr2fmt.a, and their cmocka unit tests (make test-unit).
# Programs linking libtr2fmt.a also need $(FMT_LIBS) (json-c validates
# data_json values).  tr2-fmt's own files are built by formatter/tr2fmt.mk.

FMT_SRCS := $(filter-out formatter/tr2_fmt_main.c formatter/tr2_read_event.c,$(wildcard formatter/*.c))
FMT_OBJS := $(FMT_SRCS:%.c=$(BUILD)/%.o)
FMT_CFLAGS := $(shell pkg-config --cflags json-c)
FMT_LIBS := $(shell pkg-config --libs json-c)

$(BUILD)/formatter/%.o: formatter/%.c formatter/build.mk
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(FMT_CFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

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
	$(CC) $(CPPFLAGS) $(FMT_CFLAGS) -Itests/unit $(CFLAGS) -o $@ $< $(BUILD)/libtr2fmt.a $(LDFLAGS) $(FMT_LIBS) -lcmocka

.PHONY: test-unit
test-unit: $(UNIT_TESTS)
	@rc=0; for t in $(UNIT_TESTS); do TZ=UTC $$t || rc=1; done; exit $$rc

TESTS += test-unit
