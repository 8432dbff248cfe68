# shellcheck shell=bash
# The node's identities, signed by the embedded cluster's CA (no bootstrap flow: the API server's
# Node authorizer recognises O=system:nodes, CN=system:node:<name> directly).

node_cert() { # name, subject, extensions (one per line)
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$NPKI/$1.key" 2>/dev/null
  openssl req -new -key "$NPKI/$1.key" -subj "$2" -out "$NPKI/$1.csr"
  printf '%s\n' "$3" >"$NPKI/$1.ext"
  openssl x509 -req -in "$NPKI/$1.csr" -CA "$CLUSTER_PKI/ca.crt" -CAkey "$CLUSTER_PKI/ca.key" \
    -set_serial "0x$(openssl rand -hex 16)" -days 3650 -extfile "$NPKI/$1.ext" -out "$NPKI/$1.crt" 2>/dev/null
  rm -f "$NPKI/$1.csr" "$NPKI/$1.ext"
  chmod 600 "$NPKI/$1.key"
}

node_kubeconfig() { # file, cert name
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: pulp-local
    cluster:
      server: https://127.0.0.1:$APISERVER_PORT
      certificate-authority: $CLUSTER_PKI/ca.crt
users:
  - name: $2
    user:
      client-certificate: $NPKI/$2.crt
      client-key: $NPKI/$2.key
contexts:
  - name: pulp-local
    context: {cluster: pulp-local, user: $2}
current-context: pulp-local
EOF
  chmod 600 "$1"
}

node_pki() {
  mkdir -p "$NPKI"
  local client="basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"
  node_cert kubelet "/O=system:nodes/CN=system:node:$NODE_NAME" "$client"
  # The kubelet's serving certificate, for the API server's logs/exec/port-forward connections.
  node_cert kubelet-serving "/CN=$NODE_NAME" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=IP:$BRIDGE_IP,DNS:$NODE_NAME"
  # Default RBAC binds system:node-proxier to this user.
  node_cert kube-proxy "/CN=system:kube-proxy" "$client"
  # Bound to a read-only role by coredns.sh.
  node_cert coredns "/CN=pulp-testbed:coredns" "$client"
  local c
  for c in kubelet kube-proxy coredns; do node_kubeconfig "$N/$c.kubeconfig" "$c"; done
}
