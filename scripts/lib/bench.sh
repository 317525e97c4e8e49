# Sourced by the benchmark scripts: ports and scratch databases.

# free_port prints a TCP port nothing listens on.
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 20000))
		ss -Htln "sport = :$p" | grep -q . || { echo "$p"; return; }
	done
}

# wait_port waits until 127.0.0.1:$1 accepts connections (process $2 must stay up).
wait_port() {
	for _ in $(seq 1 300); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# scratch_database PREFIX creates a database named PREFIX_<random> on
# $ANYSQS_TEST_POSTGRES_DSN's server and prints its name and its DSN, one per line.
# The caller drops it (DROP DATABASE ... WITH (FORCE)).
scratch_database() {
	local db
	db="$1_$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
	psql "$ANYSQS_TEST_POSTGRES_DSN" -qAt -c "CREATE DATABASE $db" >/dev/null || return 1
	printf '%s\n%s\n' "$db" "$(printf '%s' "$ANYSQS_TEST_POSTGRES_DSN" | sed -E "s#/[^/?]*(\?|$)#/$db\1#")"
}

# serve_gateway BIN CONFIG LOG starts `BIN serve --config CONFIG` in the background, with
# its log in LOG, and waits for its listen address. It sets gw_pid and addr, and returns
# 1 (the log on stderr) if the gateway exits or does not listen within 10 s.
serve_gateway() {
	"$1" serve --config "$2" 2>"$3" &
	gw_pid=$!
	addr=
	for _ in $(seq 1 100); do
		addr=$(sed -nE 's/.*anysqs listening.* addr=([^ ]+).*/\1/p' "$3" | head -n1)
		[ -n "$addr" ] && return 0
		kill -0 "$gw_pid" 2>/dev/null || break
		sleep 0.1
	done
	cat "$3" >&2
	return 1
}
