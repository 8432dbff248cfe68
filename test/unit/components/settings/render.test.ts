import fc from "fast-check";
import { renderSettings, SettingsInput, toPython } from "../../../../components/settings/render";
import { renderNginxConf, UPSTREAM_TRIES } from "../../../../components/web/nginx";
import { NGINX_INPUT } from "../../helpers/nginxInput";
import { SETTINGS_INPUT } from "../../helpers/settingsInput";

const base: SettingsInput = SETTINGS_INPUT;

/** The same object with its keys inserted in a different order, at every level. */
function shuffled<T>(value: T, seed: number): T {
  if (Array.isArray(value)) return value.map((v) => shuffled(v, seed)) as T;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>);
    const order = entries
      .map((_, i) => i)
      .sort((a, b) => ((a * 7919 + seed) % 13) - ((b * 7919 + seed) % 13));
    return Object.fromEntries(order.map((i) => [entries[i][0], shuffled(entries[i][1], seed)])) as T;
  }
  return value;
}

test("settings.py is byte-identical for equal input, whatever the key order", () => {
  const extraArb = fc.dictionary(
    fc.stringMatching(/^[A-Z][A-Z0-9_]{0,12}$/),
    fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.dictionary(fc.string(), fc.integer())),
  );
  fc.assert(
    fc.property(extraArb, fc.nat(1000), (extra, seed) => {
      const a = renderSettings({ ...base, extra });
      const b = renderSettings(shuffled({ ...base, extra }, seed));
      expect(b).toBe(a);
    }),
  );
});

test("settings.py holds the database location but never a secret", () => {
  const text = renderSettings(base);
  expect(text).toContain('CONTENT_ORIGIN = "https://pulp.example.com"');
  expect(text).toContain(
    'DATABASES = {"default": {"CONN_MAX_AGE": 0, "ENGINE": "django.db.backends.postgresql", "HOST": "pulp-db-rw", "NAME": "pulp", "OPTIONS": {"connect_timeout": 10, "keepalives": 1, "keepalives_count": 3, "keepalives_idle": 30, "keepalives_interval": 10, "sslmode": "prefer", "tcp_user_timeout": 30000}, "PORT": 5432, "USER": "pulp"}}',
  );
  expect(text).toContain('DB_ENCRYPTION_KEY = "/etc/pulp/keys/database_fields.symmetric.key"');
  expect(text).not.toMatch(/SECRET_KEY|PASSWORD/);
  // Keys are sorted, one per line.
  const keys = text
    .split("\n")
    .filter((l) => / = /.test(l))
    .map((l) => l.split(" = ")[0]);
  expect(keys).toEqual([...keys].sort());
});

test("object storage and redis settings appear only when configured", () => {
  expect(renderSettings(base)).toContain('"BACKEND": "pulpcore.app.models.storage.FileSystem"');
  const text = renderSettings({
    ...base,
    s3: { bucket: "artifacts", accessKeyId: "AKIA", endpointUrl: "https://s3.example.com" },
    redis: { host: "pulp-redis", port: 6379 },
    cacheEnabled: true,
  });
  expect(text).toContain('"BACKEND": "storages.backends.s3.S3Storage"');
  expect(text).toContain('"bucket_name": "artifacts"');
  expect(text).toContain('REDIS_HOST = "pulp-redis"');
  expect(text).toContain("CACHE_ENABLED = True");
});

test("Python literals", () => {
  expect(toPython({ b: [true, false, null], a: 'x"y', c: 1.5 })).toBe(
    '{"a": "x\\"y", "b": [True, False, None], "c": 1.5}',
  );
  expect(() => toPython(Infinity)).toThrow(/cannot hold the number/);
});

test("nginx config carries the body-size limit and routes content to content", () => {
  const conf = renderNginxConf(NGINX_INPUT);
  expect(conf).toContain("client_max_body_size 10g;");
  expect(conf).toMatch(/location \/pulp\/content\/ \{\s+proxy_pass http:\/\/pulp-content;/);
  // The Service as many times as nginx may try (a pod that just died refuses; kube-proxy picks anew).
  expect(conf.match(/server pulp-api:24817 max_fails=0;/g)).toHaveLength(UPSTREAM_TRIES);
  expect(conf.match(/server pulp-content:24816 max_fails=0;/g)).toHaveLength(UPSTREAM_TRIES);
  expect(conf).toContain(`proxy_next_upstream_tries ${UPSTREAM_TRIES};`);
  expect(conf).toMatch(/proxy_next_upstream error timeout;/);
});
