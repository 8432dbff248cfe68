/**
 * Prints the `spec` of the CloudNativePG Cluster the program would create for the given
 * `database.cloudnativepg` settings (JSON on argv[2]), through the program's own config schema
 * (defaults included) and components/database/database.ts. The real-node test adds only what the
 * test bed needs (the real node's nodeSelector).
 *
 *   ts-node -T testbed/cnpg/clusterSpec.ts '{"instances":2,"storageSize":"1Gi","imageName":"localhost/postgresql:15"}'
 */
import { cloudNativePgSpec } from "../../components/database/database";
import { configSchema } from "../../components/config/schema";

const settings: unknown = JSON.parse(process.argv[2] ?? "{}");
const database = configSchema.shape.database.parse({ cloudnativepg: settings });
if (!database.cloudnativepg) throw new Error("no cloudnativepg settings");
process.stdout.write(JSON.stringify(cloudNativePgSpec(database.cloudnativepg)) + "\n");
