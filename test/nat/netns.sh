#!/usr/bin/env bash
# The NAT test network (issue 12) in Linux network namespaces: `netns.sh up P` / `netns.sh down P`, as root.
#
#   P-wan   a switch: bridge "sw0" joining every host on the "public" 11.0.0.0/24
#   P-boot  bootstrap peer (relay)   11.0.0.10
#   P-buyer buyer                     11.0.0.30
#   P-rA    NAT router A  wan 11.0.0.21, lan 10.1.0.1/24, nft masquerade
#   P-pA    provider A behind rA      10.1.0.2, default route via 10.1.0.1
#   P-rB    NAT router B  wan 11.0.0.22, lan 10.2.0.1/24, nft masquerade
#   P-pB    provider B behind rB      10.2.0.2, default route via 10.2.0.1
#   P-pC    provider C on the switch  11.0.0.40, its own nft table "firewall" drops inbound connections
#           (the test deletes the table: the owner opened the firewall)
#   P-ver   a late peer in another /8 12.0.0.50 (on-link to 11.0.0.0/24; boot and pC route 12.0.0.0/24 on-link):
#           AutoNAT v1 takes one dial-back result per /8 per address, so a re-verification of pC's address
#           after 11/8 peers failed it must come from another /8
#
# Why 11.0.0.0/24 and not a TEST-NET range: libp2p's isPrivate (@libp2p/utils private-ip.js) counts 192.0.2/24,
# 198.51.100/24 and 203.0.113/24 as private, so nodes there would never look public. The namespaces have no
# route out of the host, so nothing is ever sent to the real 11/8.
# The routers masquerade what leaves the LAN and drop new connections arriving from the wan: only replies
# (conntrack established/related) get in, the way a home NAT behaves. Nothing is port-forwarded.
set -euo pipefail
cmd=${1:?up|down}
P=${2:?prefix}

down () {
  for ns in pA pB pC ver rA rB buyer boot wan; do ip netns del "$P-$ns" 2>/dev/null || true; done
}

link_to_wan () { # ns ifname addr
  local ns=$1 ifn=$2 addr=$3
  ip link add "$ifn" netns "$P-$ns" type veth peer name "p-$ns" netns "$P-wan"
  ip -n "$P-wan" link set "p-$ns" master sw0 up
  ip -n "$P-$ns" addr add "$addr/24" dev "$ifn"
  ip -n "$P-$ns" link set "$ifn" up
}

router () { # r lanNet(10.1) provider
  local r=$1 lan=$2 p=$3
  ip link add lan netns "$P-$r" type veth peer name eth0 netns "$P-$p"
  ip -n "$P-$r" addr add "$lan.0.1/24" dev lan && ip -n "$P-$r" link set lan up
  ip -n "$P-$p" addr add "$lan.0.2/24" dev eth0 && ip -n "$P-$p" link set eth0 up
  ip -n "$P-$p" route add default via "$lan.0.1"
  ip netns exec "$P-$r" sysctl -qw net.ipv4.ip_forward=1
  ip netns exec "$P-$r" nft -f - <<NFT
table ip nat {
  chain postrouting { type nat hook postrouting priority srcnat; oifname "wan" masquerade; }
}
table ip filter {
  chain forward { type filter hook forward priority filter; policy drop;
    ct state established,related accept
    iifname "lan" oifname "wan" accept
  }
  chain input { type filter hook input priority filter; policy accept;
    iifname "wan" ct state established,related accept
    iifname "wan" tcp flags syn drop
  }
}
NFT
}

case $cmd in
  down) down ;;
  up)
    down
    for ns in wan boot buyer rA pA rB pB pC ver; do ip netns add "$P-$ns"; ip -n "$P-$ns" link set lo up; done
    ip -n "$P-wan" link add sw0 type bridge && ip -n "$P-wan" link set sw0 up
    link_to_wan boot wan 11.0.0.10
    link_to_wan buyer wan 11.0.0.30
    link_to_wan rA wan 11.0.0.21
    link_to_wan rB wan 11.0.0.22
    router rA 10.1 pA
    router rB 10.2 pB
    link_to_wan pC wan 11.0.0.40
    ip netns exec "$P-pC" nft -f - <<NFT
table inet firewall {
  chain input { type filter hook input priority filter; policy accept;
    iifname "wan" ct state established,related accept
    iifname "wan" tcp flags syn drop
  }
}
NFT
    link_to_wan ver wan 12.0.0.50
    ip -n "$P-ver" route add 11.0.0.0/24 dev wan
    ip -n "$P-boot" route add 12.0.0.0/24 dev wan
    ip -n "$P-pC" route add 12.0.0.0/24 dev wan
    ;;
  *) echo "usage: $0 up|down PREFIX" >&2; exit 2 ;;
esac
