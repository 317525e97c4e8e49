# Sourced by the test scripts: run as root or as the service user, install Debian packages.
# PostgreSQL and PgBouncer refuse to run as root: as root, they run as postgres.

as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo -n "$@"; else return 1; fi
}

svc_user=$(id -un)
[ "$(id -u)" = 0 ] && id postgres >/dev/null 2>&1 && svc_user=postgres
as_svc() { if [ "$(id -un)" = "$svc_user" ]; then "$@"; else su "$svc_user" -s /bin/sh -c "$(printf '%q ' "$@")"; fi; }

apt_install() {
	command -v apt-get >/dev/null || return 1
	if [ ! -f /tmp/.anysqs-apt-updated ]; then
		as_root apt-get -o DPkg::Lock::Timeout=300 update -qq >/dev/null 2>&1 && touch /tmp/.anysqs-apt-updated
	fi
	# Wait for another apt-get or dpkg on the machine rather than fail on its lock.
	as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq "$@" >/dev/null 2>&1
}

# pg_ready reports whether a PostgreSQL (or PgBouncer) answers on host $1, port $2.
pg_ready() { pg_isready -q -h "$1" -p "$2" 2>/dev/null || (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
