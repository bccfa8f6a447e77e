#!/bin/sh
# check_nop5.sh ELF...: checks that every trace2 USDT probe site in each ELF
# (as `readelf -n` lists them) is a 1-byte nop followed by the 5-byte nop
# 0f 1f 44 00 00, which Linux 6.18+ turns into a call instead of a trap.
# Prints one line per ELF; exits 1 if a probe site holds anything else or an
# ELF has no trace2 probes.
status=0
for elf in "$@"; do
	locations=$(readelf -n "$elf" | awk '
		/Provider:/ { provider = $2 }
		/Location:/ { if (provider == "trace2") { sub(",", "", $2); print $2 } }')
	if [ -z "$locations" ]; then
		echo "$elf: no trace2 probes"
		status=1
		continue
	fi
	objdump -d "$elf" | awk -v elf="$elf" -v locations="$locations" '
		BEGIN { n = split(locations, list, "\n")
			for (i = 1; i <= n; i++) { a = list[i]; sub("^0x0*", "", a); want[a] = 1 } }
		/^ *[0-9a-f]+:\t/ {
			a = $1; sub(":", "", a); sub("^0*", "", a)
			if (!(a in want)) next
			split($0, f, "\t"); bytes = f[2]; sub(" +$", "", bytes)
			seen[a] = bytes
			# the instruction after the probe address: the 5-byte nop
			getline nextline
			split(nextline, g, "\t"); nbytes = g[2]; sub(" +$", "", nbytes)
			seen[a] = bytes " | " nbytes
		}
		END {
			bad = 0
			for (a in want) {
				if (seen[a] != "90 | 0f 1f 44 00 00") {
					printf "%s: probe at 0x%s holds \"%s\"\n", elf, a, seen[a]; bad = 1
				}
			}
			if (!bad) printf "%s: %d trace2 probe sites, all 90 + 0f 1f 44 00 00\n", elf, n
			exit bad
		}' || status=1
done
exit $status
