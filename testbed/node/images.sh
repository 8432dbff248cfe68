# shellcheck shell=bash
# The node's local images, built from files already on this machine and imported into containerd's
# k8s.io namespace (there is no registry): the sandbox (pause) image from the toolchain's static
# pause binary, and a busybox image from Debian's busybox-static for tests.

OCI_ARCHIVE=$(dirname "${BASH_SOURCE[0]}")/oci-archive.py

# pause.c prints "pause.c v1.34.3" for -v.
pause_version() { "$NODE_BIN/pause" -v 2>&1 | awk '{ print $2 }'; }
PAUSE_IMAGE=${PAUSE_IMAGE:-localhost/testbed-pause:$(pause_version 2>/dev/null || echo unknown)}

# A Debian version as a tag: no epoch, [+~:] -> '-'.
busybox_tag() { dpkg-query -W -f='${Version}' busybox-static | sed -e 's/^[0-9]*://' -e 's/[+~:]/-/g'; }

image_pause() { # out.tar
  local root=$N/images/pause-rootfs
  rm -rf "$root"; mkdir -p "$root"
  cp "$NODE_BIN/pause" "$root/pause"
  python3 "$OCI_ARCHIVE" --rootfs "$root" --name "$PAUSE_IMAGE" --out "$1" \
    --entrypoint '["/pause"]' --user 65535:65535 >/dev/null
}

image_busybox() { # out.tar; prints the image name
  local root=$N/images/busybox-rootfs name
  name=localhost/testbed-busybox:$(busybox_tag)
  rm -rf "$root"; mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,tmp,root,www}
  chmod 1777 "$root/tmp"
  cp /bin/busybox "$root/bin/busybox"
  local applet
  while read -r applet; do
    [[ -e $root/$applet ]] || ln -s /bin/busybox "$root/$applet"
  done < <(/bin/busybox --list-full)
  printf 'root:x:0:0:root:/root:/bin/sh\napp:x:700:700:app:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$root/etc/passwd"
  printf 'root:x:0:\napp:x:700:\nnogroup:x:65534:\n' >"$root/etc/group"
  python3 "$OCI_ARCHIVE" --rootfs "$root" --name "$name" --out "$1" --cmd '["/bin/sh"]' >/dev/null
  echo "$name"
}

image_import() { # archive
  nctr images import "$1" >/dev/null
}
