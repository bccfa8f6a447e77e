#!/usr/bin/env bash
# Runs the libFuzzer harnesses (tests/fuzz/build.mk builds them).
#
#   tests/fuzz/run.sh short FUZZ_DIR SECONDS   make fuzz-short: every harness at
#                                              once, new inputs thrown away
#   tests/fuzz/run.sh long FUZZ_DIR SECONDS    make fuzz: one after the other,
#                                              going on after failures, new inputs
#                                              kept in FUZZ_DIR/corpus-NAME/
#   tests/fuzz/run.sh merge FUZZ_DIR           make fuzz-merge: adds the inputs of
#                                              FUZZ_DIR/corpus-NAME/ that bring new
#                                              coverage to tests/fuzz/corpus/NAME/
#
# Per harness: first every file in tests/fuzz/crashes/NAME/ (inputs that once
# crashed: they must not any more), then the fuzzer over tests/fuzz/corpus/NAME/.
# Any sanitizer report (memory error, leak, undefined behaviour), crash or
# timeout fails the harness; the input is saved in FUZZ_DIR/artifacts/NAME/.
# The last line is "fuzz: N passed, M failed".
set -u
cd "$(dirname "$0")/../.."
MODE=${1:?usage: run.sh short|long|merge FUZZ_DIR [SECONDS]}
D=${2:?usage: run.sh short|long|merge FUZZ_DIR [SECONDS]}
SECS=${3:-20}
SRC=tests/fuzz

# NAME BINARY EXTRA-FLAGS
HARNESSES=(
	"decode fuzz_decode -max_len=40000"
	"event fuzz_read_event -max_len=16384 -dict=$SRC/event.dict"
	"record fuzz_record -max_len=40000"
)

# Stack traces for UBSan; libFuzzer already turns on leak detection.
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=1

if [ "$MODE" = merge ]; then
	for h in "${HARNESSES[@]}"; do
		set -- $h
		[ -d "$D/corpus-$1" ] || { echo "fuzz-merge: $1: no $D/corpus-$1 (run make fuzz first)"; continue; }
		before=$(ls "$SRC/corpus/$1" | wc -l)
		"$D/$2" -merge=1 "${@:3}" "$SRC/corpus/$1" "$D/corpus-$1" > "$D/merge-$1.log" 2>&1 ||
			{ echo "fuzz-merge: $1 failed, see $D/merge-$1.log"; exit 1; }
		echo "fuzz-merge: $1: $before -> $(ls "$SRC/corpus/$1" | wc -l) inputs, $(cat "$SRC/corpus/$1"/* | wc -c) bytes"
	done
	exit 0
fi

# what LOG says went wrong: the sanitizer's first line, then the first
# frames in tr2's own code
why() {
	grep -m1 -E 'runtime error:|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer|UndefinedBehaviorSanitizer)' "$1" |
		sed -E 's#^==[0-9]+== ?##; s#^/[^ ]*/(loader|formatter|tests)/#\1/#'
	grep -E '^ +#[0-9]+ 0x[0-9a-f]+ in [^ ]+ /[^ ]*/(loader|formatter|tests/fuzz)/' "$1" | head -4 |
		sed -E 's#^ +\#[0-9]+ 0x[0-9a-f]+ in ([^ ]+) /[^ ]*/((loader|formatter|tests/fuzz)/[^ ]*)#  at \1 \2#'
}

# fuzz_one NAME BINARY EXTRA...: writes NAME's result to $D/result-NAME, log to $D/log-NAME.
fuzz_one() {
	local name=$1 bin=$D/$2 log=$D/log-$1 rc=0 f
	shift 2
	rm -rf "$D/artifacts/$name"
	mkdir -p "$D/artifacts/$name"
	: > "$log"
	# Known crashers: each must now run clean.
	for f in "$SRC/crashes/$name"/*; do
		[ -f "$f" ] || continue
		if ! "$bin" "$@" -rss_limit_mb=2048 -artifact_prefix="$D/replay-$name-" "$f" > "$log.replay" 2>&1; then
			{ echo "reproducer $f still fails:"; why "$log.replay" | sed 's/^/  /'; } >> "$D/result-$name"
			rc=1
		fi
		cat "$log.replay" >> "$log"
		rm -f "$log.replay"
	done
	local new=$D/corpus-$name
	[ "$MODE" = short ] && { new=$D/new-$name; rm -rf "$new"; }
	mkdir -p "$new"
	# The long run goes on after a failure (in a child process, -fork) and
	# collects every failing input; the short one stops at the first.
	local more=
	[ "$MODE" = long ] && more="-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1"
	if ! "$bin" "$@" $more -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$D/artifacts/$name/" "$new" "$SRC/corpus/$name" > "$log.fuzz" 2>&1 ||
		[ -n "$(ls "$D/artifacts/$name")" ]; then
		{ echo "the fuzzer found a failing input: $(ls "$D/artifacts/$name"/* 2>/dev/null | tr '\n' ' ')"
		  if [ "$MODE" = long ]; then
			# one line per distinct failure: where, and how many inputs
			for f in "$D/artifacts/$name"/*; do
				"$bin" "$@" -rss_limit_mb=2048 -artifact_prefix="$D/replay-$name-" "$f" > "$log.replay" 2>&1
				why "$log.replay" | sed -E '1s/(runtime error: [a-z -]+).*/\1/; 1s/ \((malloc|used).*//' |
					head -2 | tr -s ' \n' ' '
				echo
			done | sort | uniq -c | sed 's/^/  /'
			rm -f "$log.replay"
		  else
			why "$log.fuzz" | sed 's/^/  /'
		  fi; } >> "$D/result-$name"
		rc=1
	fi
	cat "$log.fuzz" >> "$log"
	rm -f "$log.fuzz" "$D/replay-$name-"*
	[ "$MODE" = short ] && rm -rf "$new"
	echo $rc >> "$D/result-$name"
}

mkdir -p "$D"
for h in "${HARNESSES[@]}"; do
	set -- $h
	rm -f "$D/result-$1"
	if [ ! -x "$D/$2" ]; then echo "fuzz: $D/$2 is not built"; exit 2; fi
done

pids=()
for h in "${HARNESSES[@]}"; do
	set -- $h
	if [ "$MODE" = short ]; then
		fuzz_one "$@" & pids+=($!)
	else
		echo "fuzz: $1: ${SECS}s, new inputs in $D/corpus-$1/"
		fuzz_one "$@"
	fi
done
[ ${#pids[@]} -gt 0 ] && wait "${pids[@]}"

pass=0 fail=0
for h in "${HARNESSES[@]}"; do
	set -- $h
	log=$D/log-$1
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1)
	if [ "$(tail -1 "$D/result-$1")" = 0 ]; then
		pass=$((pass + 1))
		echo "ok   $1: ${runs:-?} runs, ${cov:-cov: ?}"
	else
		fail=$((fail + 1))
		echo "FAIL $1 ($D/$2, log $log)"
		sed '$d' "$D/result-$1" | sed 's/^/     /'
		echo "     reproduce: $D/$2 FILE (whole reports in $log); keep new ones in tests/fuzz/crashes/$1/"
	fi
done
echo "fuzz: $pass passed, $fail failed"
[ $fail = 0 ]
