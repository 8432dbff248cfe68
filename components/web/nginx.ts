// nginx.conf for pulp-web: content under the content prefix (and the registry's blob and manifest
// redirects) to pulp-content, everything else to pulp-api.

export const WEB_PORT = 8080;

export interface NginxInput {
  apiHost: string;
  apiPort: number;
  contentHost: string;
  contentPort: number;
  contentPathPrefix: string;
  clientMaxBodySize: string;
  /** `listen [::]` fails to start nginx where the kernel has IPv6 disabled. */
  listenIPv6: boolean;
}

/** pulp_container redirects registry blob and manifest GETs here; pulp-content serves them. */
export const CONTAINER_CONTENT_PREFIX = "/pulp/container/";

/**
 * How many times an upstream lists its Service. A connection refused or reset by a pod that has just
 * died (before its endpoint is gone) is then tried again (proxy_next_upstream), and kube-proxy picks a
 * pod anew for each connection: with one pod of two gone, 1 request in 2^6 still fails. nginx retries a
 * POST only when it was never sent, so nothing is done twice.
 */
export const UPSTREAM_TRIES = 6;

const upstream = (name: string, host: string, port: number) =>
  [
    `    upstream ${name} {`,
    ...Array.from({ length: UPSTREAM_TRIES }, () => `        server ${host}:${port} max_fails=0;`),
    "    }",
  ].join("\n");

export function renderNginxConf(input: NginxInput): string {
  return `# Rendered by the pulp Pulumi program. Do not edit: run \`pulumi up\`.
worker_processes 1;
pid /tmp/nginx.pid;
error_log /dev/stderr warn;

events {
    worker_connections 1024;
}

http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log /dev/stdout;
    sendfile on;
    tcp_nopush on;
    client_body_temp_path /tmp/client_body;
    proxy_temp_path /tmp/proxy;
    fastcgi_temp_path /tmp/fastcgi;
    uwsgi_temp_path /tmp/uwsgi;
    scgi_temp_path /tmp/scgi;
    # Uploads and container pushes send large bodies; the nginx default answers them with 413.
    client_max_body_size ${input.clientMaxBodySize};

    # Each Service listed ${UPSTREAM_TRIES} times (max_fails=0: never marked down), so that a request a pod that
    # just died refused goes to another pod; a connection in the cluster is made within 5 s or tried again,
    # and no request is passed on after 30 s.
${upstream("pulp-api", input.apiHost, input.apiPort)}
${upstream("pulp-content", input.contentHost, input.contentPort)}
    proxy_connect_timeout 5s;
    proxy_next_upstream error timeout;
    proxy_next_upstream_tries ${UPSTREAM_TRIES};
    proxy_next_upstream_timeout 30s;

    server {
        listen ${WEB_PORT} default_server;${input.listenIPv6 ? `\n        listen [::]:${WEB_PORT} default_server;` : ""}
        server_name _;
        proxy_read_timeout 600s;
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_redirect off;

        location = /healthz {
            access_log off;
            return 200 "ok\\n";
        }
        location ${input.contentPathPrefix} {
            proxy_pass http://pulp-content;
        }
        location ${CONTAINER_CONTENT_PREFIX} {
            proxy_pass http://pulp-content;
        }
        # Registry pushes send layers of any size (pulp_container's own snippet sets no limit here).
        location /v2/ {
            client_max_body_size 0;
            proxy_pass http://pulp-api;
        }
        location / {
            proxy_pass http://pulp-api;
        }
    }
}
`;
}
