#!/usr/bin/env bash
# Runs a library's suite (already built by run.sh, in pkg/<name>) with latchkeyd serving its test binary and a
# scripted pinentry (Tests/Tools/fake-pinentry.py) that confirms every request with the keychain passphrase —
# a user approving each prompt. Valet's Secure Enclave tests read items behind .userPresence; unattended,
# without an agent, nobody can confirm them.
#
#   tools/ports/with-agent.sh Valet 9XUJ7M53NG.com.squareup.Valet-iOS-Test-Host-App \
#       9XUJ7M53NG.com.squareup.Valet-iOS-Test-Host-App2 group.valet.test
set -u
PORTS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$PORTS/../.." && pwd)"
name="$1"; app="$2"; shift 2
work="$(mktemp -d)"; chmod 700 "$work"; mkdir -m 700 "$work/data" "$work/run"
bin="$ROOT/.build/debug"
pass="latchkey-ports-harness (agent)"
export HOME="$work" XDG_RUNTIME_DIR="$work/run" LATCHKEY_KEYCHAIN="$work/data/ports.keychain" LATCHKEY_AGENT_SOCKET="$work/run/agent.sock"
for product in latchkey latchkeyd; do (cd "$ROOT" && swift build --product "$product" >/dev/null) || exit 1; done
LATCHKEY_PASSPHRASE="$pass" "$bin/latchkey" create-keychain --kdf-memory 19 --kdf-passes 2 >/dev/null
echo "pin:$pass" > "$work/answer"
FAKE_PINENTRY_LOG="$work/pinentry.log" FAKE_PINENTRY_ANSWER="$work/answer" \
    "$bin/latchkeyd" --pinentry "$ROOT/Tests/Tools/fake-pinentry.py" --verbose 2>"$work/agent.log" & agent=$!
trap 'kill $agent 2>/dev/null; rm -rf "$work"' EXIT
sleep 1
LATCHKEY_PASSPHRASE="$pass" "$bin/latchkey" unlock-keychain
xctest="$(ls -d "$PORTS/pkg/$name"/.build/x86_64-unknown-linux-gnu/debug/*PackageTests.xctest | head -n 1)"
groups=(--access-group "$app"); for group in "$@"; do groups+=(--access-group "$group"); done
LATCHKEY_PASSPHRASE="$pass" "$bin/latchkey" register-application --app-id "$app" "${groups[@]}" "$xctest"
(cd "$PORTS/pkg/$name" && LATCHKEY_PORTS_SHIMS=1 LATCHKEY_PATH="$ROOT" timeout 900 swift test --skip-build > "$work/tests.log" 2>&1)
grep -E "Executed [0-9]+ tests" "$work/tests.log" | tail -n 1
grep -E "error: .* : failed" "$work/tests.log" | sed 's/.*error: //' | sort -u | head -n 20
echo "pinentry was asked $(grep -c GETPIN "$work/pinentry.log" 2>/dev/null || echo 0) times"
