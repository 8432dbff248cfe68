// The entry of the `pulp` Pulumi plugin package (PulumiPlugin.yaml beside it): the components it
// offers to programs in other languages. Pulumi's nodejs host requires this directory and serves every
// ComponentResource class exported here; its schema inference starts from this file (package.json main).
export { PulpInstall } from "./pulpInstall";
export type { PulpInstallArgs } from "./pulpInstall";
