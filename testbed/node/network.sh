# shellcheck shell=bash
# The node's network: one bridge with the pod subnet, routes that keep every test packet on this
# machine, a filter chain that gives pods no egress, and the CNI config containerd reads. Also the
# sysctls: recorded before anything changes them, restored on teardown.
#
# Routes (all before kube-proxy runs):
#   blackhole POD_RANGE and KWOK_POD_CIDR: a packet for a pod that is not on the bridge (a kwok pod's
#     fake IP in some Endpoints, a typo) dies here instead of following the default route out.
#   SERVICE_CIDR dev BRIDGE: not a blackhole, because a blackhole fails connect() before kube-proxy's
#     DNAT runs (measured: EINVAL), so the host could not reach ClusterIPs. On the bridge, a ClusterIP
#     kube-proxy does not translate is rejected by the filter chain below, and would otherwise only
#     ARP on the bridge: it cannot leave either way.

SYSCTL_SAVE=/run/pulp-testbed-node.sysctls

sysctls_record() {
  [[ -f $SYSCTL_SAVE ]] && return 0 # a crashed run's record holds the values from before it
  local s
  for s in "${SYSCTLS[@]}"; do
    [[ -e /proc/sys/${s//.//} ]] && echo "$s=$(cat "/proc/sys/${s//.//}")"
  done >"$SYSCTL_SAVE.tmp"
  mv "$SYSCTL_SAVE.tmp" "$SYSCTL_SAVE"
}

sysctls_restore() {
  [[ -f $SYSCTL_SAVE ]] || return 0
  local line changed=()
  while IFS= read -r line; do
    local key=${line%%=*} want=${line#*=} path
    path=/proc/sys/${key//.//}
    [[ -e $path && $(cat "$path") != "$want" ]] || continue
    echo "$want" >"$path" && changed+=("$key=$want")
  done <"$SYSCTL_SAVE"
  ((${#changed[@]} == 0)) || nlog "restored sysctls: ${changed[*]}"
  rm -f "$SYSCTL_SAVE"
}

fw_rules() { # the chain's rules, as iptables arguments, one set per line
  cat <<EOF
-d $KWOK_POD_CIDR -m comment --comment "kwok pod IPs are fake" -j REJECT --reject-with icmp-net-prohibited
-d $SERVICE_CIDR -m conntrack ! --ctstate DNAT -m comment --comment "ClusterIP without a kube-proxy rule" -j REJECT --reject-with icmp-net-prohibited
-s $POD_SUBNET -d $POD_SUBNET -j RETURN
-s $POD_SUBNET -m comment --comment "pods have no egress" -j REJECT --reject-with icmp-net-prohibited
EOF
}

fw_up() {
  iptables -N "$FW_CHAIN" 2>/dev/null || iptables -F "$FW_CHAIN"
  local rule
  while IFS= read -r rule; do eval "iptables -A $FW_CHAIN $rule"; done < <(fw_rules)
  local hook
  for hook in FORWARD OUTPUT; do
    iptables -C "$hook" -j "$FW_CHAIN" 2>/dev/null || iptables -I "$hook" 1 -j "$FW_CHAIN"
  done
}

fw_down() {
  local hook
  for hook in FORWARD OUTPUT; do
    while iptables -D "$hook" -j "$FW_CHAIN" 2>/dev/null; do :; done
  done
  iptables -F "$FW_CHAIN" 2>/dev/null || true
  iptables -X "$FW_CHAIN" 2>/dev/null || true
}

# The kubelet makes KUBE-FIREWALL (IPv4 and IPv6, jumped to from INPUT and OUTPUT) even with
# makeIPTablesUtilChains: false, and kube-proxy --cleanup leaves it: measured.
kubelet_chains_down() {
  local ipt hook
  for ipt in iptables ip6tables; do
    for hook in INPUT OUTPUT; do
      while "$ipt" -D "$hook" -j KUBE-FIREWALL 2>/dev/null; do :; done
    done
    "$ipt" -F KUBE-FIREWALL 2>/dev/null || true
    "$ipt" -X KUBE-FIREWALL 2>/dev/null || true
  done
}

cni_config() {
  mkdir -p "$N/cni/net.d" "$N/cni/ipam"
  cat >"$N/cni/net.d/10-$CNI_NETWORK.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$CNI_NETWORK",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "hairpinMode": true,
      "ipMasq": false,
      "ipam": {
        "type": "host-local",
        "dataDir": "$N/cni/ipam",
        "ranges": [[{ "subnet": "$POD_SUBNET", "gateway": "$BRIDGE_IP" }]],
        "routes": [{ "dst": "0.0.0.0/0" }]
      }
    }
  ]
}
EOF
}

net_up() {
  sysctls_record
  # Pods talk to ClusterIPs through the host; bridged pod-to-pod traffic must pass iptables so that
  # a reply from a Service's pod on the same bridge is un-DNATed.
  sysctl -q -w net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
  ip link show "$BRIDGE" >/dev/null 2>&1 || ip link add "$BRIDGE" type bridge
  ip addr replace "$BRIDGE_IP/${POD_SUBNET#*/}" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  fw_up
  ip route replace blackhole "$POD_RANGE"
  ip route replace blackhole "$KWOK_POD_CIDR"
  ip route replace "$SERVICE_CIDR" dev "$BRIDGE" src "$BRIDGE_IP"
  cni_config
}

net_down() {
  # Our routes only: a blackhole or bridge route for exactly these prefixes.
  ip route del blackhole "$POD_RANGE" 2>/dev/null || true
  ip route del blackhole "$KWOK_POD_CIDR" 2>/dev/null || true
  ip route del "$SERVICE_CIDR" dev "$BRIDGE" 2>/dev/null || true
  ip link del "$BRIDGE" 2>/dev/null || true
  fw_down
  kubelet_chains_down
  # containerd's CNI result cache is a fixed path; drop our network's entries.
  rm -f /var/lib/cni/results/"$CNI_NETWORK"-* 2>/dev/null || true
  sysctls_restore
}
