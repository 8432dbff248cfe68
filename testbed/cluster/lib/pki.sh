# shellcheck shell=bash
# The cluster's CA, serving and client certificates (openssl, EC P-256), and kubeconfigs.
# Sourced by testbed/cluster/cluster.sh, which sets the paths and helpers used here.

# EC keys: generated instantly, and every component accepts them.
newkey() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

cert() { # name, subject, extensions (one per line); signed by $CA (default: ca)
  local ca=${CA:-ca}
  newkey "$PKI/$1.key"
  openssl req -new -key "$PKI/$1.key" -subj "$2" -out "$PKI/$1.csr"
  printf '%s\n' "$3" >"$PKI/$1.ext"
  openssl x509 -req -in "$PKI/$1.csr" -CA "$PKI/$ca.crt" -CAkey "$PKI/$ca.key" -set_serial "0x$(openssl rand -hex 16)" \
    -days 3650 -extfile "$PKI/$1.ext" -out "$PKI/$1.crt" 2>/dev/null
  rm -f "$PKI/$1.csr" "$PKI/$1.ext"
}

gen_pki() {
  mkdir -p "$PKI"
  newkey "$PKI/ca.key"
  openssl req -x509 -new -key "$PKI/ca.key" -subj "/CN=pulp-local-cluster-ca" -days 3650 \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
    -out "$PKI/ca.crt"
  local server="basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth"
  local client="basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"
  cert apiserver "/CN=kube-apiserver" "$server
subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:$SERVICE_IP"
  # clientAuth too: etcd's gRPC gateway dials the server with this certificate.
  cert etcd-server "/CN=etcd" "$server,clientAuth
subjectAltName=IP:127.0.0.1,DNS:localhost"
  cert apiserver-etcd-client "/CN=kube-apiserver-etcd-client" "$client"
  cert admin "/O=system:masters/CN=kubernetes-admin" "$client"
  # real node: the API server's identity towards kubelets (logs, exec, port-forward).
  cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "$client"
  cert kube-controller-manager "/CN=system:kube-controller-manager" "$client"
  cert kube-scheduler "/CN=system:kube-scheduler" "$client"
  # kwok plays the kubelet of every fake node, and the stand-ins play operators with cluster-wide
  # rights: neither fits a narrower built-in identity.
  cert kwok "/O=system:masters/CN=kwok" "$client"
  cert standin-controllers "/O=system:masters/CN=pulp-standin-controllers" "$client"
  # Front-proxy CA: without it the controller-manager and scheduler complain, every few seconds,
  # that extension-apiserver-authentication has no requestheader CA.
  newkey "$PKI/front-proxy-ca.key"
  openssl req -x509 -new -key "$PKI/front-proxy-ca.key" -subj "/CN=pulp-local-front-proxy-ca" -days 3650 \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
    -out "$PKI/front-proxy-ca.crt"
  CA=front-proxy-ca cert front-proxy-client "/CN=front-proxy-client" "$client"
  newkey "$PKI/sa.key"
  openssl pkey -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub"
  chmod 600 "$PKI"/*.key
}

b64() { base64 -w0 <"$1"; }

# Data embedded, so the file still works when copied or passed as a string (Pulumi config).
write_kubeconfig() { # file, cert name
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: pulp-local
    cluster:
      server: https://127.0.0.1:$APISERVER_PORT
      certificate-authority-data: $(b64 "$PKI/ca.crt")
users:
  - name: $2
    user:
      client-certificate-data: $(b64 "$PKI/$2.crt")
      client-key-data: $(b64 "$PKI/$2.key")
contexts:
  - name: pulp-local
    context:
      cluster: pulp-local
      user: $2
current-context: pulp-local
EOF
  chmod 600 "$1"
}
