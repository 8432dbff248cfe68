// The delivery stack: validates the `delivery:` config, then creates what the Pulumi Kubernetes Operator
// needs to run the pulp program in the cluster. Nothing is created when the config is refused.
import { loadDeliveryConfig } from "./config";
import { StackDeployment } from "./stackDeployment";

export = async () => {
  const config = loadDeliveryConfig();
  const delivery = new StackDeployment(config.stackName, { config });
  return {
    pulpNamespace: delivery.pulpNamespace,
    deliveryNamespace: delivery.deliveryNamespace,
    serviceAccountName: delivery.serviceAccountName,
    stacks: delivery.stackNames,
    pulumiStack: config.pulumiStack,
  };
};
