# contrib/git/: git with tr2's probes.  `make git` builds git from Debian's
# source package with the patch series of its release line
# (contrib/git/<line>/*.patch) and USE_TR2=YesPlease against this tree's
# libtr2.a and usdt/trace2.h, and installs it: GIT_VERSION=2.39.5 (Debian
# 12's, the default) into $(BUILD)/git/, GIT_VERSION=2.55.0 (git's newest
# release, Debian sid's) into $(BUILD)/git-2.55.0/ (bin/git,
# libexec/git-core/; the built tree, where git's t/ runs, in src/).
# `make git-stock` builds the same source unpatched, with the same flags,
# into $(BUILD)/git-stock[-VERSION]/ (what make bench compares against);
# `make git-off` the patched source without USE_TR2 into
# $(BUILD)/git-off[-VERSION]/.  contrib/git/build.sh says what it fetches
# and how.

# The releases the series exist for; make test and make bench run both.
GIT_VERSIONS := 2.39.5 2.55.0
GIT_VERSION := 2.39.5
# gitdir VERSION: where make git installs that release.
gitdir = $(BUILD)/git$(if $(filter 2.39.5,$1),,-$1)

.PHONY: git git-stock git-off
git: $(BUILD)/libtr2.a
	contrib/git/build.sh tr2 $(BUILD) $(GIT_VERSION)

git-stock:
	contrib/git/build.sh stock $(BUILD) $(GIT_VERSION)

git-off:
	contrib/git/build.sh off $(BUILD) $(GIT_VERSION)

# Each suite per release: test-git-t021x-2.55.0 and so on (the release
# built first; each says SKIP without root or BPF).  Not .PHONY: make
# searches no pattern rule for a phony target.
#
# Issue 25, point 3 (first half), and issue 34, point 3: git's t0210-t0212
# on the patched git, as they are and with tr2-bpf writing the trace files
# they read; and the series' own t0214, which must run, not skip
# (tests/git/t021x.sh; root).
test-git-t021x-%: all
	contrib/git/build.sh tr2 $(BUILD) $*
	tests/git/t021x.sh $(BUILD) $(call gitdir,$*)

# Issue 25, point 2: tr2-bpf's lines for git runs against git's own
# (tests/git/lines.sh; root).
test-git-lines-%: all
	contrib/git/build.sh tr2 $(BUILD) $*
	tests/git/lines.sh $(BUILD) $(call gitdir,$*)

# Issue 25, point 3 (second half): a slice of git's suite on the patched
# git, untraced and while one tr2-bpf -a traces it; the same results,
# nothing lost, tr2-bpf's RSS flat (tests/git/suite.sh; root).
test-git-suite-%: all
	contrib/git/build.sh tr2 $(BUILD) $*
	tests/git/suite.sh $(BUILD) $(call gitdir,$*)

# Issue 34, point 4: each series applies with git am to a clean checkout of
# its release, and reads as git's SubmittingPatches asks (tests/git/am.sh).
.PHONY: test-git-am
test-git-am:
	for v in $(GIT_VERSIONS); do contrib/git/build.sh fetch $(BUILD) $$v || exit 1; done
	tests/git/am.sh $(BUILD) $(GIT_VERSIONS)

# GIT_VERSION's alone, by the names of before.
.PHONY: test-git-t021x test-git-lines test-git-suite
test-git-t021x: test-git-t021x-$(GIT_VERSION)
test-git-lines: test-git-lines-$(GIT_VERSION)
test-git-suite: test-git-suite-$(GIT_VERSION)

GIT_TESTS := test-git-am $(foreach v,$(GIT_VERSIONS),test-git-t021x-$v test-git-lines-$v test-git-suite-$v)
.PHONY: test-git
test-git:
	@failed=""; for t in $(GIT_TESTS); do $(MAKE) --no-print-directory $$t || failed="$$failed $$t"; done; \
	if [ -n "$$failed" ]; then echo "make test-git: failed:$$failed"; exit 1; fi
TESTS += $(GIT_TESTS)
