#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite: the unit and integration tests in a normal
# build and in an ASan+UBSan build, then every fuzz target for a short bounded time.
#   FUZZ_SECONDS  seconds per fuzz target (default 10; 0 skips fuzzing)
#   JOBS          parallel build and test jobs (default: number of cores)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=${JOBS:-$(nproc)}
fuzz_seconds=${FUZZ_SECONDS:-10}

bash scripts/setup.sh

passed=0
failed=0
run_ctest() { # build-dir label [ctest args...]
	local log="$1/ctest.log" dir=$1 label=$2
	shift 2
	set +e
	(cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 900 "$@") 2>&1 | tee "$log"
	set -e
	local line total bad
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

build() { # build-dir cmake-args...
	local dir=$1
	shift
	cmake -S "$root" -B "$dir" -DDIRAUTH_WERROR=ON "$@" >/dev/null
	cmake --build "$dir" -j"$jobs"
}

echo "== normal build"
build build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo
run_ctest build/release release

echo "== ASan+UBSan build"
build build/sanitize -DCMAKE_BUILD_TYPE=Debug -DDIRAUTH_SANITIZE=ON -DDIRAUTH_CLUSTER_TESTS=OFF
# The five-authority failure suite runs in the normal build only: its phases are seconds long,
# and five sanitized pairs of daemons on two cores miss them. The cluster tests here (three
# authorities co-signing) move their clocks at half speed.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	DIRAUTH_CLUSTER_MS_PER_SECOND=500 run_ctest build/sanitize sanitize

echo "== ThreadSanitizer build: the multi-threaded tests"
# Group commit and the round tables (store), the signer client's workers and the signer's
# listener, the HTTP server with its guard and deferred answers, the scheduler and prepared
# responses (publish, http), the peers' broadcasts, the transparency log.
threaded="check_store check_store_votes check_signer_client check_listener check_http check_http_guard"
threaded="$threaded check_publish check_peers check_translog"
cmake -S "$root" -B build/tsan -DDIRAUTH_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDIRAUTH_TSAN=ON \
	-DDIRAUTH_CLUSTER_TESTS=OFF >/dev/null
# shellcheck disable=SC2086 # one word a target
cmake --build build/tsan -j"$jobs" --target dirauth-signer dirauthd dirauthctl $threaded
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 run_ctest build/tsan tsan \
	-R "^($(tr ' ' '|' <<<"$threaded"))\$"


if [ "$fuzz_seconds" -gt 0 ]; then
	echo "== fuzz targets, ${fuzz_seconds}s each"
	CC=clang cmake -S "$root" -B build/fuzz -DDIRAUTH_WERROR=ON -DDIRAUTH_FUZZ=ON >/dev/null
	for source in tests/fuzz/fuzz_*.c; do
		name=$(basename "$source" .c)
		corpus_name=${name#fuzz_}
		cmake --build build/fuzz -j"$jobs" --target "$name" >/dev/null
		work=$(mktemp -d)
		[ -d "tests/fuzz/corpus/$corpus_name" ] && cp -r "tests/fuzz/corpus/$corpus_name/." "$work/"
		if (cd build/fuzz && "./tests/$name" -max_total_time="$fuzz_seconds" -timeout=10 \
			-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/" "$work" >"$work.log" 2>&1); then
			echo "fuzz $name: $(grep -Eo 'stat::number_of_executed_units: [0-9]+' "$work.log" || tail -n 1 "$work.log")"
			passed=$((passed + 1))
		else
			echo "fuzz $name: FAILED"
			tail -n 40 "$work.log"
			failed=$((failed + 1))
		fi
		rm -rf "$work" "$work.log"
	done
fi

echo
echo "all: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
