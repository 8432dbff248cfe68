import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { contentHash } from "../common/hash";
import { fixedName, Identity, labels } from "../common/labels";
import { renderSettings, SettingsInput } from "./render";

export interface SettingsArgs {
  namespace: pulumi.Input<string>;
  identity: Identity;
  input: SettingsInput;
}

/**
 * settings.py in a Secret named after its content hash. A change makes a new Secret (created before the
 * old one is deleted), and every pod template that mounts it changes with it: new settings always reach
 * the pods, and the name is known in a preview, so the diff shows exactly which Deployments roll.
 */
export class Settings extends pulumi.ComponentResource {
  readonly text: string;
  readonly hash: string;
  readonly secretName: string;
  readonly secret: k8s.core.v1.Secret;

  constructor(name: string, args: SettingsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("pulp:settings:Settings", name, {}, opts);
    this.text = renderSettings(args.input);
    this.hash = contentHash(this.text);
    this.secretName = fixedName(args.identity, `settings-${this.hash}`);
    this.secret = new k8s.core.v1.Secret(
      name,
      {
        metadata: {
          name: this.secretName,
          namespace: args.namespace,
          labels: labels(args.identity, "config"),
        },
        type: "Opaque",
        immutable: true,
        stringData: { "settings.py": this.text },
      },
      { parent: this },
    );
    this.registerOutputs({ secretName: this.secretName, hash: this.hash });
  }
}
