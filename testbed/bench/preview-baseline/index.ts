// The baseline of `npm run bench:preview`: a Namespace and `count` ConfigMaps in it, nothing else, so
// that a no-op preview of it costs what the CLI, the engine and the Kubernetes provider cost for that many
// resources.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";

export = async () => {
  const config = new pulumi.Config("baseline");
  const ns = new k8s.core.v1.Namespace("ns", { metadata: { name: config.require("namespace") } });
  for (let i = 0; i < config.requireNumber("count"); i++) {
    new k8s.core.v1.ConfigMap(`cm-${i}`, {
      metadata: { name: `cm-${i}`, namespace: ns.metadata.name },
      data: { index: String(i) },
    });
  }
  return {};
};
