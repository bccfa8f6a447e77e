# bpf/: the eBPF programs and their skeleton.
# vmlinux.h is generated from the running kernel's BTF, never committed.

BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 -I$(BUILD) -Ibpf -I/usr/include/x86_64-linux-gnu

$(BUILD)/vmlinux.h: | $(BUILD)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BUILD)/tr2.bpf.o: bpf/tr2.bpf.c bpf/tr2_batch.bpf.h bpf/tr2_sched.bpf.h bpf/tr2_hold.bpf.h bpf/tr2_record.h \
		   $(BUILD)/vmlinux.h
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/tr2.skel.h: $(BUILD)/tr2.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

ALL += $(BUILD)/tr2.skel.h
