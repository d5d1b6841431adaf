#!/bin/sh
# Stands in for `ssh-agent -d -a SOCKET` (how OpenSSH's regress tests start their agent): a fresh keychain
# beside SOCKET, latchkeyd serving it with its SSH agent on SOCKET, unlocked, in the foreground until
# SIGTERM. LATCHKEY_BIN names the directory of the built latchkey and latchkeyd. Used by
# script/openssh-agent-restrict, which runs OpenSSH's regress/agent-restrict.sh against latchkeyd.
set -eu
socket=""
while [ $# -gt 0 ]; do
    case "$1" in
    -a) socket="$2"; shift 2 ;;
    -d|-D) shift ;;
    *) shift ;;
    esac
done
[ -n "$socket" ] || { echo "latchkeyd-as-ssh-agent: -a SOCKET is needed" >&2; exit 64; }
state="$(dirname "$socket")/latchkey-state"
rm -rf "$state"
mkdir -m 0700 "$state"
export LATCHKEY_KEYCHAIN="$state/login.keychain" LATCHKEY_AGENT_SOCKET="$state/agent.sock" LATCHKEY_PASSPHRASE="regress passphrase"
"$LATCHKEY_BIN/latchkey" create-keychain --kdf-memory 19 --kdf-passes 2
env -u LATCHKEY_PASSPHRASE LATCHKEY_PINENTRY="$state/no-pinentry" DBUS_SYSTEM_BUS_ADDRESS="unix:path=$state/no-bus" \
    "$LATCHKEY_BIN/latchkeyd" --verbose --no-sync --ssh-agent-socket "$socket" &
agent=$!
trap 'kill "$agent"; wait "$agent"; exit 0' TERM INT
tries=0
until [ -S "$state/agent.sock" ] && [ -S "$socket" ]; do
    tries=$((tries + 1))
    [ "$tries" -lt 500 ] || { echo "latchkeyd-as-ssh-agent: latchkeyd did not start" >&2; kill "$agent"; exit 1; }
    sleep 0.02
done
"$LATCHKEY_BIN/latchkey" unlock-keychain
wait "$agent"
