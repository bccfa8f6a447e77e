# examples/: programs showing trace2.h in use, linked with $(BUILD)/libtr2.a.

EXAMPLES := $(BUILD)/examples/dirscan

ALL += $(EXAMPLES)

$(BUILD)/examples/%: examples/%.c $(BUILD)/libtr2.a usdt/trace2.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -pthread $(LDFLAGS) -o $@ $< $(BUILD)/libtr2.a
