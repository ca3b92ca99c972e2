#!/usr/bin/env bash
# `bash test/bench/durable-compare.sh [BASE_REF] [SIZE]`: the durable store bench (writes, restart,
# import) on BASE_REF (default: where this branch left main) and on this tree, one after the other in one run, side by side.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
base_ref="${1:-$(git -C "$repo" merge-base main HEAD)}"
size="${2:-10000}"
work="$(mktemp -d)"
trap 'git -C "$repo" worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$repo" worktree add --detach "$work/base" "$base_ref" >/dev/null 2>&1
ln -s "$repo/node_modules" "$work/base/node_modules"
# the same bench code measures both trees' sources
cp "$repo/test/bench/durable-alone.ts" "$repo/test/bench/package.ts" "$work/base/test/bench/"
echo "== $base_ref ($(git -C "$repo" rev-parse --short "$base_ref"))"
(cd "$work/base" && npx tsx test/bench/durable-alone.ts "$size" --json "$work/before.json")
echo "== this tree ($(git -C "$repo" rev-parse --short HEAD))"
(cd "$repo" && npx tsx test/bench/durable-alone.ts "$size" --json "$work/after.json")
mkdir -p "$repo/bench/results"
node -e '
const [before, after] = process.argv.slice(1, 3).map((f) => JSON.parse(require("fs").readFileSync(f, "utf8")))
const row = (label, b, a) => ({ measure: label, before: b, after: a })
const bd = before.durable.find((r) => r.store === "durable"), ad = after.durable.find((r) => r.store === "durable")
const bi = before.mcpImport[0], ai = after.mcpImport[0]
const rows = [
  row("write p50 ms", bd.writeP50Ms, ad.writeP50Ms), row("write p95 ms", bd.writeP95Ms, ad.writeP95Ms), row("write max ms", bd.writeMaxMs, ad.writeMaxMs),
  row("restart ms", bd.restartMs, ad.restartMs), row("  restart CPU ms", bd.restartCpuMs, ad.restartCpuMs), row("  reading the folder ms", bd.restartStoreMs, ad.restartStoreMs), row("  engine open ms", bd.restartOpenMs, ad.restartOpenMs),
  row("log MB at close", bd.logMB, ad.logMB), row("snapshot MB at close", bd.snapshotMB, ad.snapshotMB),
  row("import ms", bi.importMs, ai.importMs), row("  import CPU ms", bi.importCpuMs, ai.importCpuMs),
]
console.table(rows)
require("fs").writeFileSync(process.argv[3], JSON.stringify({ before, after, rows }, null, 2))
' "$work/before.json" "$work/after.json" "$repo/bench/results/durable-compare.json"
echo "wrote bench/results/durable-compare.json"
