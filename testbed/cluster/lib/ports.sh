# shellcheck shell=bash
# Free loopback ports picked at `up` and kept in $PORTS_FILE, so clusters of several checkouts coexist.
# Sourced by testbed/cluster/cluster.sh, which sets the paths and helpers used here.

PORT_NAMES=(ETCD_PORT ETCD_PEER_PORT APISERVER_PORT KCM_PORT SCHEDULER_PORT KWOK_PORT)

# Below the ephemeral range, so outgoing connections cannot grab a port between pick and bind.
pick_ports() {
  python3 - "${#PORT_NAMES[@]}" <<'EOF'
import random, socket, sys
lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
hi = lo if lo > 21000 else 32768
ports = []
while len(ports) < int(sys.argv[1]):
    p = random.randrange(20000, hi)
    if p in ports:
        continue
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
        ports.append(p)
    except OSError:
        pass
    finally:
        s.close()
print(" ".join(map(str, ports)))
EOF
}

port_free() { python3 -c 'import socket,sys; socket.socket().bind(("127.0.0.1", int(sys.argv[1])))' "$1" 2>/dev/null; }

check_port() { # process, port
  port_free "$2" || fail "$1" "port 127.0.0.1:$2 is already taken by another process; run 'up' again to pick new ports"
}
