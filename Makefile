# tr2: Git's Trace2 as USDT probes read by eBPF.
#
#   make                  build everything into build/
#   make test             unit tests, tr2-fmt tests against git, end-to-end tests (BPF ones need root)
#   make bench            benchmarks (never part of make test)
#   make install PREFIX=/usr/local   (DESTDIR=/stage to stage it; BINDIR, LIBDIR,
#                                     INCLUDEDIR, MANDIR to place the parts)
#   make uninstall PREFIX=/usr/local  removes what install put there
#   make deb              build/deb/*.deb (debian/, dpkg-buildpackage)
#
# Each directory contributes a fragment (DIR/build.mk) that appends to ALL
# and TESTS, adds its install-* rule as a prerequisite of `install` and
# appends the paths it installs (without DESTDIR) to INSTALLED.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
BUILD  := build
CC     ?= gcc
CLANG  ?= clang
# Debian installs bpftool in /usr/sbin, which is not in a user's PATH (root's only).
BPFTOOL ?= $(firstword $(shell command -v bpftool) /usr/sbin/bpftool)
SAN_FLAGS ?=
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wmissing-prototypes $(SAN_FLAGS)
CPPFLAGS += -D_GNU_SOURCE -Iusdt -Iformatter -Ibpf -I$(BUILD)
LDFLAGS += $(SAN_FLAGS)

ALL :=
TESTS :=
INSTALLED :=

.PHONY: all test bench install uninstall clean
.DEFAULT_GOAL := all

include usdt/build.mk
include formatter/build.mk
include formatter/tr2fmt.mk
include bpf/build.mk
include loader/build.mk
include examples/build.mk
include man/build.mk
include tests/build.mk

all: $(ALL)

# After the fragments' install-* rules: a library installed into a directory
# of the dynamic loader's path is not found until its cache is refreshed, as
# libtool and Debian's packaging do; not for a DESTDIR staging or a private
# prefix (README: LD_LIBRARY_PATH or an rpath there).
install:
	@$(if $(DESTDIR),:,scripts/ldconfig-refresh.sh "$(LIBDIR)")

# Then the directories of INSTALLED that install may have created and that
# are empty now (never BINDIR or LIBDIR themselves).
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	@for d in $(addprefix $(DESTDIR),$(INCLUDEDIR)/tr2 $(LIBDIR)/pkgconfig $(MANDIR)/man1 $(MANDIR)/man3); do \
		if [ -d "$$d" ]; then rmdir --ignore-fail-on-non-empty "$$d"; fi; done
	@$(if $(DESTDIR),:,scripts/ldconfig-refresh.sh "$(LIBDIR)")

# Runs every suite, even after a failure, and fails at the end if any did.
test: all
	@failed=""; for t in $(TESTS); do $(MAKE) --no-print-directory $$t || failed="$$failed $$t"; done; \
	if [ -n "$$failed" ]; then echo "make test: failed:$$failed"; exit 1; fi; echo "make test: all suites passed"

$(BUILD):
	mkdir -p $@

clean:
	rm -rf $(BUILD)

# The Debian packages tr2, libtr2-0 and libtr2-dev (debian/), built by
# dpkg-buildpackage in a copy of the source tree under $(DEB_BUILD), where
# the .deb files land (dpkg-buildpackage writes into the parent directory).
DEB_BUILD := $(BUILD)/deb
.PHONY: deb
deb:
	rm -rf $(DEB_BUILD) && mkdir -p $(DEB_BUILD)/tr2-$(TR2_VERSION)
	tar -c --exclude-vcs --exclude='./build*' . | tar -x -C $(DEB_BUILD)/tr2-$(TR2_VERSION)
	cd $(DEB_BUILD)/tr2-$(TR2_VERSION) && dpkg-buildpackage -b -us -uc
	@ls $(DEB_BUILD)/*.deb

include bench/build.mk
include tests/fuzz/build.mk
include contrib/git/build.mk
# Last, so that test-deb is the last suite of make test: it installs the
# packages system-wide and purges them again, even when it fails.
include tests/deb/build.mk
