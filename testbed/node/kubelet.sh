# shellcheck shell=bash
# The kubelet, joined to the embedded API server with a node client certificate. Each setting below was a
# blocker on the development VMs (testbed/README.md); the comment beside it says why.

# cgroup v1 (hybrid) hierarchies mounted here, by mount point.
cgroup_mounts() { awk '$3 == "cgroup" || ($3 == "cgroup2" && $2 != "/sys/fs/cgroup") { print $2 }' /proc/self/mounts; }

cgroup_root_up() {
  local m
  for m in $(cgroup_mounts); do
    mkdir -p "$m$CGROUP_ROOT"
    # A new cpuset cgroup starts with no CPUs and no memory nodes: copy the root's.
    if [[ -f $m/cpuset.cpus ]]; then
      cat "$m/cpuset.cpus" >"$m$CGROUP_ROOT/cpuset.cpus"
      cat "$m/cpuset.mems" >"$m$CGROUP_ROOT/cpuset.mems"
    fi
  done
}

# Deepest first; a cgroup that still holds a process stays (and is named).
cgroup_root_down() {
  local m d
  for m in $(cgroup_mounts); do
    [[ -d $m$CGROUP_ROOT ]] || continue
    while read -r d; do rmdir "$d" 2>/dev/null || nlog "cgroup $d still busy"; done < <(find "$m$CGROUP_ROOT" -depth -type d)
  done
}

# Every process in our cgroups (containers that outlived their shim or the kubelet).
cgroup_root_pids() {
  local m
  for m in $(cgroup_mounts); do
    [[ -d $m$CGROUP_ROOT ]] && find "$m$CGROUP_ROOT" -name cgroup.procs -exec cat {} + 2>/dev/null
  done | sort -u
}

kubelet_config() {
  mkdir -p "$KUBELET_ROOT" "$N/pod-logs" "$N/volume-plugins"
  # Localhost seccomp profiles (pods name them as `localhostProfile: <file>`; the kubelet looks in
  # <root-dir>/seccomp). no-ipv6.json: socket(AF_INET6) fails with EAFNOSUPPORT, as on a kernel booted
  # with ipv6.disable=1; the sysctl disable_ipv6 does not do that (binding [::] still works).
  cp -r "$HERE/seccomp" "$KUBELET_ROOT/seccomp"
  cat >"$N/kubelet-config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
cgroupDriver: cgroupfs
cgroupRoot: $CGROUP_ROOT
# 1.35+ refuses cgroup v1 by default; these machines have the v1 hybrid layout.
failCgroupV1: false
failSwapOn: false
# The hard RLIMIT_NOFILE here is 20000 (the default asks for 1000000).
maxOpenFiles: 20000
# No CAP_SYS_RESOURCE: a negative OOM score cannot be set.
oomScoreAdj: 0
# kube-proxy owns the iptables rules; the kubelet's own chains would need cleanup of their own.
makeIPTablesUtilChains: false
address: $BRIDGE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
tlsCertFile: $NPKI/kubelet-serving.crt
tlsPrivateKeyFile: $NPKI/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $CLUSTER_PKI/ca.crt}
authorization:
  mode: Webhook
clusterDomain: $CLUSTER_DOMAIN
clusterDNS: [$BRIDGE_IP]
# No host resolv.conf: a pod with dnsPolicy Default gets no resolver, and no host search domain
# reaches a pod's resolv.conf.
resolvConf: ""
podLogsDir: $N/pod-logs
volumePluginDir: $N/volume-plugins
# Images are imported by hand (no registry): never garbage-collect them, and a busy shared disk
# must not evict test pods.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, nodefs.inodesFree: 1%, imagefs.available: 1%}
containerLogMaxSize: 10Mi
EOF
}

kubelet_healthy() { [[ $(curl -s --max-time 2 "http://127.0.0.1:$KUBELET_HEALTHZ_PORT/healthz") == ok ]]; }

kubelet_up() {
  cgroup_root_up
  kubelet_config
  nstart kubelet "$NODE_BIN/kubelet" --config="$N/kubelet-config.yaml" --kubeconfig="$N/kubelet.kubeconfig" \
    --root-dir="$KUBELET_ROOT" --cert-dir="$NPKI/kubelet-certs" \
    --hostname-override="$NODE_NAME" --node-ip="$BRIDGE_IP" --node-labels="$NODE_LABEL"
  nwait kubelet 60 "/healthz" kubelet_healthy
}
