#!/bin/sh
# ldconfig-refresh.sh LIBDIR: refreshes the dynamic loader's cache when LIBDIR
# is one of the directories it caches (/etc/ld.so.conf and the built-in ones,
# compared as files: /lib is /usr/lib on Debian 12), so that a shared library
# just installed there, or removed, is found, or no longer found, at once.
# Does nothing for any other directory, which needs LD_LIBRARY_PATH or an
# rpath instead.  Run by `make install` and `make uninstall` without DESTDIR.
set -eu
dir=$1
PATH=$PATH:/sbin:/usr/sbin
[ -d "$dir" ] || exit 0
# `ldconfig -v -N` lists each directory it would cache as "DIR: (from ...)".
for d in $(ldconfig -v -N 2>/dev/null | sed -n 's|^\(/[^:]*\):.*|\1|p'); do
	if [ "$d" -ef "$dir" ]; then
		echo "ldconfig    # $dir is in the dynamic loader's path"
		exec ldconfig
	fi
done
