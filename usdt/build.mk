# usdt/: the public header trace2.h and its runtime, built as
# $(BUILD)/libtr2.a, $(BUILD)/libtr2.so (soname libtr2.so.0) and $(BUILD)/tr2.pc.

TR2_VERSION := 0.1.0
TR2_SONAME  := libtr2.so.0
TR2_SOFILE  := libtr2.so.$(TR2_VERSION)

USDT_SRCS := usdt/tr2_batch.c usdt/tr2_wire.c usdt/tr2_format.c usdt/tr2_ids.c usdt/tr2_inproc.c usdt/tr2_probe.c usdt/tr2_process.c usdt/tr2_tls.c \
	     usdt/tr2_json_check.c usdt/tr2_sysenv.c
USDT_OBJS := $(USDT_SRCS:usdt/%.c=$(BUILD)/usdt/%.o)

# The in-process targets write with the formatter itself: these sources of
# libtr2fmt.a, compiled again as the runtime's (hidden) objects.  Not its
# C++ JSON layer (simdjson, libstdc++): usdt/tr2_json_check.c answers
# tr2_json_is_valid() here.
USDT_FMT_SRCS := $(addprefix formatter/,tr2_buf.c tr2_dst.c tr2_event.c tr2_json.c tr2_metric.c tr2_model.c \
		   tr2_quote.c tr2_sha1.c tr2_sid.c tr2_target.c tr2_tgt_event.c tr2_tgt_normal.c \
		   tr2_tgt_perf.c tr2_thread.c tr2_time.c)
USDT_OBJS += $(USDT_FMT_SRCS:formatter/%.c=$(BUILD)/usdt/fmt/%.o)

# One set of objects serves both libraries: position-independent for the .so,
# and everything but the trace2__* entry points hidden in it.
USDT_CFLAGS := -fPIC -fvisibility=hidden -mno-red-zone -MMD -MP

ALL += $(BUILD)/libtr2.a $(BUILD)/libtr2.so $(BUILD)/tr2.pc

$(BUILD)/usdt/%.o: usdt/%.c usdt/build.mk
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(USDT_CFLAGS) -c -o $@ $<

$(BUILD)/usdt/fmt/%.o: formatter/%.c usdt/build.mk
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(USDT_CFLAGS) -c -o $@ $<

-include $(USDT_OBJS:.o=.d)

# The unit tests of the runtime's pure functions (usdt/tr2_inproc.h) and of
# the session id that it and tr2-bpf share (formatter/tr2_sid.h), run by make
# test-unit with the formatter's: SHA-1 against OpenSSL, and tr2_json_check
# against the formatter's simdjson tr2_json_is_valid, hence both libraries.
INPROC_UNIT_SRCS := usdt/tr2_json_check.c usdt/tr2_sysenv.c
$(BUILD)/tests/unit/test_inproc: tests/unit/test_inproc.c tests/unit/unit.h usdt/tr2_inproc.h \
				 $(INPROC_UNIT_SRCS) $(BUILD)/libtr2fmt.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) -o $@ $< $(INPROC_UNIT_SRCS) \
		$(BUILD)/libtr2fmt.a $(LDFLAGS) $(FMT_LIBS) -lcrypto -lcmocka

# libtr2.a holds two objects, each linked from its sources, in which every
# tr2_* name (the runtime's and the formatter's internals) is made local: a
# program linked with it sees only trace2__*, as with libtr2.so, so git
# itself, whose trace2/ has its own tr2_tgt_perf, tr2_sid_*, ..., could link
# it.  libtr2.o is the probes and what tr2-bpf reads, which every program
# that uses trace2.h links; libtr2-inproc.o is the in-process targets and the
# formatter they write with, which only trace2_initialize()
# (trace2__initialize) brings in: git, which calls the probes and has
# targets of its own, links none of it.  The two meet in trace2__* names
# only (tr2_runtime.h, trace2__inproc_call).
USDT_CORE_OBJS := $(addprefix $(BUILD)/usdt/,tr2_batch.o tr2_wire.o tr2_format.o tr2_ids.o tr2_probe.o tr2_tls.o)
USDT_INPROC_OBJS := $(filter-out $(USDT_CORE_OBJS),$(USDT_OBJS))

$(BUILD)/usdt/libtr2.o: $(USDT_CORE_OBJS)
$(BUILD)/usdt/libtr2-inproc.o: $(USDT_INPROC_OBJS)
$(BUILD)/usdt/libtr2.o $(BUILD)/usdt/libtr2-inproc.o:
	$(CC) -r -nostdlib -o $@ $^
	objcopy --wildcard --localize-symbol='tr2_*' $@

$(BUILD)/libtr2.a: $(BUILD)/usdt/libtr2.o $(BUILD)/usdt/libtr2-inproc.o
	@rm -f $@
	$(AR) rcs $@ $^

# -z nodelete: once loaded, libtr2.so stays until exec, whoever dlcloses the
# plugin that brought it: its atexit and signal handlers and its threads'
# key destructors must not point into an unmapped object, and a module
# number (docs/probes.md) must never be given twice in a process.
$(BUILD)/$(TR2_SOFILE): $(USDT_OBJS)
	$(CC) -shared -Wl,-soname,$(TR2_SONAME) -Wl,-z,defs -Wl,-z,nodelete $(LDFLAGS) -o $@ $^

$(BUILD)/$(TR2_SONAME): $(BUILD)/$(TR2_SOFILE)
	ln -sf $(TR2_SOFILE) $@

$(BUILD)/libtr2.so: $(BUILD)/$(TR2_SONAME)
	ln -sf $(TR2_SONAME) $@

# tr2.pc names the install directories: remake it whenever they change.
TR2_PC_VARS := $(PREFIX) $(INCLUDEDIR) $(LIBDIR) $(TR2_VERSION)
$(BUILD)/usdt/pc-vars: usdt-check-pc-vars
	@:
.PHONY: usdt-check-pc-vars
usdt-check-pc-vars:
	@mkdir -p $(BUILD)/usdt
	@echo '$(TR2_PC_VARS)' | cmp -s - $(BUILD)/usdt/pc-vars || \
		echo '$(TR2_PC_VARS)' > $(BUILD)/usdt/pc-vars

$(BUILD)/tr2.pc: usdt/tr2.pc.in $(BUILD)/usdt/pc-vars
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
		-e 's|@VERSION@|$(TR2_VERSION)|g' $< > $@

# The header also as <tr2/trace2.h>: a program with a trace2.h of its own
# (git, which compiles with -I.) includes tr2's under that name.
install: install-usdt
INSTALLED += $(INCLUDEDIR)/trace2.h $(INCLUDEDIR)/tr2/trace2.h $(LIBDIR)/libtr2.a $(LIBDIR)/$(TR2_SOFILE) $(LIBDIR)/$(TR2_SONAME) \
	$(LIBDIR)/libtr2.so $(LIBDIR)/pkgconfig/tr2.pc
.PHONY: install-usdt
install-usdt: $(BUILD)/libtr2.a $(BUILD)/libtr2.so $(BUILD)/tr2.pc
	install -d $(DESTDIR)$(INCLUDEDIR)/tr2 $(DESTDIR)$(LIBDIR)/pkgconfig
	install -m 644 usdt/trace2.h $(DESTDIR)$(INCLUDEDIR)/trace2.h
	install -m 644 usdt/trace2.h $(DESTDIR)$(INCLUDEDIR)/tr2/trace2.h
	install -m 644 $(BUILD)/libtr2.a $(DESTDIR)$(LIBDIR)/libtr2.a
	install -m 644 $(BUILD)/$(TR2_SOFILE) $(DESTDIR)$(LIBDIR)/$(TR2_SOFILE)
	ln -sf $(TR2_SOFILE) $(DESTDIR)$(LIBDIR)/$(TR2_SONAME)
	ln -sf $(TR2_SONAME) $(DESTDIR)$(LIBDIR)/libtr2.so
	install -m 644 $(BUILD)/tr2.pc $(DESTDIR)$(LIBDIR)/pkgconfig/tr2.pc
