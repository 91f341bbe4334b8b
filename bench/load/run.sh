#!/bin/sh
# Load script of the registry (loopback only; every phase bounded by count and time).
# Installs Debian's nginx when missing, for the index.json comparison, then runs
# bench/load with any flags given, e.g.  bench/load/run.sh -clients 64 -duration 10s
set -eu
cd "$(dirname "$0")/../.."
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
	if command -v apt-get >/dev/null 2>&1; then
		SUDO=""
		[ "$(id -u)" -eq 0 ] || SUDO="sudo"
		echo "installing nginx-light with apt-get ..."
		$SUDO apt-get install -y -q nginx-light >/dev/null || { $SUDO apt-get update -q >/dev/null && $SUDO apt-get install -y -q nginx-light >/dev/null; }
	else
		echo "nginx is missing and apt-get is not available: phase (b) will be skipped" >&2
	fi
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
go build -o /tmp/registry-load ./bench/load
go build -o /tmp/registry-load-server ./cmd/registry
echo "machine: $(nproc) CPU ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(go version | cut -d' ' -f3), $(date -u +%Y-%m-%dT%H:%MZ)"
exec /tmp/registry-load -nginx "$NGINX" -registry /tmp/registry-load-server "$@"
