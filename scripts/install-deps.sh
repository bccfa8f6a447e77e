#!/bin/sh
# Installs the Debian 12 packages tr2 needs to build and test (run as root);
# chromium and npm are for tests/e2e/viewers.sh (speedscope, headless), sudo
# for tests/install/run.sh (README's first commands as a user with sudo),
# bpftrace for tests/e2e/harm.sh (another tracer on the public probes),
# libssl-dev for the unit test that checks the session id's SHA-1 against
# OpenSSL's (nothing tr2 builds links it).  make git (contrib/git/build.sh;
# make test builds it for make test-git) fetches Debian's git source with
# apt-get source (its own apt lists, with Debian's archive keyring), unpacks
# it with dpkg-source (dpkg-dev, xz-utils), applies the series with patch and
# builds it (zlib1g-dev); git's t0210-t0212 read their traces with perl
# (JSON::PP).  make test-kernels boots Debian's kernels under QEMU
# (qemu-system-x86) with an initramfs of busybox-static (made with cpio,
# the modules indexed with kmod's depmod).
# With --bench, also what `make bench` compares against (LTTng-UST, perf).
set -eu
pkgs="make gcc g++ clang llvm pkg-config libbpf-dev bpftool libelf-dev zlib1g-dev libssl-dev \
libsimdjson-dev libcmocka-dev systemtap-sdt-dev libclang-rt-14-dev python3 git \
man-db mandoc dpkg-dev debhelper lintian chromium sudo bpftrace \
debian-archive-keyring xz-utils patch perl qemu-system-x86 busybox-static cpio kmod"
# npm fetches speedscope for tests/e2e/viewers.sh; a Node.js that is not
# Debian's (NodeSource's) brings its own npm and conflicts with Debian's
command -v npm > /dev/null || pkgs="$pkgs npm"
if [ "${1:-}" = "--bench" ]; then
	pkgs="$pkgs liblttng-ust-dev lttng-tools linux-perf valgrind"
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q $pkgs
