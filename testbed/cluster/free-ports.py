"""Prints COUNT free TCP ports on 127.0.0.1, space-separated, for the cluster's and the real node's servers.

Below the ephemeral range, so outgoing connections cannot grab a port between pick and bind.
Usage: python3 free-ports.py COUNT
"""
import random
import socket
import sys

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
