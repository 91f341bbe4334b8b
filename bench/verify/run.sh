#!/usr/bin/env bash
# Benchmark of package verification (issue 3, point 9).
#
# 1. Time: `registry verify` of a ~50 MiB package against `sha256sum FILE && tar -xzf FILE`
#    of the same file, best of N runs each, in the same run. Target: ratio <= 1.5.
# 2. Memory: peak heap above idle while verify.Package reads a ~100 MiB package (the
#    host's download cap), sampled with runtime/metrics. Target: < 64 MiB.
#
# Usage: bench/verify/run.sh [N]   (N = runs per measurement, default 5)
set -euo pipefail

runs=${1:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cd "$root"
go build -o "$tmp/verify-bench" ./bench/verify
# The real command when it builds; otherwise the driver, which makes the same call.
if go build -o "$tmp/registry" ./cmd/registry 2>"$tmp/build.log"; then
	verify_cmd=("$tmp/registry" verify)
	echo "timing: registry verify FILE"
else
	verify_cmd=("$tmp/verify-bench" verify)
	echo "timing: verify-bench verify FILE (cmd/registry does not build right now)"
fi

mkdir -p "$tmp/p50" "$tmp/p100"
p50=$("$tmp/verify-bench" gen -mib 50 -out "$tmp/p50")
p100=$("$tmp/verify-bench" gen -mib 99 -out "$tmp/p100")

now() { date +%s%N; }

# best_of CMD...: the smallest wall time of $runs runs, in nanoseconds; the extraction
# folder is emptied between runs, outside the timed part.
best_of() {
	local best=0 start end took
	for _ in $(seq "$runs"); do
		rm -rf "$tmp/x" && mkdir -p "$tmp/x"
		start=$(now)
		"$@" >/dev/null
		end=$(now)
		took=$((end - start))
		if [ "$best" -eq 0 ] || [ "$took" -lt "$best" ]; then best=$took; fi
	done
	echo "$best"
}

baseline() { sha256sum "$1" && tar -xzf "$1" -C "$tmp/x"; }

# Both packages must verify clean, or the timings would measure a refusal.
"${verify_cmd[@]}" "$p50" >/dev/null
"${verify_cmd[@]}" "$p100" >/dev/null
cat "$p50" >/dev/null # warm the page cache for both contenders
size50=$(stat -c %s "$p50")
size100=$(stat -c %s "$p100")
t_verify=$(best_of "${verify_cmd[@]}" "$p50")
t_base=$(best_of baseline "$p50")

echo "package_50_bytes        $size50"
printf 'verify_seconds          %.3f\n' "$(echo "$t_verify / 1000000000" | bc -l)"
printf 'sha256sum_tar_seconds   %.3f\n' "$(echo "$t_base / 1000000000" | bc -l)"
printf 'time_ratio              %.2f   (target <= 1.50)\n' "$(echo "$t_verify / $t_base" | bc -l)"
echo "package_100_bytes       $size100"
"$tmp/verify-bench" heap "$p100" | sed 's/^/heap: /'
echo "(target: peak_heap_above_idle_mib < 64)"
