# shellcheck shell=bash
# Cluster DNS: CoreDNS from the toolchain as a host process on the bridge address, which is the
# kubelet's clusterDNS. It serves cluster.local from the API server and answers NXDOMAIN for every
# other name: there is no upstream, so no lookup ever leaves the machine.

coredns_rbac() {
  nk apply -f - >/dev/null <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "pulp-testbed:coredns"}
rules:
  - apiGroups: [""]
    resources: [endpoints, services, pods, namespaces]
    verbs: [list, watch]
  - apiGroups: [discovery.k8s.io]
    resources: [endpointslices]
    verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "pulp-testbed:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "pulp-testbed:coredns"}
subjects:
  - {apiGroup: rbac.authorization.k8s.io, kind: User, name: "pulp-testbed:coredns"}
YAML
}

coredns_config() {
  cat >"$N/Corefile" <<COREFILE
$CLUSTER_DOMAIN:53 in-addr.arpa:53 ip6.arpa:53 {
    bind $BRIDGE_IP
    errors
    ready 127.0.0.1:$COREDNS_READY_PORT
    kubernetes $CLUSTER_DOMAIN in-addr.arpa ip6.arpa {
        kubeconfig $N/coredns.kubeconfig pulp-local
        pods insecure
        ttl 5
    }
    cache 5
}
.:53 {
    bind $BRIDGE_IP
    template ANY ANY {
        rcode NXDOMAIN
    }
}
COREFILE
}

coredns_ready() { curl -sf --max-time 2 "http://127.0.0.1:$COREDNS_READY_PORT/ready" >/dev/null; }

coredns_up() {
  coredns_rbac
  coredns_config
  nstart coredns "$NODE_BIN/coredns" -conf "$N/Corefile"
  nwait coredns 60 "/ready (Kubernetes API synced)" coredns_ready
}
