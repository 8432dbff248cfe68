// Unit: pulp-web's nginx.conf with and without the content cache, as text. What nginx does with it runs on
// the real node (test/e2e/real/guardedUpgrade.test.ts: downloads through a stop-the-world).
import fc from "fast-check";
import { atMostPattern, renderNginxConf } from "../../../../components/web/nginx";
import { NGINX_INPUT } from "../../helpers/nginxInput";

const BASE = NGINX_INPUT;
const CACHE = { maxBytes: 2 ** 30, maxEntryBytes: 32 * 2 ** 20, privateHeaders: ["X-Pulp-Entitlement"] };

/** The block of a location (or named location), up to its closing brace. */
function location(conf: string, name: string): string {
  const start = conf.indexOf(`location ${name} {`);
  if (start < 0) throw new Error(`no location ${name}`);
  return conf.slice(start, conf.indexOf("}", start) + 1);
}

test("atMostPattern matches the decimal numbers from 0 to n and no others (nginx compares Content-Length as text)", () => {
  fc.assert(
    fc.property(fc.nat(2 ** 40), fc.nat(2 ** 41), (n, m) => {
      const re = new RegExp(atMostPattern(n));
      expect(re.test(String(m))).toBe(m <= n);
      expect(re.test(String(n))).toBe(true);
      expect(re.test(String(n + 1))).toBe(false);
    }),
  );
  expect(new RegExp(atMostPattern(0)).test("0")).toBe(true);
  expect(new RegExp(atMostPattern(0)).test("1")).toBe(false);
  expect(new RegExp(atMostPattern(100)).test("")).toBe(false);
});

test("without the cache, content passes straight to the content app; no pod to reach is a 503 with Retry-After", () => {
  const conf = renderNginxConf(BASE);
  expect(conf).not.toMatch(/proxy_cache/);
  expect(location(conf, "/pulp/content/")).toMatch(
    /^location \/pulp\/content\/ \{\s+proxy_pass http:\/\/pulp-content;\s+\}$/,
  );
  expect(conf).toMatch(/error_page 502 504 = @unavailable;/);
  expect(location(conf, "@unavailable")).toMatch(/add_header Retry-After 30 always;\s+return 503 /);
  // An error Pulp itself sent is passed on as it is.
  expect(conf).not.toMatch(/proxy_intercept_errors on/);
  // Long tries ride out a few seconds without a ready pod.
  expect(conf).toMatch(/proxy_connect_timeout 5s;[\s\S]*proxy_next_upstream_timeout 30s;/);
});

test("with the cache, every content request still goes to the content app; the copy answers only when none could", () => {
  const conf = renderNginxConf({ ...BASE, contentCache: CACHE });
  for (const path of ["/pulp/content/", "/pulp/container/"]) {
    const block = location(conf, path);
    expect(block).toMatch(/proxy_pass http:\/\/pulp-content;/);
    // Never answered from the cache here, whatever it holds; the answer refreshes the copy.
    expect(block).toMatch(/proxy_cache_bypass 1;/);
    expect(block).toMatch(/proxy_cache \$pulp_content_cache;/);
    // pulpcore 3.122+ sends `Cache-Control: public, max-age=0, must-revalidate` with every answer: obeyed,
    // nginx would keep no copy at all (found on the real node with 3.123.1).
    expect(block).toMatch(/proxy_ignore_headers Cache-Control Expires;/);
    expect(block).toMatch(/proxy_no_cache \$pulp_content_too_big \$pulp_content_not_shared;/);
    expect(block).toMatch(/error_page 502 504 = @content_copy;/);
    expect(block).toMatch(/recursive_error_pages on;/);
    // With a copy to fall back on, the tries are short: each waits for a reject the node rate-limits.
    expect(block).toMatch(/proxy_connect_timeout 2s;\s+proxy_next_upstream_timeout 4s;/);
  }
  const copy = location(conf, "@content_copy");
  expect(copy).toMatch(/proxy_cache pulp_content;/);
  expect(copy).toMatch(/proxy_cache_use_stale error timeout;/); // not http_502: the app's own errors pass
  expect(copy).toMatch(/proxy_no_cache 1;/); // a request of any kind reaching the app here stores nothing
  // A miss has waited out the tries once already: one quick try more, then the 503.
  expect(copy).toMatch(/proxy_next_upstream off;\s+proxy_connect_timeout 1s;/);
  expect(copy).toMatch(/add_header X-Pulp-Web-Cache \$upstream_cache_status always;/);
  expect(copy).toMatch(/error_page 502 504 = @unavailable;/);
  // One key for storing and answering, so a copy made in one location is found in the other.
  const keys = conf.match(/proxy_cache_key [^;]+;/g) ?? [];
  expect(new Set(keys)).toEqual(new Set(["proxy_cache_key $http_host$request_uri;"]));
  expect(keys).toHaveLength(3);
  expect(conf).toContain(
    "proxy_cache_path /var/cache/pulp-content levels=1:2 keys_zone=pulp_content:10m max_size=1073741824 inactive=30d use_temp_path=off;",
  );
});

test("kept: GETs without credentials, a signed URL, ranges or conditions, or a header the config names; answers with a length up to maxEntrySize", () => {
  const conf = renderNginxConf({ ...BASE, contentCache: CACHE });
  const [, source, body] = /map "([^"]+)" \$pulp_content_cache \{([^}]+)\}/.exec(conf) ?? [];
  // The map's value is pulp_content only when the whole string is "GET": every listed header empty.
  expect(body.trim().split(/\s*\n\s*/)).toEqual(["GET pulp_content;", "default off;"]);
  expect(source.startsWith("$request_method")).toBe(true);
  for (const variable of [
    "$http_authorization",
    "$http_cookie",
    "$http_x_client_cert",
    "$http_range",
    "$http_if_none_match",
    "$http_if_modified_since",
    "$http_x_pulp_entitlement",
    "$arg_validate_token",
  ]) {
    expect(source).toContain(variable);
  }
  const [, pattern] =
    /map \$upstream_http_content_length \$pulp_content_too_big \{\s+"~([^"]+)" "";\s+default 1;/.exec(conf) ??
    [];
  expect(new RegExp(pattern).test(String(32 * 2 ** 20))).toBe(true);
  expect(new RegExp(pattern).test(String(32 * 2 ** 20 + 1))).toBe(false);
  // No Content-Length (a streamed answer): not kept.
  expect(new RegExp(pattern).test("")).toBe(false);
  // An answer the content app marks no-store (a redirect with a signed URL) or private: not kept; Pulp's
  // own public answers are.
  const [, notShared] =
    /map \$upstream_http_cache_control \$pulp_content_not_shared \{\s+"~\*([^"]+)" 1;\s+default "";/.exec(
      conf,
    ) ?? [];
  const kept = (cacheControl: string) => !new RegExp(notShared, "i").test(cacheControl);
  expect(kept("public, max-age=0, must-revalidate")).toBe(true);
  expect(kept("")).toBe(true);
  expect(kept("no-store")).toBe(false);
  expect(kept("Private, max-age=60")).toBe(false);
});
