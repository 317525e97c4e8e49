#!/usr/bin/env bash
# Runs a command (normally anysqs-load) and reports how the machine's CPU time was shared
# while it ran: the gateway process, the command itself, PostgreSQL's processes, and the
# rest of the busy time (kernel network and scheduling work, mostly). Linux only.
# docs/performance.md ("Where the CPU goes") divides these by the messages moved.
#
#   scripts/cpu-share.sh GATEWAY_PID COMMAND [ARGS...]
#
# PostgreSQL processes are those of the user running the server (postgres); backends that
# start and end during the run are counted from their last sample, taken every 0.2 s.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 GATEWAY_PID COMMAND [ARGS...]" >&2; exit 2; }
gw=$1
shift
tick=$(getconf CLK_TCK)

proc_ticks() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
pg_snapshot() {
	for p in $(pgrep -u postgres || true); do
		awk -v p="$p" '{print p, $14+$15}' "/proc/$p/stat" 2>/dev/null || true
	done | sort
}
busy_idle() { awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6}' /proc/stat; }

pg0=$(pg_snapshot)
g0=$(proc_ticks "$gw")
read -r b0 i0 <<<"$(busy_idle)"
"$@" &
cmd=$!
own=0
pg1=$pg0
while kill -0 "$cmd" 2>/dev/null; do
	t=$(proc_ticks "$cmd")
	[ "$t" != 0 ] && own=$t
	pg1=$(pg_snapshot)
	sleep 0.2
done
wait "$cmd"
g1=$(proc_ticks "$gw")
read -r b1 i1 <<<"$(busy_idle)"
# Backends absent from the first snapshot count from zero.
pg=$(join -a2 -e0 -o '0,1.2,2.2' <(echo "$pg0") <(echo "$pg1") | awk '{d += $3 - $2} END {print d + 0}')
gwt=$((g1 - g0))
busy=$((b1 - b0))
secs() { awk -v t="$1" -v h="$tick" 'BEGIN {printf "%.2f", t / h}'; }
echo "cpu-share: gateway $(secs "$gwt") s, command $(secs "$own") s, postgres $(secs "$pg") s," \
	"other $(secs $((busy - gwt - own - pg))) s, idle $(secs $((i1 - i0))) s" >&2
