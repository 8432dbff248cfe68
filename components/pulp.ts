import * as pulumi from "@pulumi/pulumi";
import { Backup } from "./backup/backup";
import { RestoreCheck, RestoreJob } from "./backup/restore";
import { RestoreFetch } from "./backup/restoreFetch";
import { DataVolumeImports } from "./cdi/dataVolumes";
import { asSecrets, SecretInputs } from "./config/load";
import { objectStorage } from "./config/objectStorage";
import { PulpConfig } from "./config/parse";
import { SecretName } from "./config/rules";
import { Database, databaseClusterName } from "./database/database";
import { AZURE_USE_LABEL, PodIdentity, wantsIdentity } from "./identity/podIdentity";
import { azureEndpointParts } from "./storage/azure";
import { noProxyList, Proxy } from "./proxy/proxy";
import { Signing, signing } from "./signing/signing";
import { PulpIngress } from "./ingress/ingress";
import { JobGuard, JobsRunning, runningJobsProblem } from "./migration/jobGuard";
import { MigrationJob } from "./migration/migrationJob";
import { PulpNamespace } from "./namespace/namespace";
import { Redis, REDIS_PORT, redisHost } from "./redis/redis";
import { PulpSecrets } from "./secrets/pulpSecrets";
import { Settings } from "./settings/settings";
import { TYPES } from "./contract";
import { decideInstall, PULP_PROCESSES } from "./decide";
import { contentHash } from "./common/hash";
import { PodSpecOverrides } from "./common/merge";
import { fixedName, labels } from "./common/labels";
import { ArtifactStorage } from "./storage/artifactStorage";
import { PulpWeb } from "./web/pulpWeb";
import {
  API_PORT,
  CONTENT_PORT,
  initDirsContainer,
  pulpContainer,
  PulpProcess,
  PulpRuntime,
  pulpVolumes,
  withEnv,
} from "./workload/pulpProcess";
import { podDefaults } from "./workload/podSecurity";
import { TrustedCa, trusting } from "./trust/trustedCa";
import { Ldap, ldapEnv, ldapSettings } from "./ldap/ldap";
import { ROLLED_OUT_ANNOTATION, Workload } from "./workload/workload";
import { TaskQueueScaler } from "./autoscaling/autoscaling";
import { metricsEnv } from "./metrics/metrics";
import { CpuAutoscaling } from "./config/schema";
import { Deployed, DeployedRelease, keysInGeneratedSecrets } from "./upgrade/deployed";
import {
  HistoryMissing,
  LegacyRecord,
  legacyRecord,
  readHistory,
  takeoverNotice,
  takeoverProblem,
} from "./upgrade/history";
import { ExistingClaimRefused, existingClaimProblem } from "./storage/existingClaim";
import { recordHistory } from "./upgrade/historyRecord";
import { isProviderCluster } from "./upgrade/cluster";
import { KubeTarget } from "./upgrade/kubeApi";
import { UpgradePlan } from "./upgrade/plan";
import { StopTheWorld } from "./upgrade/stopTheWorld";
import { tagOnlyWarning } from "./upgrade/pinning";
import { parameterWarning } from "./database/parameters";
import { poolerWarning } from "./database/pooler";
import { databaseChangeProblem, DatabaseChangeRefused, majorUpgradeNotice } from "./database/clusterChange";

export interface PulpArgs {
  /** The validated install, from `parseConfig` or `loadConfig`. */
  config: PulpConfig;
  /**
   * Secret values: any Input<string> (the stack config's, a generated password's output). Each is kept a
   * Pulumi secret; the ones left out are generated once and kept (`SECRET_NAMES` lists them).
   */
  secrets: SecretInputs;
  /**
   * What the install deployed last: `Pulp.history` reads it from the cluster (`Pulp.create` does that for
   * you). Required: the component plans the upgrade from it. Its job guard checks it against the
   * cluster's record before anything touches the database, so a made-up one (FIRST_INSTALL over a live
   * install) is refused rather than planned as an install.
   */
  deployed: Deployed;
  /**
   * The cluster the Kubernetes provider deploys to: `providerCluster()` for the default provider (the
   * `kubernetes:` config); for a provider of your own, the kubeconfig you gave it. The stop-the-world
   * step, the job guard and the import watch make their API calls there; the job guard refuses before
   * anything stops when the namespace's uid differs between the two.
   */
  cluster: pulumi.Input<KubeTarget>;
}

/**
 * A whole Pulp install: namespace, secrets, database, artifact storage, settings, the migration Job and
 * the api, content and worker Deployments (plus pulp-web, Redis and ingress when enabled).
 *
 * Order on every `pulumi up`: secrets, database and storage; then settings; then the migration Job,
 * awaited until Complete; only then do Deployments change. A failed migration leaves the running
 * release untouched.
 */
export class Pulp extends pulumi.ComponentResource {
  readonly namespace: pulumi.Output<string>;
  readonly apiUrl: string;
  readonly contentUrl: string;
  readonly serviceNames: Record<string, string>;
  readonly secretNames: Record<string, string>;
  /** Named by what it runs, the admin password among it (an HMAC), so known once the secrets are. */
  readonly migrationJobName: pulumi.Output<string>;
  readonly workloads: Partial<Record<PulpProcess | "web" | "redis", Workload>> = {};
  readonly settings: Settings;
  readonly migration: MigrationJob;
  /** The backup this install was restored from (this update's restore, or an earlier one's). */
  readonly restoredBackup?: string;
  /**
   * What this update deploys, as the history records it once the Deployments have rolled out (the
   * history ConfigMap here; the stack program's outputs too, through deployedOutputs).
   */
  readonly deploying: DeployedRelease;
  /** The backup CronJob, when backup.enabled (a Job created from it takes one backup). */
  readonly backupCronJobName?: string;
  /** How this update upgrades Pulp (upgrade/plan.ts); a stop-the-world plan stops the old release first. */
  readonly upgrade: UpgradePlan;
  /**
   * Resolves once every Pulp Deployment has been updated (awaited: rolled out and available). A failed
   * update never resolves it, so outputs gated on it keep their last value (see index.ts).
   */
  readonly rolledOut: pulumi.Output<boolean>;

  /**
   * What the install deployed last, as the cluster records it (upgrade/history.ts). `deployed`, when
   * given, is a record kept elsewhere (the stack outputs of an older version of the stack program), or a
   * function that reads it, used only where the cluster has none. Refuses with a fix when the namespace
   * holds an instance of that name that nothing records, while a migration or restore Job of an earlier
   * `up` still runs, or when the claim storage.pvc.existingClaim names cannot hold the artifacts (no
   * resource is registered then).
   */
  static async history(
    args: Pick<PulpArgs, "config" | "cluster"> & { deployed?: LegacyRecord },
  ): Promise<Deployed> {
    const cluster = await knownValue(pulumi.output(args.cluster));
    // Unknown only while a cluster this program creates does not exist yet: nothing is installed there.
    // The job guard checks the plan against the cluster again once it is known.
    if (!cluster) return (await legacyRecord(args.deployed)) ?? { idle: false };
    const where = { namespace: args.config.namespace, instance: args.config.instanceName };
    const claim = objectStorage(args.config.storage) ? undefined : args.config.storage.pvc?.existingClaim;
    const cloudnativepg = args.config.database.cloudnativepg;
    const { deployed, source, found } = await readHistory({
      cluster: cluster as KubeTarget,
      ...where,
      legacy: args.deployed,
      claim,
      databaseCluster: cloudnativepg && databaseClusterName(args.config.instanceName),
    });
    const claimProblem = claim && existingClaimProblem(found.claim ?? null, { ...where, name: claim });
    if (claimProblem) throw new ExistingClaimRefused(claimProblem);
    if (cloudnativepg) {
      const databaseProblem = databaseChangeProblem(found.database, cloudnativepg, where.namespace);
      if (databaseProblem) throw new DatabaseChangeRefused(databaseProblem);
      const majorUpgrade = majorUpgradeNotice(found.database, cloudnativepg, where.namespace);
      if (majorUpgrade) pulumi.log.warn(majorUpgrade);
    }
    // The job guard's refusal, made here before anything is registered (migration/jobGuard.ts).
    const running = runningJobsProblem(found.jobs ?? [], {
      ...where,
      timeout: args.config.migration.timeout,
    });
    if (running) throw new JobsRunning(running);
    if (source === "pulp-operator") {
      const problem = takeoverProblem(found, deployed, {
        ...where,
        image: args.config.image,
        pulpcoreVersion: args.config.pulpcoreVersion,
      });
      if (problem) throw new HistoryMissing(problem);
      pulumi.log.warn(takeoverNotice(found, deployed, where));
    }
    if (source === "deployments") {
      pulumi.log.warn(
        `${args.config.instanceName} has no upgrade history; planned from the version its Deployments ` +
          `run (${deployed.pulpcoreVersion}). This update records it.`,
      );
    }
    const checked = { ...deployed };
    checkedHistories.add(checked);
    return checked;
  }

  /** Reads the install's history (`Pulp.history`), then creates the component: how a program creates one. */
  static async create(
    name: string,
    args: Omit<PulpArgs, "deployed"> & { deployed?: LegacyRecord },
    opts?: pulumi.ComponentResourceOptions,
  ): Promise<Pulp> {
    return new Pulp(name, { ...args, deployed: await Pulp.history(args) }, opts);
  }

  constructor(name: string, args: PulpArgs, opts?: pulumi.ComponentResourceOptions) {
    super(TYPES.pulp, name, {}, opts);
    const { config } = args;
    const supplied = asSecrets(args.secrets);
    // A provider of the caller's: the namespace is read through it too, so that the job guard can check
    // that `args.cluster` (what the stop-the-world step, the job guard and the import watch call) is the
    // provider's cluster before anything stops or migrates.
    const ownProvider =
      opts?.provider !== undefined ||
      (opts?.providers !== undefined && Object.keys(opts.providers).length > 0);
    const unpinned = tagOnlyWarning(config.image);
    if (unpinned) pulumi.log.warn(unpinned, this);
    const timeouts = parameterWarning(config.database.cloudnativepg?.parameters ?? {});
    if (timeouts) pulumi.log.warn(timeouts, this);
    const pooled = poolerWarning(config.database.cloudnativepg?.pooler?.parameters ?? {});
    if (pooled) pulumi.log.warn(pooled, this);
    // Every decision, as plain data (decide.ts); refuses before anything is created when the upgrade or
    // the restore is not supported. From here on the constructor only wires resources from it.
    const decision = decideInstall(
      config,
      args.deployed,
      new Set(Object.keys(supplied) as SecretName[]), // loadConfig keeps only the keys the stack sets
    );
    const { identity, parts, replicas } = decision;
    const restoring = decision.restore.kind === "restore" ? decision.restore : undefined;
    this.upgrade = decision.upgrade;
    this.restoredBackup = decision.restoredBackup;
    this.deploying = {
      pulpcoreVersion: config.pulpcoreVersion,
      idle: config.idle,
      pluginVersions: config.plugins,
      restoredBackup: this.restoredBackup,
      artifactStorage: decision.artifactStorage,
    };
    const child = { parent: this };

    const ns = new PulpNamespace(
      `${name}-namespace`,
      {
        name: config.namespace,
        create: config.createNamespace,
        labels: labels(identity, "config"),
        read: ownProvider,
      },
      child,
    );
    this.namespace = ns.name;
    const namespace = ns.name;

    const secrets = new PulpSecrets(
      `${name}-secrets`,
      {
        namespace,
        identity,
        supplied,
        tokenAuth: config.tokenAuth,
        fromGeneratedSecrets: keysInGeneratedSecrets(args.deployed),
      },
      child,
    );
    const database = new Database(
      `${name}-database`,
      {
        namespace,
        identity,
        database: config.database,
        externalPassword: supplied.databasePassword,
        scheduling: config.scheduling,
        imagePullSecrets: config.imagePullSecrets,
      },
      child,
    );

    const imports = new DataVolumeImports(
      `${name}-imports`,
      {
        namespace,
        namespaceName: config.namespace,
        kube: args.cluster,
        identity,
        imports: decision.dataVolumes,
      },
      child,
    );
    const storage = new ArtifactStorage(
      `${name}-storage`,
      {
        namespace,
        identity,
        storage: config.storage,
        s3SecretAccessKey: supplied.s3SecretAccessKey,
        azureAccountKey: supplied.azureAccountKey,
        gcsCredentials: supplied.gcsCredentials,
      },
      child,
    );

    const podIdentity = wantsIdentity(config)
      ? new PodIdentity(`${name}-identity`, { namespace, identity, config }, child)
      : undefined;
    // Storage without a key: AKS's workload identity webhook mutates only the pods that carry its label.
    const identityLabels =
      config.storage.azure && !storage.azureConnection ? { [AZURE_USE_LABEL]: "true" } : undefined;

    const proxy = config.proxy
      ? new Proxy(
          `${name}-proxy`,
          {
            namespace,
            identity,
            proxy: config.proxy,
            noProxy: noProxyList({
              identity,
              namespace: config.namespace,
              databaseHost: database.settings.host,
              storageEndpoint: (config.storage.s3 ?? config.storage.azure ?? config.storage.gcs)?.endpointUrl,
              extra: config.proxy.noProxy,
            }),
          },
          child,
        )
      : undefined;

    // The stack config's rules (rules.ts) require both; a program's parseArgs only hears which secrets will come.
    if (config.signing && !supplied.signingKey) {
      throw new Error(
        "config.signing names signing services, but secrets.signingKey was not passed: pass the ASCII-armored " +
          "private key (gpg --armor --export-secret-keys) as secrets.signingKey, or leave config.signing out",
      );
    }
    const signer =
      config.signing && supplied.signingKey
        ? new Signing(
            `${name}-signing`,
            { namespace, identity, signing: config.signing, key: supplied.signingKey },
            child,
          )
        : undefined;

    if (config.ldap?.bindDn !== undefined && !supplied.ldapBindPassword) {
      throw new Error(
        "config.ldap.bindDn names the account Pulp searches the directory as, but secrets.ldapBindPassword " +
          "was not passed: pass its password as secrets.ldapBindPassword, or leave bindDn out (an anonymous bind)",
      );
    }
    const ldap = config.ldap
      ? new Ldap(
          `${name}-ldap`,
          { namespace, identity, ldap: config.ldap, bindPassword: supplied.ldapBindPassword },
          child,
        )
      : undefined;

    const everyPod = podDefaults(
      config.scheduling as Parameters<typeof podDefaults>[0],
      config.imagePullSecrets,
    );

    this.settings = new Settings(
      `${name}-settings`,
      {
        namespace,
        identity,
        input: {
          contentOrigin: config.contentOrigin,
          apiRoot: config.apiRoot,
          contentPathPrefix: config.contentPathPrefix,
          allowedContentChecksums: config.allowedContentChecksums,
          database: database.settings,
          s3: config.storage.s3,
          azure: config.storage.azure && {
            ...config.storage.azure,
            // Without a key, the pods' workload identity (rules.ts refused an endpoint it cannot reach).
            identity: storage.azureConnection ? undefined : azureEndpointParts(config.storage.azure),
          },
          gcs: config.storage.gcs && { ...config.storage.gcs, keyed: storage.gcs?.key !== undefined },
          redis: parts.redis ? { host: redisHost(identity), port: REDIS_PORT } : undefined,
          cacheEnabled: config.cacheEnabled,
          workerType: config.workerType,
          tokenAuth: decision.tokenServer ? { server: decision.tokenServer } : undefined,
          metrics: config.metrics !== undefined,
          components: config.ldap ? ldapSettings(config.ldap) : undefined,
          extra: config.extraSettings,
        },
      },
      child,
    );

    const runtime: PulpRuntime = {
      image: config.image,
      settingsSecretName: this.settings.secretName,
      secretKey: secrets.secretKey,
      dbFieldsKey: secrets.dbFieldsKey,
      databasePassword: database.password,
      database: database.settings,
      s3SecretKey: storage.s3SecretKey,
      azureConnection: storage.azureConnection,
      gcs: storage.gcs,
      tokenKeysSecret: secrets.tokenKeysSecret,
      dataVolume: storage.volume,
      apiRoot: config.apiRoot,
      contentPathPrefix: config.contentPathPrefix,
      pulpcoreVersion: config.pulpcoreVersion,
      workerType: config.workerType,
      podIdentity: podIdentity?.runtime,
      proxy: proxy?.runtime,
      secretSettings: Object.fromEntries(
        Object.entries(config.secretSettings ?? {}).map(([setting, ref]) => [
          setting,
          { name: ref.secretName, key: ref.key },
        ]),
      ),
    };

    // A backup that comes in over http is unpacked into a DataVolume's PVC first: before anything stops,
    // so that a failed import (a wrong URL, no room) leaves a live install serving.
    const restoreImport = parts.restoreImport
      ? new DataVolumeImports(
          `${name}-restore-import`,
          {
            namespace,
            namespaceName: config.namespace,
            kube: args.cluster,
            identity,
            imports: [parts.restoreImport],
            protect: false,
            role: "backup",
          },
          child,
        )
      : undefined;

    // A backup in the bucket is fetched into a volume of its own, also before anything stops.
    const restoreFetch =
      restoring && parts.restoreFetch
        ? new RestoreFetch(
            `${name}-restore-fetch`,
            {
              namespace,
              identity,
              backup: restoring.backup,
              source: parts.restoreFetch,
              secretAccessKey: supplied.restoreS3SecretAccessKey!,
              pulpImage: config.image,
              done: restoring.done,
              timeout: config.migration.timeout,
              podDefaults: everyPod,
            },
            child,
          )
        : undefined;
    // What the restore's check, its stop and the restore itself wait for: the backup in its volume.
    const backupBrought = [...(restoreImport?.imported ?? []), ...(restoreFetch ? [restoreFetch.job] : [])];

    // Nothing that changes the database starts, or replaces a Job, while a migration or restore Job of an
    // earlier `up` still runs (migration/jobGuard.ts). Pulp.history checked that, and the plan, before
    // anything was registered, through the cluster the default provider resolves; the guard, a dynamic
    // resource, checks again where the program cannot vouch for it: a provider of the caller's (is it the
    // cluster `args.cluster` names?), a history made elsewhere, or a cluster that was not known then.
    const checkedBeforehand =
      checkedHistories.has(args.deployed) && !ownProvider && isProviderCluster(args.cluster);
    const jobGuard = checkedBeforehand
      ? undefined
      : new JobGuard(
          `${name}-job-guard`,
          {
            namespace: config.namespace,
            instance: config.instanceName,
            timeout: config.migration.timeout,
            kube: args.cluster,
            expected: { pulpcoreVersion: args.deployed.pulpcoreVersion },
            namespaceUid: ns.uid,
          },
          child,
        );
    const guarded = jobGuard ? [jobGuard] : [];

    // Whether the backup fits this install, before anything stops: a refusal leaves a live install serving.
    const restoreCheck =
      restoring && parts.restoreCheck
        ? new RestoreCheck(
            `${name}-restore-check`,
            {
              namespace,
              identity,
              backup: restoring.backup,
              claim: restoring.claim,
              pulpImage: config.image,
              target: config.storage.s3
                ? // rules.ts refuses a restore into object storage without a static key.
                  {
                    kind: "s3",
                    ...config.storage.s3,
                    accessKeyId: config.storage.s3.accessKeyId!,
                    secretKey: storage.s3SecretKey!,
                  }
                : config.storage.azure
                  ? { kind: "azure", ...config.storage.azure, connection: storage.azureConnection! }
                  : config.storage.gcs
                    ? { kind: "gcs", ...config.storage.gcs, runtime: storage.gcs! }
                    : { kind: "pvc" },
              done: restoring.done,
              keys: secrets,
              podDefaults: everyPod,
              after: [...storage.resources, ...backupBrought, ...secrets.resources],
            },
            child,
          )
        : undefined;

    // After the restore's check: a refused restore leaves no Redis behind in a new install.
    const redis = parts.redis
      ? new Redis(
          `${name}-redis`,
          {
            namespace,
            identity,
            image: config.redis.image,
            resources: config.redis.resources,
            podSpecOverrides: config.redis.podSpecOverrides as PodSpecOverrides,
            podDefaults: everyPod,
            replicas: replicas.redis,
            after: restoreCheck ? [restoreCheck.job] : [],
          },
          child,
        )
      : undefined;
    if (redis) this.workloads.redis = redis.workload;

    // Every older process stops before `migrate` (a stop-the-world upgrade), or before a restore over the
    // live install replaces its data (decision.stop.restoring).
    const stop =
      decision.stop &&
      new StopTheWorld(
        `${name}-stop-the-world`,
        { ...decision.stop, namespace, kube: args.cluster },
        {
          ...child,
          dependsOn: [...guarded, ...backupBrought, ...(restoreCheck ? [restoreCheck.job] : [])],
        },
      );

    // Into the new install's empty database and volume, before the first migration brings it up to date.
    const restore = restoring
      ? new RestoreJob(
          `${name}-restore`,
          {
            namespace,
            identity,
            backup: restoring.backup,
            claim: restoring.claim,
            overwrite: restoring.overwrite,
            image: parts.restoreImage!, // set whenever a restore is (config/rules.ts requires it)
            done: restoring.done,
            pulpcoreVersion: config.pulpcoreVersion,
            timeout: config.migration.timeout,
            database: database.direct,
            databasePassword: database.password,
            artifacts: storage.onVolume ? storage.volume : undefined,
            keys: secrets,
            podDefaults: everyPod,
            after: [
              ...guarded,
              ...secrets.resources,
              ...database.ready,
              ...storage.resources,
              ...(stop ? [stop.step] : []),
              ...backupBrought,
              ...(restoreCheck ? [restoreCheck.job] : []),
            ],
          },
          child,
        )
      : undefined;

    this.migration = new MigrationJob(
      `${name}-migrate`,
      {
        namespace,
        identity,
        runtime,
        settingsHash: this.settings.hash,
        adminPassword: secrets.adminPassword,
        adminPasswordValue: supplied.adminPassword,
        digestKey: secrets.secretKeyValue,
        resources: config.migration.resources,
        backoffLimit: config.migration.backoffLimit,
        timeout: config.migration.timeout,
        podAnnotations: config.migration.podAnnotations,
        podLabels: identityLabels,
        podSpecOverrides: config.migration.podSpecOverrides as PodSpecOverrides,
        podDefaults: everyPod,
        plugins: config.plugins,
        clearStaleAppStatus: decision.migration.clearStaleAppStatus,
        restoredBackup: this.restoredBackup,
        clearCache: decision.migration.clearCache,
        signing: signer?.runtime,
        after: [
          ...guarded,
          this.settings.secret,
          ...secrets.resources,
          ...database.ready,
          ...storage.resources,
          ...imports.imported,
          ...(redis ? [redis.workload.rolledOut] : []),
          ...(stop ? [stop.step] : []),
          ...(restore ? [restore.job] : []),
        ],
      },
      child,
    );
    this.migrationJobName = this.migration.jobName;

    const backup = parts.backup
      ? new Backup(
          `${name}-backup`,
          {
            namespace,
            identity,
            backup: config.backup,
            config,
            pulpImage: config.image,
            s3SecretAccessKey: supplied.backupS3SecretAccessKey,
            podIdentity: podIdentity?.runtime,
            proxy: proxy?.runtime,
            database: database.direct,
            databasePassword: database.password,
            artifacts: storage.onVolume ? storage.volume : undefined,
            keys: secrets,
            podDefaults: everyPod,
            after: [this.migration.job],
          },
          child,
        )
      : undefined;
    this.backupCronJobName = backup?.cronJobName;

    const trust = parts.trustedCa
      ? new TrustedCa(`${name}-trusted-ca`, { namespace, identity, trustedCa: config.trustedCa }, child)
      : undefined;

    // Rolls the pods when what they read changes: settings.py (named by its hash) and the secret values
    // that come from the stack config. One-way hashes, so they need not stay secret.
    const configHash = pulumi.unsecret(
      pulumi
        .all([
          supplied.databasePassword,
          supplied.s3SecretAccessKey,
          supplied.azureAccountKey,
          supplied.gcsCredentials,
        ])
        .apply(([db, s3, azure, gcs]) =>
          contentHash({
            settings: this.settings.hash,
            db: db && contentHash(db),
            s3: s3 && contentHash(s3),
            // Only when set, so an install without them keeps its hash (and does not roll).
            ...(azure ? { azure: contentHash(azure) } : {}),
            // google-auth reads the key file once per process: a new key rolls the pods.
            ...(gcs ? { gcs: contentHash(gcs) } : {}),
            ...(trust?.hash ? { trustedCa: trust.hash } : {}),
            // The proxy's URLs reach the pods from a Secret, read when a container starts.
            ...(config.proxy ? { proxy: contentHash(config.proxy) } : {}),
            // A restore over the live install starts the pods it stopped (a new template scales them back).
            ...(this.restoredBackup ? { restoredBackup: this.restoredBackup } : {}),
          }),
        ),
    );

    const autoscaledWorkload = (process: PulpProcess | "web") => {
      const how = decision.autoscaling[process];
      const autoscaling = config[process].autoscaling;
      if (!how || !autoscaling) return undefined;
      const cpu = process === "worker" ? undefined : (autoscaling as CpuAutoscaling);
      return { leaveReplicas: how.leaveReplicas, maxReplicas: autoscaling.maxReplicas, cpu };
    };

    // In the decided order; each waits for the Deployments the decision names (workers first in an upgrade).
    // Only the workers sign (in tasks): only their pods get the key, and only they roll for a new one.
    const signs = (process: PulpProcess) => (process === "worker" ? signer?.runtime : undefined);
    // Only the api logs users in: only its pods get the LDAP bind password, and only they roll for a new one.
    const logsIn = (process: PulpProcess) => (process === "api" ? ldap?.runtime : undefined);
    const queue = decision.autoscaling.worker;
    const taskQueueScaler = (
      paused: boolean,
      deployment: pulumi.Input<string>,
      rolloutKey: pulumi.Input<string>,
    ) =>
      new TaskQueueScaler(
        `${name}-worker`,
        {
          namespace,
          identity,
          deployment,
          autoscaling: config.worker.autoscaling!,
          database: database.direct,
          password: database.password,
          paused,
          rolloutKey,
        },
        child,
      );
    // Held at zero (idle, maintenance): KEDA is paused first, so it cannot wake a worker for a waiting task
    // while the Deployment goes to zero; the workers wait for it.
    const heldQueue =
      queue?.paused && config.worker.autoscaling
        ? taskQueueScaler(true, fixedName(identity, "worker"), "held")
        : undefined;

    for (const process of decision.creation) {
      const component = config[process];
      const signingRt = signs(process);
      const ldapRt = logsIn(process);
      const ownHash = signingRt?.hash ?? ldapRt?.hash;
      this.workloads[process] = new Workload(
        `${name}-${process}`,
        {
          namespace,
          identity,
          component: process,
          runsPulp: true,
          replicas: replicas[process],
          autoscaled: autoscaledWorkload(process),
          configHash: ownHash
            ? pulumi.all([configHash, ownHash]).apply(([base, key]) => contentHash({ base, key }))
            : configHash,
          service:
            process === "api"
              ? { port: API_PORT, targetPort: API_PORT }
              : process === "content"
                ? { port: CONTENT_PORT, targetPort: CONTENT_PORT }
                : undefined,
          disruptionBudget: component.podDisruptionBudget,
          topologySpread: component.topologySpread,
          podSpecOverrides: component.podSpecOverrides as PodSpecOverrides,
          podDefaults: everyPod,
          podAnnotations: component.podAnnotations,
          podLabels: identityLabels,
          progressDeadlineSeconds: component.progressDeadlineSeconds,
          podSpec: {
            terminationGracePeriodSeconds: component.terminationGracePeriodSeconds,
            ...(podIdentity ? { serviceAccountName: podIdentity.runtime.serviceAccountName } : {}),
            initContainers: [
              initDirsContainer(runtime),
              ...(trust ? [trust.initContainer(runtime.image)] : []),
              ...(signingRt ? [signingRt.initContainer(runtime.image)] : []),
            ],
            containers: [
              withEnv(
                [...ldapEnv(ldapRt, trust !== undefined), ...metricsEnv(config.metrics)],
                signing(
                  signingRt,
                  trusting(trust, pulpContainer(process, runtime, component.resources, component.probes)),
                ),
              ),
            ],
            volumes: [
              ...pulpVolumes(runtime, component.resources),
              ...(trust?.volumes ?? []),
              ...(signingRt?.volumes ?? []),
            ],
          },
          after: [
            this.migration.job,
            ...(signingRt?.resources ?? []),
            ...decision.waitFor[process].map((p) => this.workloads[p]!.rolledOut),
            ...(process === "worker" && heldQueue ? [heldQueue] : []),
          ],
        },
        child,
      );
    }

    if (queue && config.worker.autoscaling && !heldQueue) {
      const workers = this.workloads.worker!;
      taskQueueScaler(
        false,
        workers.deployment.metadata.name,
        workers.rolledOut.metadata.annotations.apply((a) => a?.[ROLLED_OUT_ANNOTATION] ?? ""),
      );
    }

    if (parts.web) {
      const web = new PulpWeb(
        `${name}-web`,
        {
          namespace,
          identity,
          web: { ...config.web, replicas: replicas.web },
          autoscaled: autoscaledWorkload("web"),
          upstreams: {
            apiHost: decision.backends.api.service,
            apiPort: decision.backends.api.port,
            contentHost: decision.backends.content.service,
            contentPort: decision.backends.content.port,
            contentPathPrefix: config.contentPathPrefix,
          },
          // nginx resolves its upstream names once, at start: an unknown name is fatal. With the content
          // cache, pulp-web rolls only once content is back: its pods keep the copies a stop-the-world
          // serves from, and a new pod starts with none.
          after: [
            this.migration.job,
            ...(["api", "content"] as const).flatMap((p) => this.workloads[p]?.service ?? []),
            ...(config.web.contentCache.enabled && this.workloads.content
              ? [this.workloads.content.rolledOut]
              : []),
          ],
          podDefaults: everyPod,
        },
        child,
      );
      this.workloads.web = web.workload;
    }
    if (parts.ingress) {
      new PulpIngress(
        `${name}-ingress`,
        { namespace, identity, ingress: config.ingress, routes: decision.routes },
        child,
      );
    }

    this.apiUrl = decision.apiUrl;
    this.contentUrl = decision.contentUrl;
    this.serviceNames = Object.fromEntries(
      Object.entries(this.workloads)
        .filter(([, w]) => w?.service)
        .map(([k, w]) => [k, w!.name]),
    );
    this.secretNames = {
      settings: this.settings.secretName,
      secretKey: secrets.secretKey.name,
      dbFieldsEncryption: secrets.dbFieldsKey.name,
      adminPassword: secrets.adminPassword.name,
      databasePassword: database.password.name,
      ...(secrets.tokenKeysSecret ? { containerAuth: secrets.tokenKeysSecret } : {}),
      ...(storage.s3SecretKey ? { s3: storage.s3SecretKey.name } : {}),
      ...(storage.azureConnection ? { azure: storage.azureConnection.name } : {}),
      ...(storage.gcs?.key ? { gcs: storage.gcs.key.name } : {}),
    };
    this.rolledOut = pulumi
      .all(PULP_PROCESSES.map((p) => this.workloads[p]!.rolledOut.metadata.name))
      .apply(() => true);
    recordHistory(
      `${name}-history`,
      {
        namespace,
        identity,
        rolledOut: this.rolledOut,
        deployed: this.deploying,
      },
      child,
    );
    this.registerOutputs({
      namespace: this.namespace,
      apiUrl: this.apiUrl,
      contentUrl: this.contentUrl,
      serviceNames: this.serviceNames,
      secretNames: this.secretNames,
      migrationJobName: this.migrationJobName,
    });
  }
}

/** The records Pulp.history returned: checked against the cluster before anything was registered. */
const checkedHistories = new WeakSet<Deployed>();

/** The value of `o`, or undefined while it is unknown (a preview before what it comes from exists). */
async function knownValue<T>(o: pulumi.Output<T>): Promise<pulumi.Unwrap<T> | undefined> {
  // The SDK's own fields (OutputImpl): `apply` never calls back on an unknown value, so awaiting it would hang.
  const impl = o as unknown as { isKnown: Promise<boolean>; promise(): Promise<pulumi.Unwrap<T>> };
  return (await impl.isKnown) ? impl.promise() : undefined;
}
