# Sourced by the command-line test scripts: a scratch folder removed on
# exit, and the pass/fail counters with ok and bad.
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
