# loader/: tr2-bpf, the libbpf program.
LOADER_SRCS := loader/tr2_bpf.c loader/tr2_opts.c loader/tr2_tracer.c loader/tr2_guard.c loader/tr2_attach.c loader/tr2_cmd.c loader/tr2_decode.c loader/tr2_mode.c \
	loader/tr2_session.c loader/tr2_ring.c loader/tr2_summary.c loader/tr2_kernel.c loader/tr2_recording.c
LOADER_OBJS := $(LOADER_SRCS:%.c=$(BUILD)/%.o)
LOADER_LIBS := -lpthread -lbpf -lelf -lz $(FMT_LIBS)

$(BUILD)/loader/%.o: loader/%.c $(BUILD)/tr2.skel.h $(wildcard loader/*.h formatter/*.h bpf/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# --version: the release of usdt/build.mk
$(BUILD)/loader/tr2_opts.o: CPPFLAGS += -DTR2_VERSION='"$(TR2_VERSION)"'

$(BUILD)/tr2-bpf: $(LOADER_OBJS) $(BUILD)/libtr2fmt.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LOADER_LIBS)

ALL += $(BUILD)/tr2-bpf

install: install-tr2-bpf
INSTALLED += $(BINDIR)/tr2-bpf
install-tr2-bpf: $(BUILD)/tr2-bpf
	install -D -m 755 $< $(DESTDIR)$(BINDIR)/tr2-bpf
.PHONY: install-tr2-bpf
