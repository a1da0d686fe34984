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
results="$build/test-results.json"
"$lit" -sv --time-tests -o "$results" "$build/test" "$build/test/Unit" "$@"
status=$?
/usr/bin/python3 - "$results" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
codes = [t["code"] for t in data.get("tests", [])]
passed = sum(c in ("PASS", "XFAIL") for c in codes)
failed = sum(c in ("FAIL", "XPASS", "UNRESOLVED", "TIMEOUT") for c in codes)
skipped = sum(c in ("UNSUPPORTED", "SKIPPED", "EXCLUDED") for c in codes)
print(f"autoshard: {passed} passed, {failed} failed, {skipped} skipped")
PY
exit $status
