# tr2: Git's Trace2 as USDT probes read by eBPF.
#
#   make                  build everything into build/
#   make test             unit tests, tr2-fmt tests against git, end-to-end tests (BPF ones need root)
#   make bench            benchmarks (never part of make test)
#   make install PREFIX=/usr/local
#
# Each directory contributes a fragment (DIR/build.mk) that appends to ALL
# and TESTS and adds its install-* rule as a prerequisite of `install`.

PREFIX ?= /usr/local
BUILD  := build
CC     ?= gcc
CLANG  ?= clang
BPFTOOL ?= bpftool
SAN_FLAGS ?=
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wmissing-prototypes $(SAN_FLAGS)
CPPFLAGS += -D_GNU_SOURCE -Iusdt -Iformatter -Ibpf -I$(BUILD)
LDFLAGS += $(SAN_FLAGS)

ALL :=
TESTS :=

.PHONY: all test bench install clean
install:
.DEFAULT_GOAL := all

include usdt/build.mk
include formatter/build.mk
include formatter/tr2fmt.mk
include bpf/build.mk
include loader/build.mk
include examples/build.mk
include tests/build.mk

all: $(ALL)

# Runs every suite, even after a failure, and fails at the end if any did.
test: all
	@failed=""; for t in $(TESTS); do $(MAKE) --no-print-directory $$t || failed="$$failed $$t"; done; \
	if [ -n "$$failed" ]; then echo "make test: failed:$$failed"; exit 1; fi; echo "make test: all suites passed"

$(BUILD):
	mkdir -p $@

clean:
	rm -rf $(BUILD)
include bench/build.mk
include tests/fuzz/build.mk
