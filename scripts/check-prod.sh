#!/usr/bin/env bash
# The production start as the container image does it, without a container engine: a copy of the
# runtime files with production dependencies only (`npm ci --omit=dev`), `npm run start:prod` on
# a fresh DATA_DIR, then /healthz, /readyz and the web app must answer. Used by .ci/run.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
node_bin="$root/node_modules/node/bin/node" # Node 24, as the image's base
work="$(mktemp -d)"
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
cp -r "$root/package.json" "$root/package-lock.json" "$root/src" "$root/bin" "$work/"
mkdir -p "$work/dist" && cp -r "$root/dist/web" "$work/dist/"
# The worker CLI's bundle when one was built (`npm run build` makes it, as the image does);
# without it the launcher runs the TypeScript sources, which this also checks.
if [ -f "$root/dist/worker-cli/stamp.json" ]; then
  mkdir -p "$work/dist/worker-cli"
  cp "$root/dist/worker-cli/rampart-worker.cjs" "$root/dist/worker-cli/stamp.json" "$work/dist/worker-cli/"
fi
(cd "$work" && npm ci --omit=dev --no-audit --no-fund --ignore-scripts >/dev/null)
# (Packages marked devOptional in the lock file, e.g. a test runner a runtime package lists as an
# optional peer, are still installed by npm; what matters is that nothing else is needed.)
port=$(( 20000 + RANDOM % 20000 ))
(cd "$work" && NODE_ENV=production PORT=$port HOST=127.0.0.1 DATA_DIR="$work/data" exec "$node_bin" src/server/main.ts >"$work/server.log" 2>&1) &
pid=$!
for _ in $(seq 1 120); do curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 1; done
curl -fsS "http://127.0.0.1:$port/healthz"; echo
curl -fsS "http://127.0.0.1:$port/readyz"; echo
curl -fsS -o /dev/null "http://127.0.0.1:$port/" && echo "web app: ok"
"$node_bin" "$work/bin/rampart-worker.mjs" --version
"$node_bin" "$work/bin/rampart-worker.mjs" --help | head -n 1
