#!/usr/bin/env bash
# Prints the backend name an anysqs config file names (backend: name: X), for make run;
# "all" when it cannot tell, which builds every backend. ANYSQS_BACKEND wins, as in serve.
set -euo pipefail
if [ -n "${ANYSQS_BACKEND:-}" ]; then echo "$ANYSQS_BACKEND"; exit 0; fi
name=$(awk '/^backend:/ {in_backend=1; next} in_backend && /^[^ #]/ {in_backend=0}
	in_backend && /^[ \t]+name:/ {sub(/^[ \t]+name:[ \t]*/, ""); sub(/[ \t]*#.*/, ""); gsub(/["'"'"']/, ""); print; exit}' "$1" 2>/dev/null || true)
echo "${name:-all}"
