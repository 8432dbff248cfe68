# shellcheck shell=bash
# pulp-web: Debian's nginx, runnable as uid 700 (pid and temp files in /tmp, logs to stdout/stderr),
# config in /etc/nginx/nginx.conf (the program mounts its own), and the plugins' webserver snippets
# (from the pulp-minimal build of the same pulpcore version) where upstream's pulp-web keeps them:
# /opt/app-root/etc/nginx.default.d/<plugin>.conf.
. "$HERE/recipes/lib.sh"
R=$ROOTFS
in_root "$R" sh -ec 'groupadd -r -g 700 pulp; useradd -r -u 700 -g 700 -d /var/lib/nginx -s /usr/sbin/nologin pulp'
apt_install "$R" nginx
snip="$R/opt/app-root/etc/nginx.default.d"
mkdir -p "$snip"
n=0
for f in "$PULP_MINIMAL_ROOTFS"/usr/local/lib/python3.11/dist-packages/*/app/webserver_snippets/nginx.conf; do
  plugin=$(basename "$(dirname "$(dirname "$(dirname "$f")")")")
  install -m 0644 "$f" "$snip/$plugin.conf"; n=$((n + 1))
done
[ "$n" -gt 0 ]
rm -f "$R"/etc/nginx/sites-enabled/* 
ln -sf /dev/stdout "$R/var/log/nginx/access.log"; ln -sf /dev/stderr "$R/var/log/nginx/error.log"
chown -R 700:700 "$R/var/lib/nginx" "$R/var/log/nginx"
mkdir -p "$R/var/cache/nginx" && chown 700:700 "$R/var/cache/nginx"
# The image's own nginx.conf, for running it bare: answers /healthz on 8080. The program replaces it.
cat > "$R/etc/nginx/nginx.conf" <<'CONF'
worker_processes 1;
pid /tmp/nginx.pid;
error_log /dev/stderr warn;
events { worker_connections 1024; }
http {
    include /etc/nginx/mime.types;
    access_log /dev/stdout;
    client_body_temp_path /tmp/client_body;
    proxy_temp_path /tmp/proxy;
    fastcgi_temp_path /tmp/fastcgi;
    uwsgi_temp_path /tmp/uwsgi;
    scgi_temp_path /tmp/scgi;
    server {
        listen 8080 default_server;
        location = /healthz { return 200 "ok\n"; }
        location / { return 503 "pulp-web: mount an nginx.conf at /etc/nginx/nginx.conf\n"; }
    }
}
CONF
version=$(in_root "$R" dpkg-query -W -f '${Version}' nginx)
clean_root "$R"
PYTHONPATH="$HERE" python3 - "$version" "$PULP_MINIMAL_ROOTFS/etc/pulp/versions.json" > "$OUT/image.json" <<'PY'
import json, sys
nginx, versions = sys.argv[1], open(sys.argv[2]).read().strip()
core = json.loads(versions)["core"]
print(json.dumps({"tag": core, "config": {
    "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"],
    "Cmd": ["nginx", "-g", "daemon off;"], "User": "700:700", "StopSignal": "SIGQUIT",
    "ExposedPorts": {"8080/tcp": {}},
    "Labels": {"org.pulpproject.versions": versions, "org.debian.package.nginx": nginx,
               "org.opencontainers.image.version": core}}}))
PY
