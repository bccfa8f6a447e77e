# man/: the man pages, written in roff's man macros (the one source, no
# generator): tr2-bpf(1), tr2-fmt(1), trace2(3).  make test-man renders and
# lints them and checks them against each program's --help.

MAN_PAGES := man/tr2-bpf.1 man/tr2-fmt.1 man/trace2.3
# MANDIR/man1/tr2-bpf.1, ...: the section is the page's suffix.
MAN_INSTALLED := $(foreach p,$(MAN_PAGES),$(MANDIR)/man$(subst .,,$(suffix $(p)))/$(notdir $(p)))

install: install-man
INSTALLED += $(MAN_INSTALLED)
install-man: $(MAN_PAGES)
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3
	install -m 644 man/tr2-bpf.1 man/tr2-fmt.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 man/trace2.3 $(DESTDIR)$(MANDIR)/man3/

test-man: $(BUILD)/tr2-bpf $(BUILD)/tr2-fmt
	tests/man/run.sh $(BUILD)
TESTS += test-man

.PHONY: install-man test-man
