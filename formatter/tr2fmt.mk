# formatter/tr2fmt.mk: tr2-fmt, the EVENT-line converter, and its tests
# (tests/fmt: malformed input, bounds; tests/gitdiff: equality with the installed git).
# Objects live in $(BUILD)/tr2fmt/ so that they never meet formatter/build.mk's rules.
# Its JSON layer (tr2_read_json.cc, simdjson) is in libtr2fmt.a.

# A recording (tr2-bpf --record) is fed to tr2-bpf's own session: loader/'s
# replay, session, decoder and summary.
TR2FMT_SRCS := formatter/tr2_fmt_main.c formatter/tr2_read_event.c loader/tr2_replay.c loader/tr2_session.c \
	loader/tr2_decode.c loader/tr2_summary.c
TR2FMT_OBJS := $(TR2FMT_SRCS:%.c=$(BUILD)/tr2fmt/%.o)

$(BUILD)/tr2fmt/%.o: %.c $(wildcard formatter/*.h loader/*.h bpf/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Iloader $(CFLAGS) -c $< -o $@

# --version: the release of usdt/build.mk
$(BUILD)/tr2fmt/formatter/tr2_fmt_main.o: CPPFLAGS += -DTR2_VERSION='"$(TR2_VERSION)"'

$(BUILD)/tr2-fmt: $(TR2FMT_OBJS) $(BUILD)/libtr2fmt.a
	$(CC) $(LDFLAGS) -o $@ $^ $(FMT_LIBS) -lm

ALL += $(BUILD)/tr2-fmt

# Both suites run even when the first fails.  The one difference from git
# allowed: EVENT writes U+FFFD for invalid UTF-8, where git writes the bytes
# and so invalid JSON.
test-fmt: $(BUILD)/tr2-fmt
	@rc=0; tests/fmt/run.sh $(BUILD)/tr2-fmt || rc=1; tests/fmt/dest.sh $(BUILD)/tr2-fmt || rc=1; \
	tests/fmt/bounds.sh $(BUILD)/tr2-fmt || rc=1; \
	GITDIFF_ALLOW=fffd tests/gitdiff/run.sh $(BUILD)/tr2-fmt || rc=1; exit $$rc
TESTS += test-fmt

install: install-tr2-fmt
INSTALLED += $(BINDIR)/tr2-fmt
install-tr2-fmt: $(BUILD)/tr2-fmt
	install -D -m 755 $< $(DESTDIR)$(BINDIR)/tr2-fmt

.PHONY: test-fmt install-tr2-fmt
