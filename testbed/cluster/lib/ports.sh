# shellcheck shell=bash
# Free loopback ports picked at `up` and kept in $PORTS_FILE, so clusters of several checkouts coexist.
# Sourced by testbed/cluster/cluster.sh, which sets the paths and helpers used here.

PORT_NAMES=(ETCD_PORT ETCD_PEER_PORT APISERVER_PORT KCM_PORT SCHEDULER_PORT KWOK_PORT)

pick_ports() { python3 "$HERE/free-ports.py" "${#PORT_NAMES[@]}"; }

port_free() { python3 -c 'import socket,sys; socket.socket().bind(("127.0.0.1", int(sys.argv[1])))' "$1" 2>/dev/null; }

check_port() { # process, port
  port_free "$2" || fail "$1" "port 127.0.0.1:$2 is already taken by another process; run 'up' again to pick new ports"
}
