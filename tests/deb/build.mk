# tests/deb/: make test-deb builds the Debian packages (make deb), runs
# lintian on them, installs them with apt-get, builds examples/dirscan.c
# against them with pkg-config, traces it with the installed tr2-bpf, builds
# git 2.39.5 with tr2's series against them (make USE_TR2=YesPlease) and
# traces it, and purges them.  Included last by the Makefile: the last suite
# of make test.
.PHONY: test-deb
test-deb: deb
	contrib/git/build.sh fetch $(BUILD) 2.39.5
	tests/deb/run.sh $(DEB_BUILD) $(BUILD)
TESTS += test-deb
