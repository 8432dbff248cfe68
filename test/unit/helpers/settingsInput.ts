// The settings input the settings and migration-script tests start from (components/settings/render.ts).
import { SettingsInput } from "../../../components/settings/render";

export const SETTINGS_INPUT: SettingsInput = {
  contentOrigin: "https://pulp.example.com",
  apiRoot: "/pulp/",
  contentPathPrefix: "/pulp/content/",
  allowedContentChecksums: ["sha256", "sha512"],
  database: { host: "pulp-db-rw", port: 5432, name: "pulp", user: "pulp", sslmode: "prefer" },
  cacheEnabled: false,
  workerType: "pulpcore",
  extra: {},
};
