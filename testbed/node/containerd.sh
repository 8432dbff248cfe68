# shellcheck shell=bash
# containerd (Debian's) with its own root, state and socket under the node's state dir. No systemd
# here: started with setsid and a pid file like every other test-bed process.

containerd_config() {
  mkdir -p "$N/containerd" "$NRUN"
  cat >"$N/containerd/config.toml" <<EOF
version = 2
root = "$N/containerd/root"
state = "$N/containerd/state"
# No CAP_SYS_RESOURCE here: a negative oom_score_adj fails with EACCES.
oom_score = 0
# Snapshotters that cannot work here only log errors at start.
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "$CONTAINERD_SOCK"
[ttrpc]
  address = "$CONTAINERD_SOCK.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "$N/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  # The kernel has no AppArmor.
  disable_apparmor = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        # cgroup v1 (hybrid), no systemd: the kubelet's cgroupDriver is cgroupfs too.
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$N/cni/net.d"
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$N/containerd/certs.d"
EOF
}

containerd_ready() { ctr --address "$CONTAINERD_SOCK" version >/dev/null 2>&1; }

containerd_up() {
  containerd_config
  nstart containerd containerd --config "$N/containerd/config.toml" --log-level warn
  nwait containerd 30 "its socket $CONTAINERD_SOCK" containerd_ready
}
