# contrib/git/: git with tr2's probes.  `make git` builds Debian 12's git
# (2.39.5, apt-get source) with the patch series contrib/git/*.patch and
# USE_TR2=YesPlease against this tree's libtr2.a and usdt/trace2.h, and
# installs it into $(BUILD)/git/ (bin/git, libexec/git-core/; the built tree,
# where git's t/ runs, in src/).  `make git-stock` builds the same source
# unpatched, with the same flags, into $(BUILD)/git-stock/ (what make bench
# compares against); `make git-off` the patched source without USE_TR2 into
# $(BUILD)/git-off/.  contrib/git/build.sh says what it fetches and how.

.PHONY: git git-stock git-off
git: $(BUILD)/libtr2.a
	contrib/git/build.sh tr2 $(BUILD)

git-stock:
	contrib/git/build.sh stock $(BUILD)

git-off:
	contrib/git/build.sh off $(BUILD)

# Issue 25, point 2: tr2-bpf's lines for git runs against git's own
# (tests/git/lines.sh; root).
.PHONY: test-git-lines
test-git-lines: all git
	tests/git/lines.sh $(BUILD)

# Issue 25, point 3 (first half): git's t0210-t0212 on the patched git, as
# they are and with tr2-bpf writing the trace files they read
# (tests/git/t021x.sh; root).
.PHONY: test-git-t021x
test-git-t021x: all git
	tests/git/t021x.sh $(BUILD)

# Issue 25, point 3 (second half): git's t0000-t0099 and t1300-t1499 on the
# patched git, untraced and while one tr2-bpf -a traces them; the same
# results, nothing lost, tr2-bpf's RSS flat (tests/git/suite.sh; root).
.PHONY: test-git-suite
test-git-suite: all git
	tests/git/suite.sh $(BUILD)

# The three: make test runs each (and names each that fails); without root
# or BPF each says SKIP (git is built all the same).
.PHONY: test-git
test-git: test-git-t021x test-git-lines test-git-suite
TESTS += test-git-t021x test-git-lines test-git-suite
