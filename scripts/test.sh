#!/usr/bin/env bash
# Builds autoshard (installing what is missing) and runs every test: the lit
# suites (IR, tools, multi-rank runs) and the GoogleTest units. Ends with one
# summary line: "autoshard: N passed, N failed, N skipped".
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${AUTOSHARD_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh" || { echo "autoshard: build failed"; echo "autoshard: 0 passed, 1 failed"; exit 1; }

lit="$(command -v lit || echo /usr/lib/llvm-22/bin/lit)"
[ -x "$lit" ] || lit=/usr/lib/llvm-22/bin/lit
log="$build/test-log.txt"
"$lit" -sv --time-tests "$build/test" "$build/test/Unit" "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# lit's own closing counts (its JSON output omits skipped GoogleTest cases).
/usr/bin/python3 - "$log" <<'PY'
import re, sys
counts = {}
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"^\s+([A-Za-z ]+?)\s*:\s*(\d+)", line)
    if m:
        counts[m.group(1)] = int(m.group(2))
passed = counts.get("Passed", 0) + counts.get("Expectedly Failed", 0)
failed = sum(counts.get(k, 0) for k in
             ("Failed", "Unexpectedly Passed", "Unresolved", "Timed Out"))
skipped = sum(counts.get(k, 0) for k in ("Skipped", "Unsupported", "Excluded"))
print(f"autoshard: {passed} passed, {failed} failed, {skipped} skipped")
PY
exit $status
