import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { Identity, labels } from "../common/labels";
import { Deployed } from "./deployed";
import { historyData, historyName } from "./history";

/**
 * Writes the install's history ConfigMap (upgrade/history.ts) once `rolledOut` resolves: a failed update
 * leaves it as it was, so a revert is not taken for a downgrade. Kept on destroy with the data it
 * describes; forced over a copy someone recorded by hand with kubectl (the fix a refusal prints).
 */
export function recordHistory(
  name: string,
  args: {
    namespace: pulumi.Input<string>;
    identity: Identity;
    rolledOut: pulumi.Output<boolean>;
    deployed: Deployed;
  },
  opts: pulumi.CustomResourceOptions,
): k8s.core.v1.ConfigMap {
  return new k8s.core.v1.ConfigMap(
    name,
    {
      metadata: {
        name: historyName(args.identity.instance),
        namespace: args.namespace,
        labels: labels(args.identity, "config"),
        annotations: { "pulumi.com/patchForce": "true" },
      },
      data: args.rolledOut.apply(() => historyData(args.deployed)),
    },
    { ...opts, retainOnDelete: true },
  );
}
