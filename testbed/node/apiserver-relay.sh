# shellcheck shell=bash
# The API server for pods. It listens on 127.0.0.1 only, which a pod cannot reach, and in-cluster
# clients (the CloudNativePG operator and instance manager, anything with a ServiceAccount) dial the
# `kubernetes` Service. A TCP relay on the bridge carries them to it (TLS stays end to end: the serving
# certificate names the Service IP), and the Service's endpoints point at the relay.

API_RELAY_PORT=6443

apiserver_relay_up() {
  # -lf names the node dir on the command line, which is how stray processes of ours are found.
  nstart apiserver-relay socat -lf "$NLOGS/apiserver-relay.socat.log" \
    "TCP-LISTEN:$API_RELAY_PORT,bind=$BRIDGE_IP,reuseaddr,fork" "TCP:127.0.0.1:$APISERVER_PORT"
  nwait apiserver-relay 10 "$BRIDGE_IP:$API_RELAY_PORT" \
    curl -sk --max-time 2 -o /dev/null "https://$BRIDGE_IP:$API_RELAY_PORT/readyz"
  # The API server runs with --endpoint-reconciler-type=none, so these stay as written. kube-proxy
  # reads the EndpointSlice; clients that list Endpoints read the other.
  nk apply --server-side --force-conflicts --field-manager=pulp-testbed -f - >/dev/null <<YAML
apiVersion: v1
kind: Endpoints
metadata: {name: kubernetes, namespace: default}
subsets:
  - addresses: [{ip: "$BRIDGE_IP"}]
    ports: [{name: https, port: $API_RELAY_PORT, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kubernetes
  namespace: default
  labels: {kubernetes.io/service-name: kubernetes, endpointslice.kubernetes.io/managed-by: pulp-testbed}
addressType: IPv4
endpoints: [{addresses: ["$BRIDGE_IP"], conditions: {ready: true}}]
ports: [{name: https, port: $API_RELAY_PORT, protocol: TCP}]
YAML
}
