# tr2: Git's Trace2 as USDT probes read by eBPF.
#
#   make                  build everything into build/
#   make test             unit tests, tr2-fmt tests against git, end-to-end tests (BPF ones need root)
#   make bench            benchmarks (never part of make test)
#   make install PREFIX=/usr/local
#
# Each directory contributes a fragment (DIR/build.mk) that appends to ALL,
# TESTS and the install rules below.

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
INSTALL_STEPS :=

.PHONY: all test bench install clean
.DEFAULT_GOAL := all

include usdt/build.mk
include formatter/build.mk
include formatter/tr2fmt.mk
include bpf/build.mk
include loader/build.mk
include examples/build.mk
include tests/build.mk

all: $(ALL)

$(BUILD):
	mkdir -p $@

clean:
	rm -rf $(BUILD)
