# tests/deb/: make test-deb builds the Debian packages (make deb), runs
# lintian on them, installs them with apt-get, builds examples/dirscan.c
# against them with pkg-config, traces it with the installed tr2-bpf, and
# purges them.  Included last by the Makefile: the last suite of make test.
.PHONY: test-deb
test-deb: deb
	tests/deb/run.sh $(DEB_BUILD)
TESTS += test-deb
