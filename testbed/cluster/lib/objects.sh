# shellcheck shell=bash
# Objects `up` applies: the kwok nodes, the RWX storage class, the self-check PVC.
# Sourced by testbed/cluster/cluster.sh, which sets the paths and helpers used here.

nodes_yaml() {
  local i name zone
  for ((i = 0; i < NODES; i++)); do
    name=kwok-node-$i zone=${ZONES[i % ${#ZONES[@]}]}
    cat <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: $name
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    type: kwok
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    kubernetes.io/hostname: $name
    topology.kubernetes.io/zone: $zone
    pulp-testbed/node-kind: kwok
spec:
  # With the real node up, simulated pods stay off it and real pods off these: a pod lands here only
  # with a toleration (and picks a kind by the pulp-testbed/node-kind label). A kwok-only cluster
  # (PULP_TESTBED_REAL_NODE=0) has no such need, and its scenarios schedule here as they always did.
  taints: $(real_node && echo '[{key: kwok.x-k8s.io/node, value: fake, effect: NoSchedule}]' || echo '[]')
status:
  capacity: {cpu: "32", memory: 256Gi, pods: "110", ephemeral-storage: 1Ti}
  allocatable: {cpu: "32", memory: 256Gi, pods: "110", ephemeral-storage: 1Ti}
EOF
  done
}

storageclass_yaml() {
  cat <<'EOF'
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: kubernetes.io/host-path
volumeBindingMode: Immediate
reclaimPolicy: Delete
EOF
}

selfcheck_pvc_yaml() {
  cat <<'EOF'
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: cluster-selfcheck-rwx
  namespace: default
spec:
  accessModes: [ReadWriteMany]
  resources:
    requests:
      storage: 1Mi
EOF
}
