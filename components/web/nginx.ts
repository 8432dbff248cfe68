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

    upstream pulp-api {
        server ${input.apiHost}:${input.apiPort};
    }
    upstream pulp-content {
        server ${input.contentHost}:${input.contentPort};
    }

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
