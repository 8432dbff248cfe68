/**
 * Prints the DataVolume the program would create for one `dataVolumes` entry (JSON on argv[2]), through
 * the program's own config schema and components/cdi/dataVolumes.ts: its annotations and spec. The
 * real-node test adds only the namespace.
 *
 *   ts-node -T testbed/cdi/dataVolume.ts '{"name":"seed","url":"http://seed/seed.tar","size":"64Mi","storageClass":"standard"}'
 */
import { dataVolumeAnnotations, dataVolumeSpec } from "../../components/cdi/dataVolumes";
import { configSchema } from "../../components/config/schema";

const settings: unknown = JSON.parse(process.argv[2] ?? "{}");
const [dv] = configSchema.shape.dataVolumes.parse([settings]);
if (!dv) throw new Error("no dataVolumes entry");
const dataVolume = {
  apiVersion: "cdi.kubevirt.io/v1beta1",
  kind: "DataVolume",
  metadata: { name: dv.name, annotations: dataVolumeAnnotations(dv) },
  spec: dataVolumeSpec(dv),
};
process.stdout.write(JSON.stringify(dataVolume) + "\n");
