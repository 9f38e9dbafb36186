#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite: the unit and integration tests in a normal
# build and in an ASan+UBSan build, the multi-threaded tests in a ThreadSanitizer build, then
# every fuzz target for a short bounded time, JOBS of them at once. Each stage says when it
# started (seconds since the start), so a slow stage shows.
#   FUZZ_SECONDS  seconds per fuzz target (default 3: a smoke run of every target on its corpus;
#                 longer runs, e.g. FUZZ_SECONDS=600, find more; 0 skips fuzzing)
#   JOBS          parallel build, test and fuzz jobs (default: number of cores)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=${JOBS:-$(nproc)}
fuzz_seconds=${FUZZ_SECONDS:-3}
SECONDS=0
stage() { echo "== $1 (at ${SECONDS} s)"; }

bash scripts/setup.sh

passed=0
failed=0
ctest_into() { # build-dir log [ctest args...]: runs ctest there, its output into log
	local dir=$1 log=$2
	shift 2
	(cd "$dir" && ctest --output-on-failure --timeout 900 "$@") >"$log" 2>&1 || true
}
tally() { # log label: adds the summary line of a ctest log to passed and failed
	local log=$1 label=$2 line total bad
	line=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$log" | tail -n 1 || true)
	if [ -z "$line" ]; then
		echo "test.sh: $label: ctest printed no summary" >&2
		failed=$((failed + 1))
		return
	fi
	total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
	bad=$(sed -E 's/.*, ([0-9]+) tests failed.*/\1/' <<<"$line")
	passed=$((passed + total - bad))
	failed=$((failed + bad))
}
run_ctest() { # build-dir label [ctest args...]
	local dir=$1 label=$2
	shift 2
	set +e
	(cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 900 "$@") 2>&1 | tee "$dir/ctest.log"
	set -e
	tally "$dir/ctest.log" "$label"
}

build() { # build-dir cmake-args...
	local dir=$1
	shift
	cmake -S "$root" -B "$dir" -DDIRAUTH_WERROR=ON "$@" >/dev/null
	cmake --build "$dir" -j"$jobs"
}

stage "normal build"
build build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo
# The tests labelled clock_bound wait on the real schedule and on delayed links far more than they
# compute (about a tenth of their time on a CPU): they run beside the others, two at a time, not in
# the JOBS places, and their output follows.
ctest_into build/release build/release/ctest-clock-bound.log -L clock_bound -j2 &
clock_bound=$!
run_ctest build/release release -LE clock_bound
wait "$clock_bound"
cat build/release/ctest-clock-bound.log
tally build/release/ctest-clock-bound.log "release, clock-bound"

stage "ASan+UBSan build"
build build/sanitize -DCMAKE_BUILD_TYPE=Debug -DDIRAUTH_SANITIZE=ON -DDIRAUTH_CLUSTER_TESTS=OFF
# The five-authority failure suite runs in the normal build only: its phases are seconds long,
# and five sanitized pairs of daemons on two cores miss them. The cluster tests here (three
# authorities co-signing) move their clocks at half speed.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	DIRAUTH_CLUSTER_MS_PER_SECOND=500 run_ctest build/sanitize sanitize -LE '^(bench|static|interop|network)$'
# (The benchmarks' smoke runs, the checks of the tree itself, the interoperability check with the
# Go verifier and the authorities on long links ran in the normal build: the sanitizers would see
# no code in them that other tests here do not run, and they take minutes when sanitized.)

stage "ThreadSanitizer build: the multi-threaded tests"
# The key objects verification shares (crypto), group commit and the round tables (store), the
# signer client's workers and the signer's listener, the HTTP server with its guard and deferred
# answers, the scheduler and prepared responses (publish, http), the peers' broadcasts and the
# pool of kept-alive connections they share (net), the transparency log, the log's answers kept
# between requests (log and proof routes), the builder of diffs beside publication, the live
# configuration that a reload swaps under running requests.
threaded="check_crypto check_store check_store_votes check_signer_client check_listener check_http check_http_guard"
threaded="$threaded check_publish check_peers check_translog check_net check_log_routes check_proof_routes"
threaded="$threaded check_publish_diffs check_config_reload test_reload"
cmake -S "$root" -B build/tsan -DDIRAUTH_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDIRAUTH_TSAN=ON \
	-DDIRAUTH_CLUSTER_TESTS=OFF >/dev/null
# shellcheck disable=SC2086 # one word a target
cmake --build build/tsan -j"$jobs" --target dirauth-signer dirauthd dirauthctl $threaded
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 run_ctest build/tsan tsan \
	-R "^($(tr ' ' '|' <<<"$threaded"))\$"


# One fuzz target for fuzz_seconds on a copy of its corpus; prints one line, and the end of
# libFuzzer's output on a failure. Exit status: the target's.
fuzz_one() { # name
	local name=$1 corpus_name=${1#fuzz_} work status=0
	work=$(mktemp -d)
	if [ -d "tests/fuzz/corpus/$corpus_name" ]; then cp -r "tests/fuzz/corpus/$corpus_name/." "$work/"; fi
	(cd build/fuzz && "./tests/$name" -max_total_time="$fuzz_seconds" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/" "$work" >"$work.log" 2>&1) || status=$?
	if [ "$status" -eq 0 ]; then
		echo "fuzz $name: $(grep -Eo 'stat::number_of_executed_units: [0-9]+' "$work.log" || tail -n 1 "$work.log")"
	else
		echo "fuzz $name: FAILED"
		tail -n 40 "$work.log"
	fi
	rm -rf "$work" "$work.log"
	return "$status"
}

if [ "$fuzz_seconds" -gt 0 ]; then
	stage "fuzz targets, ${fuzz_seconds} s each, $jobs at a time"
	targets=()
	for source in tests/fuzz/fuzz_*.c; do targets+=("$(basename "$source" .c)"); done
	CC=clang cmake -S "$root" -B build/fuzz -DDIRAUTH_WERROR=ON -DDIRAUTH_FUZZ=ON >/dev/null
	cmake --build build/fuzz -j"$jobs" --target "${targets[@]}" >/dev/null
	results=$(mktemp -d)
	running=0
	for name in "${targets[@]}"; do
		(fuzz_one "$name" >"$results/$name.out" 2>&1 && touch "$results/$name.ok") &
		running=$((running + 1))
		if [ "$running" -ge "$jobs" ]; then
			wait -n || true
			running=$((running - 1))
		fi
	done
	wait
	for name in "${targets[@]}"; do
		cat "$results/$name.out"
		if [ -e "$results/$name.ok" ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
	done
	rm -rf "$results"
fi

echo
echo "test.sh: done in ${SECONDS} s"
echo "all: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
