#!/bin/sh
# Scale benchmark of the registry (loopback only; every phase bounded by count and time).
# Builds ./cmd/registry and ./bench/scale from this checkout, installs Debian's nginx when
# missing (for the gzip comparison), runs at nice 10 and keeps the output in
# bench/scale/results/<label>.txt, e.g.
#   bench/scale/run.sh -label before-1k -sizes 1000
#   bench/scale/run.sh -label after -sizes 1000,10000,50000 -http-seed-budget 15m
set -eu
cd "$(dirname "$0")/../.."
label=run
if [ "${1:-}" = "-label" ]; then label=$2; shift 2; fi
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
	if command -v apt-get >/dev/null 2>&1; then
		SUDO=""
		[ "$(id -u)" -eq 0 ] || SUDO="sudo"
		echo "installing nginx-light with apt-get ..."
		$SUDO apt-get install -y -q nginx-light >/dev/null || { $SUDO apt-get update -q >/dev/null && $SUDO apt-get install -y -q nginx-light >/dev/null; }
	else
		echo "nginx is missing and apt-get is not available: the gzip comparison is skipped" >&2
	fi
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
bin=$(mktemp -d /tmp/registry-scale-bin.XXXXXX)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/registry" ./cmd/registry
go build -o "$bin/scale" ./bench/scale
mkdir -p bench/scale/results
out=bench/scale/results/$label.txt
{
	echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown) $(git log -1 --format=%s 2>/dev/null | cut -c1-80)"
	echo "machine: $(nproc) CPU ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(free -g | awk '/Mem:/{print $2}') GiB RAM, load $(cut -d' ' -f1-3 /proc/loadavg), $(go version | cut -d' ' -f3), $($NGINX -v 2>&1 | cut -d/ -f2), $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "command: bench/scale/run.sh -label $label $*"
	nice -n 10 "$bin/scale" -nginx "$NGINX" -registry "$bin/registry" "$@"
} 2>&1 | tee "$out"
