#!/bin/sh
# Entrypoint for the nodes in docker/compose.yaml: find the bootstrap peer's id, put its full
# multiaddr in GPUMESH_BOOTSTRAP, then exec `gpumesh "$@"` (e.g. `node start`).
#
# The peer id comes from the output of `gpumesh init --json`, which the compose service
# bootstrap-init writes to $BOOTSTRAP_INFO after creating the bootstrap peer's identity. The file
# may not be there yet (a node started before bootstrap-init, `docker compose up node1`, a restart
# while the volume is being recreated): the script waits for it, so start order does not matter.
#
#   BOOTSTRAP_INFO  file with the `gpumesh init --json` output (default /shared/bootstrap.json)
#   BOOTSTRAP_HOST  the bootstrap peer's DNS name or IPv4 address (default bootstrap, the compose service name)
#   BOOTSTRAP_PORT  its TCP port (default 4001)
#   BOOTSTRAP_WAIT  how many seconds to wait for BOOTSTRAP_INFO before failing (default 120; 0: do not wait)
#
# An existing GPUMESH_BOOTSTRAP is kept, after the bootstrap peer's address.
set -eu

me=bootstrap-addr.sh
info="${BOOTSTRAP_INFO:-/shared/bootstrap.json}"
host="${BOOTSTRAP_HOST:-bootstrap}"
port="${BOOTSTRAP_PORT:-4001}"
wait_s="${BOOTSTRAP_WAIT:-120}"

fail () {
  echo "$me: $*" >&2
  exit 1
}

case "$wait_s" in
  '' | *[!0-9]*) fail "BOOTSTRAP_WAIT must be a whole number of seconds, not '$wait_s'" ;;
esac
case "$port" in
  '' | *[!0-9]*) fail "BOOTSTRAP_PORT must be a TCP port number, not '$port'" ;;
esac
if [ "$port" -lt 1 ] || [ "$port" -gt 65535 ]; then fail "BOOTSTRAP_PORT must be 1-65535, not $port"; fi
case "$host" in
  '' | *[!0-9A-Za-z.-]*) fail "BOOTSTRAP_HOST must be a DNS name or an IPv4 address, not '$host'" ;;
  *[!0-9.]*) proto=dns4 ;;
  *) proto=ip4 ;;
esac

# bootstrap-init writes a temporary file and renames it, so once the file is there it is whole
if [ ! -e "$info" ]; then
  echo "$me: waiting up to ${wait_s} s for $info (written by \`gpumesh init --json\` in the bootstrap-init service)" >&2
  deadline=$(( $(date +%s) + wait_s ))
  while [ ! -e "$info" ]; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      fail "gave up after ${wait_s} s (BOOTSTRAP_WAIT): $info does not exist; it is written by \`gpumesh init --json\` in the bootstrap-init service, which must run with the same volume mounted (see docker/README.md)"
    fi
    sleep 1
  done
fi
[ -r "$info" ] || fail "cannot read $info (it exists, but not for uid $(id -u))"

# "peerId": "12D3KooW..." -- one key per line in the pretty-printed JSON
peer_id=$(sed -n 's/^[[:space:]]*"peerId"[[:space:]]*:[[:space:]]*"\([^"]*\)".*$/\1/p' "$info" | head -n 1)

case "$peer_id" in
  '' | *[!123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz]*)
    fail "no peer id (base58) in $info"
    ;;
esac

addr="/$proto/$host/tcp/$port/p2p/$peer_id"
GPUMESH_BOOTSTRAP="$addr${GPUMESH_BOOTSTRAP:+,$GPUMESH_BOOTSTRAP}"
export GPUMESH_BOOTSTRAP
echo "$me: GPUMESH_BOOTSTRAP=$GPUMESH_BOOTSTRAP" >&2

exec gpumesh "$@"
