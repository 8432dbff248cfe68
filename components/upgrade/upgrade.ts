// The upgrade, decided in one place: from what the stack deployed last to what the config asks for.
// The Pulp component calls it; the plan is announced as a diagnostic carrying the contract's marker.
import * as pulumi from "@pulumi/pulumi";
import { upgradePlanMessage } from "../contract";
import { PulpConfig } from "../config/parse";
import { Deployed } from "./deployed";
import { heartbeatTtlSeconds, planUpgrade, UpgradePlan } from "./plan";

/** Plans the upgrade and announces it; throws UpgradeRefused before anything is created. */
export function decideUpgrade(config: PulpConfig, deployed: Deployed): UpgradePlan {
  const target = Object.keys(config.plugins).length > 0 ? config.plugins : undefined;
  const plan = planUpgrade(
    deployed.pulpcoreVersion,
    config.pulpcoreVersion,
    { deployed: deployed.idle, target: config.idle },
    {
      plugins: { deployed: deployed.pluginVersions, target },
      // The same settings the migration Job renders: its RequireVersion reads these TTLs.
      ttlSeconds: heartbeatTtlSeconds(config.extraSettings),
      image: config.image,
    },
  );
  // Diagnostics, not outputs: they show in every preview and update, and a no-op stays a no-op.
  if (plan.kind === "stop-the-world") {
    pulumi.log.warn(
      upgradePlanMessage(
        plan.kind,
        `${plan.summary} Running tasks finish first: workers get up to ` +
          `${config.worker.terminationGracePeriodSeconds} s to stop.`,
      ),
    );
  } else if (plan.kind !== "none") {
    pulumi.log.info(upgradePlanMessage(plan.kind, plan.summary));
  }
  return plan;
}
