#!/bin/sh
# Entrypoint for the nodes in docker/compose.yaml: find the bootstrap peer's id, put its full
# multiaddr in GPUMESH_BOOTSTRAP, then exec `gpumesh "$@"` (e.g. `node start`).
#
# The peer id comes from the output of `gpumesh init --json`, which the compose service
# bootstrap-init writes to $BOOTSTRAP_INFO after creating the bootstrap peer's identity.
#
#   BOOTSTRAP_INFO  file with the `gpumesh init --json` output (default /shared/bootstrap.json)
#   BOOTSTRAP_HOST  the bootstrap peer's DNS name (default bootstrap, the compose service name)
#   BOOTSTRAP_PORT  its TCP port (default 4001)
#
# An existing GPUMESH_BOOTSTRAP is kept, after the bootstrap peer's address.
set -eu

info="${BOOTSTRAP_INFO:-/shared/bootstrap.json}"
host="${BOOTSTRAP_HOST:-bootstrap}"
port="${BOOTSTRAP_PORT:-4001}"

if [ ! -r "$info" ]; then
  echo "bootstrap-addr.sh: cannot read $info (written by \`gpumesh init --json\` in the bootstrap-init service)" >&2
  exit 1
fi

# "peerId": "12D3KooW..." -- one key per line in the pretty-printed JSON
peer_id=$(sed -n 's/^[[:space:]]*"peerId"[[:space:]]*:[[:space:]]*"\([^"]*\)".*$/\1/p' "$info" | head -n 1)

case "$peer_id" in
  '' | *[!123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz]*)
    echo "bootstrap-addr.sh: no peer id (base58) in $info" >&2
    exit 1
    ;;
esac

addr="/dns4/$host/tcp/$port/p2p/$peer_id"
GPUMESH_BOOTSTRAP="$addr${GPUMESH_BOOTSTRAP:+,$GPUMESH_BOOTSTRAP}"
export GPUMESH_BOOTSTRAP
echo "bootstrap-addr.sh: GPUMESH_BOOTSTRAP=$GPUMESH_BOOTSTRAP" >&2

exec gpumesh "$@"
