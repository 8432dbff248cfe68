# shellcheck shell=bash
# kube-proxy in iptables mode: ClusterIPs for the real node's pods and for the host. It starts only
# after network.sh has routed the Service CIDR onto the bridge and blackholed the pod ranges.

kube_proxy_config() {
  cat >"$N/kube-proxy-config.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: $N/kube-proxy.kubeconfig}
hostnameOverride: $NODE_NAME
bindAddress: $BRIDGE_IP
clusterCIDR: $POD_SUBNET
healthzBindAddress: 127.0.0.1:$PROXY_HEALTHZ_PORT
metricsBindAddress: 127.0.0.1:$PROXY_METRICS_PORT
# NodePorts only on the bridge, never on the machine's own interfaces or loopback.
nodePortAddresses: [$POD_SUBNET]
iptables: {localhostNodePorts: false, minSyncPeriod: 1s}
# No CAP_SYS_RESOURCE; and the conntrack sysctls are the machine's, not ours: zero leaves them alone.
oomScoreAdj: 0
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s, udpTimeout: 0s, udpStreamTimeout: 0s}
YAML
}

kube_proxy_healthy() { curl -sf --max-time 2 "http://127.0.0.1:$PROXY_HEALTHZ_PORT/healthz" >/dev/null; }

kube_proxy_up() {
  kube_proxy_config
  nstart kube-proxy "$NODE_BIN/kube-proxy" --config="$N/kube-proxy-config.yaml"
  nwait kube-proxy 60 "/healthz" kube_proxy_healthy
}

# Removes every chain and rule kube-proxy made (iptables, and the ipvs/nftables ones it may probe).
kube_proxy_cleanup() {
  [[ -x $NODE_BIN/kube-proxy ]] || return 0
  "$NODE_BIN/kube-proxy" --cleanup >"$NLOGS/kube-proxy-cleanup.log" 2>&1 ||
    nlog "kube-proxy --cleanup failed (see $NLOGS/kube-proxy-cleanup.log)"
}
