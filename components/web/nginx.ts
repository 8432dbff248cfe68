// nginx.conf for pulp-web: content under the content prefix (and the registry's blob and manifest
// redirects) to pulp-content, everything else to pulp-api. With the content cache, a copy of each small
// public content answer, served only when the content app cannot answer (a stop-the-world upgrade).

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
  /** Unset: no cache, content answers only from the content app. */
  contentCache?: ContentCacheInput;
}

export interface ContentCacheInput {
  /** What nginx keeps at most (its max_size), in bytes. */
  maxBytes: number;
  /** The largest answer it keeps, in bytes (by Content-Length: an answer without one is not kept). */
  maxEntryBytes: number;
  /** Request headers beside the built-in ones that make an answer private (a header content guard's). */
  privateHeaders: string[];
}

/** Where pulp-web keeps the content cache: an emptyDir of its own (pulpWeb.ts). */
export const CONTENT_CACHE_DIR = "/var/cache/pulp-content";
/** Seconds a client is asked to wait when pulp-web has nothing behind it to answer. */
export const RETRY_AFTER_SECONDS = 30;
/** Marks an answer that came from the cache, with nginx's cache status (HIT, or STALE past its max-age). */
export const CACHE_HEADER = "X-Pulp-Web-Cache";

/**
 * Requests whose answers are never kept: with credentials (Basic auth and the RBAC guard, a session, a
 * client certificate from a TLS proxy, pulp_certguard's header), a signed URL (the redirect guard), and
 * ranges or conditions (nginx would ask the content app for the whole file instead). A kept answer went to
 * a client without any of them, so it is served to no one who could not have had it.
 */
const NEVER_KEPT = [
  "authorization",
  "cookie",
  "x-client-cert",
  "range",
  "if-range",
  "if-none-match",
  "if-modified-since",
  "if-match",
  "if-unmodified-since",
];

/** nginx's variable for a request header: `X-Foo-Bar` is `$http_x_foo_bar`. */
const headerVariable = (header: string) => `$http_${header.toLowerCase().replace(/-/g, "_")}`;

/**
 * A regular expression that matches the decimal numbers from 0 to `n` and no others: nginx compares
 * Content-Length only as text.
 */
export function atMostPattern(n: number): string {
  const digits = String(Math.floor(n));
  const alternatives = digits.length > 1 ? [`[0-9]{1,${digits.length - 1}}`] : [];
  for (let i = 0; i < digits.length; i++) {
    const digit = Number(digits[i]);
    const rest = digits.length - i - 1;
    if (digit > 0) {
      alternatives.push(`${digits.slice(0, i)}[0-${digit - 1}]${rest > 0 ? `[0-9]{${rest}}` : ""}`);
    }
  }
  alternatives.push(digits);
  return `^(${alternatives.join("|")})$`;
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
/**
 * How long one connection to a pod may take, and how long nginx goes on trying other pods for one request:
 * long enough to ride out a few seconds without a ready pod (every api pod restarting on a busy node; CI's
 * restore test saw pulp-cli uploads get a 503 with a 4 s window).
 */
export const CONNECT_TIMEOUT_SECONDS = 5;
export const NEXT_UPSTREAM_SECONDS = 30;
/**
 * The same for content when the content cache can answer instead. With every pod gone (a stop-the-world)
 * each try waits for a reject the node rate-limits (kube-proxy's ICMP, about one a second to each pod), so
 * the long window kept clients waiting past their timeouts (measured on the real node: 6 to 10 s a request)
 * for a copy pulp-web had all along. 2 s covers one SYN retransmit (at 1 s).
 */
export const COPY_CONNECT_TIMEOUT_SECONDS = 2;
export const COPY_NEXT_UPSTREAM_SECONDS = 4;

const upstream = (name: string, host: string, port: number) =>
  [
    `    upstream ${name} {`,
    ...Array.from({ length: UPSTREAM_TRIES }, () => `        server ${host}:${port} max_fails=0;`),
    "    }",
  ].join("\n");

/** The http-level part of the content cache: where it lives, and which answers it keeps. */
function cacheHttp(cache: ContentCacheInput): string {
  const never = [...NEVER_KEPT, ...cache.privateHeaders.map((h) => h.toLowerCase())].map(headerVariable);
  return `
    # The content cache: an answer unused for 30 days is dropped, and the least used past max_size. Kept
    # only for a GET with none of these headers and no signed-URL token, and an answer with a length.
    proxy_cache_path ${CONTENT_CACHE_DIR} levels=1:2 keys_zone=pulp_content:10m max_size=${cache.maxBytes} inactive=30d use_temp_path=off;
    map "$request_method${never.join("")}$arg_validate_token" $pulp_content_cache {
        GET pulp_content;
        default off;
    }
    map $upstream_http_content_length $pulp_content_too_big {
        "~${atMostPattern(cache.maxEntryBytes)}" "";
        default 1;
    }
    map $upstream_http_cache_control $pulp_content_not_shared {
        "~*(no-store|private)" 1;
        default "";
    }
`;
}

/**
 * A content location. With the cache, every request still goes to the content app (proxy_cache_bypass),
 * and its answer refreshes the copy. pulpcore 3.122 and later mark every content answer `Cache-Control:
 * public, max-age=0, must-revalidate` (content/handler.py EDGE_CACHE_CONTROL: a shared cache must ask Pulp
 * each time), which nginx would honour by storing nothing. Asking each time is what this location does, so
 * it ignores that header, and keeps out only an answer marked `no-store` or `private`. Only when no content
 * app can be reached (nginx's own 502 or 504, not one the app sent: proxy_intercept_errors stays off) does
 * the request go on to the copy. The copy is
 * keyed without the method, so a HEAD is answered from a GET's; recursive_error_pages is read here, in the
 * first location, and lets the copy's own miss become @unavailable's 503.
 */
function contentLocation(path: string, cache: ContentCacheInput | undefined): string {
  if (!cache) return `        location ${path} {\n            proxy_pass http://pulp-content;\n        }`;
  return `        location ${path} {
            proxy_pass http://pulp-content;
            proxy_cache $pulp_content_cache;
            proxy_cache_key $http_host$request_uri;
            proxy_cache_convert_head off;
            proxy_cache_bypass 1;
            proxy_ignore_headers Cache-Control Expires;
            proxy_no_cache $pulp_content_too_big $pulp_content_not_shared;
            proxy_cache_valid 200 30d;
            proxy_connect_timeout ${COPY_CONNECT_TIMEOUT_SECONDS}s;
            proxy_next_upstream_timeout ${COPY_NEXT_UPSTREAM_SECONDS}s;
            recursive_error_pages on;
            error_page 502 504 = @content_copy;
        }`;
}

/**
 * Where a content request goes when no content app answered: the copy, else 503. Stores nothing; a copy
 * past its max-age, or none, gets one quick try of the content app (it may just have come back).
 */
const CONTENT_COPY = `        location @content_copy {
            proxy_pass http://pulp-content;
            proxy_cache pulp_content;
            proxy_cache_key $http_host$request_uri;
            proxy_cache_convert_head off;
            proxy_cache_use_stale error timeout;
            proxy_no_cache 1;
            proxy_next_upstream off;
            proxy_connect_timeout 1s;
            add_header ${CACHE_HEADER} $upstream_cache_status always;
            error_page 502 504 = @unavailable;
        }`;

export function renderNginxConf(input: NginxInput): string {
  const cache = input.contentCache;
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
    # just died refused goes to another pod; a connection in the cluster is made within ${CONNECT_TIMEOUT_SECONDS} s or tried again,
    # and no request is passed on after ${NEXT_UPSTREAM_SECONDS} s (content with a copy to answer from: sooner).
${upstream("pulp-api", input.apiHost, input.apiPort)}
${upstream("pulp-content", input.contentHost, input.contentPort)}
    proxy_connect_timeout ${CONNECT_TIMEOUT_SECONDS}s;
    proxy_next_upstream error timeout;
    proxy_next_upstream_tries ${UPSTREAM_TRIES};
    proxy_next_upstream_timeout ${NEXT_UPSTREAM_SECONDS}s;
${cache ? cacheHttp(cache) : ""}
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
${contentLocation(input.contentPathPrefix, cache)}
${contentLocation(CONTAINER_CONTENT_PREFIX, cache)}${cache ? `\n${CONTENT_COPY}` : ""}
        # Registry pushes send layers of any size (pulp_container's own snippet sets no limit here).
        location /v2/ {
            client_max_body_size 0;
            proxy_pass http://pulp-api;
        }
        location / {
            proxy_pass http://pulp-api;
        }
        # No pod behind pulp-web could be reached (a stop-the-world upgrade, or every pod gone): say so
        # honestly, and when to try again. An answer Pulp itself sent passes unchanged.
        error_page 502 504 = @unavailable;
        location @unavailable {
            add_header Retry-After ${RETRY_AFTER_SECONDS} always;
            return 503 "Pulp is not answering at the moment (an upgrade may be under way); try again in ${RETRY_AFTER_SECONDS} s.\\n";
        }
    }
}
`;
}
