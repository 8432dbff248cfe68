// The package's public entry (`require("pulp-pulumi")`): the components a platform team instantiates from
// its own Pulumi program, and what it needs to build their arguments. The repository's own stack program
// (index.ts) is the worked example: loadConfig and providerCluster feed Pulp.create, which reads the
// install's upgrade history from the cluster (upgrade/history.ts).
//
// Anything not exported here is internal and may change in any release.

export { Pulp } from "./pulp";
export type { PulpArgs } from "./pulp";

// The arguments: validated config (from the `pulp:` stack config, or from a plain object), secrets, what
// the stack deployed last and the cluster the default Kubernetes provider deploys to.
export { loadConfig } from "./config/load";
export type { LoadedConfig, SecretInputs, SuppliedSecrets } from "./config/load";
export { parseConfig } from "./config/parse";
// The same validation for a config object a program builds: problems named by argument path.
export { parseArgs, ArgsError } from "./config/programArgs";
export type { PulpConfig } from "./config/parse";
export { ConfigError, formatProblems } from "./config/problems";
export type { ConfigProblem } from "./config/problems";
export { SECRET_NAMES } from "./config/rules";
export type { SecretName } from "./config/rules";
export { FIRST_INSTALL, readDeployed, deployedOutputs } from "./upgrade/deployed";
export { historyName, readHistory, HistoryMissing } from "./upgrade/history";
export type { Deployed } from "./upgrade/deployed";
export { providerCluster, clusterFrom } from "./upgrade/cluster";
export type { KubeTarget } from "./upgrade/kubeApi";
export { UpgradeRefused } from "./upgrade/plan";
export type { UpgradePlan } from "./upgrade/plan";
export { RestoreRefused } from "./backup/restorePlan";
// What the Pulp component decides before it creates anything (upgrade, restore, stop, replicas, routes,
// optional parts), as plain data: for a preview of an update, or a test, without Pulumi.
export { decideInstall } from "./decide";
export type { InstallDecision } from "./decide";

// Backup and restore, which Pulp creates from its `backup` and `restore` config; exported for a program
// that composes them itself.
export { Backup } from "./backup/backup";
export type { BackupArgs, BackupKeys, InstallData } from "./backup/backup";
export { RestoreJob, RestoreCheck } from "./backup/restore";
export type { RestoreArgs, RestoreCheckArgs, ArtifactTarget } from "./backup/restore";

// Delivery by the Pulumi Kubernetes Operator v2 (what the repository's stacks/ program creates): the
// namespaces, the workspace's least-privilege RBAC and the Stack CRs that run a Pulp program (this
// repository's, or the user's own, from projectRepo and repoDir) in the cluster.
export { StackDeployment } from "../stacks/stackDeployment";
export type { StackDeploymentArgs } from "../stacks/stackDeployment";
export { loadDeliveryConfig, parseDeliveryConfig, DeliveryConfigError } from "../stacks/config";
export type { DeliveryConfig } from "../stacks/config";
