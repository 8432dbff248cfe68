#!/usr/bin/env node
// STAND-IN CONTROLLERS FOR THE LOCAL TEST CLUSTER ONLY. Not part of the product, never deployed.
//
// The Pulumi program creates a CloudNativePG `Cluster` and CDI `DataVolume`s. The local cluster
// (testbed/cluster/cluster.sh) has no real operators and no container runtime, so this process
// imitates the visible effects of those operators closely enough for end-to-end tests:
//
//   postgresql.cnpg.io/v1 Cluster (not Ready yet): creates Secret <name>-app (unless
//     spec.bootstrap.initdb.secret names one), <name>-superuser when enableSuperuserAccess is true,
//     <name>-ca (ca.crt and ca.key: placeholders, no certificate; nothing here serves TLS),
//     Services <name>-rw/-ro/-r, all owned by the Cluster; then sets status Ready=True,
//     phase "Cluster in healthy state", instances/readyInstances = spec.instances.
//   cdi.kubevirt.io/v1beta1 DataVolume (not Succeeded yet): creates the PVC of the same name
//     (from spec.pvc or spec.storage), owned by the DataVolume; once it is Bound, sets phase
//     Succeeded, progress 100.0%. If a ResourceQuota on requests.storage leaves less than twice the
//     requested size free (the importer's scratch space), leaves phase Pending with Running=False
//     reason ErrExceededQuota, like the real importer, and creates nothing.
//
// Clusters are left alone once the real CloudNativePG operator runs (testbed/cnpg), DataVolumes once the
// real CDI runs (testbed/cdi). Nothing is imported and no database runs. Polls through the kubectl
// binary every second (no npm dependencies); one log line per action.
//
//   node standin-controllers.mjs --kubectl=PATH --kubeconfig=PATH [--cache-dir=DIR] [--interval-ms=1000]

import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";

const { values: opts } = parseArgs({
  options: {
    kubectl: { type: "string", default: "kubectl" },
    kubeconfig: { type: "string" },
    "cache-dir": { type: "string" },
    "interval-ms": { type: "string", default: "1000" },
  },
});

const log = (msg) => console.log(`${new Date().toISOString()} ${msg}`);

function kubectl(args, input) {
  const base = [];
  if (opts.kubeconfig) base.push(`--kubeconfig=${opts.kubeconfig}`);
  if (opts["cache-dir"]) base.push(`--cache-dir=${opts["cache-dir"]}`);
  return new Promise((resolve, reject) => {
    const child = spawn(opts.kubectl, [...base, ...args], { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr: stderr.trim() }));
    child.stdin.end(input ?? "");
  });
}

async function getJson(args) {
  const r = await kubectl([...args, "-o", "json"]);
  if (r.code !== 0) {
    if (/NotFound|not found/.test(r.stderr)) return null;
    throw new Error(`kubectl ${args.join(" ")}: ${r.stderr}`);
  }
  return JSON.parse(r.stdout);
}

// Returns true when created, false when it already existed.
async function createIfMissing(obj) {
  const r = await kubectl(["create", "-f", "-"], JSON.stringify(obj));
  if (r.code === 0) return true;
  if (/AlreadyExists|already exists/.test(r.stderr)) return false;
  throw new Error(`create ${obj.kind} ${obj.metadata.namespace}/${obj.metadata.name}: ${r.stderr}`);
}

async function patchStatus(resource, ns, name, status) {
  const r = await kubectl([
    "patch",
    resource,
    name,
    "-n",
    ns,
    "--subresource=status",
    "--type=merge",
    "-p",
    JSON.stringify({ status }),
  ]);
  if (r.code !== 0) throw new Error(`patch status of ${resource} ${ns}/${name}: ${r.stderr}`);
}

const ownerRef = (obj) => ({
  apiVersion: obj.apiVersion,
  kind: obj.kind,
  name: obj.metadata.name,
  uid: obj.metadata.uid,
  controller: true,
  blockOwnerDeletion: true,
});

const now = () => new Date().toISOString().replace(/\.\d+Z$/, "Z");

// Kubernetes resource quantities ("10Gi", "500M", "1e3") as a number of base units.
const SUFFIX = {
  "": 1,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
function parseQuantity(q) {
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$/.exec(
    String(q).trim(),
  );
  if (!m) throw new Error(`invalid quantity ${JSON.stringify(q)}`);
  const n = Number(m[1]);
  return m[2] ? n * 10 ** Number(m[2].slice(1)) : n * SUFFIX[m[3] ?? ""];
}

// --- CloudNativePG Cluster ----------------------------------------------------------------------

const isReady = (c) => (c.status?.conditions ?? []).some((x) => x.type === "Ready" && x.status === "True");

/** status.pgDataImageInfo for an image whose tag starts with its major ("17", "17.6-system-trixie"). */
function dataImageInfo(image) {
  const major = /:(\d+)(\.\d+)*(-[A-Za-z0-9.-]+)?$/.exec(image ?? "")?.[1];
  return major ? { pgDataImageInfo: { image, majorVersion: Number(major) } } : {};
}

async function reconcileCluster(c) {
  const ns = c.metadata.namespace;
  const name = c.metadata.name;
  const id = `Cluster ${ns}/${name}`;
  if (c.metadata.deletionTimestamp) return;
  if (isReady(c)) return;

  const initdb = c.spec?.bootstrap?.initdb ?? {};
  const user = initdb.owner ?? "app";
  const dbname = initdb.database ?? "app";
  const instances = c.spec?.instances ?? 1;
  const labels = { "cnpg.io/cluster": name };
  const meta = (n) => ({ name: n, namespace: ns, labels, ownerReferences: [ownerRef(c)] });

  const authSecret = (n, username, db) => {
    const password = randomBytes(24).toString("base64url");
    const host = `${name}-rw`;
    return {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { ...meta(n), labels: { ...labels, "cnpg.io/reload": "true" } },
      type: "kubernetes.io/basic-auth",
      stringData: {
        username,
        user: username,
        password,
        host,
        port: "5432",
        dbname: db,
        uri: `postgresql://${username}:${password}@${host}.${ns}:5432/${db}`,
        "jdbc-uri": `jdbc:postgresql://${host}.${ns}:5432/${db}?password=${password}&user=${username}`,
        pgpass: `${host}:5432:${db}:${username}:${password}\n`,
      },
    };
  };
  if (!initdb.secret?.name) {
    if (await createIfMissing(authSecret(`${name}-app`, user, dbname)))
      log(`${id}: created Secret ${name}-app`);
  }
  const ca = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { ...meta(`${name}-ca`), labels: { ...labels, "cnpg.io/reload": "true" } },
    type: "Opaque",
    stringData: { "ca.crt": "stand-in: no certificate\n", "ca.key": "stand-in: no key\n" },
  };
  if (await createIfMissing(ca)) log(`${id}: created Secret ${name}-ca`);
  if (c.spec?.enableSuperuserAccess === true) {
    if (await createIfMissing(authSecret(`${name}-superuser`, "postgres", "*")))
      log(`${id}: created Secret ${name}-superuser`);
  }
  const roles = { rw: "primary", ro: "replica", r: undefined };
  for (const [suffix, role] of Object.entries(roles)) {
    const svc = {
      apiVersion: "v1",
      kind: "Service",
      metadata: meta(`${name}-${suffix}`),
      spec: {
        type: "ClusterIP",
        selector: role
          ? { "cnpg.io/cluster": name, "cnpg.io/instanceRole": role }
          : { "cnpg.io/cluster": name },
        ports: [{ name: "postgres", port: 5432, targetPort: 5432, protocol: "TCP" }],
      },
    };
    if (await createIfMissing(svc)) log(`${id}: created Service ${name}-${suffix}`);
  }

  await patchStatus("clusters.postgresql.cnpg.io", ns, name, {
    phase: "Cluster in healthy state",
    instances,
    readyInstances: instances,
    writeService: `${name}-rw`,
    readService: `${name}-r`,
    currentPrimary: `${name}-1`,
    targetPrimary: `${name}-1`,
    // As the operator reports the data directory's image (the program awaits its major, database.ts).
    ...dataImageInfo(c.spec?.imageName),
    conditions: [
      {
        type: "Ready",
        status: "True",
        reason: "ClusterIsReady",
        message: "Cluster is Ready",
        lastTransitionTime: now(),
        observedGeneration: c.metadata.generation,
      },
    ],
  });
  log(`${id}: status Ready=True (${instances} instances)`);
}

// --- CDI DataVolume -----------------------------------------------------------------------------

const isSucceeded = (dv) => dv.status?.phase === "Succeeded";

function dvCondition(type, status, reason, message) {
  const t = now();
  return { type, status, reason, message, lastHeartbeatTime: t, lastTransitionTime: t };
}

// Patches only when phase or a condition's status/reason changed, so waiting does not churn.
async function setDvStatus(dv, status, what) {
  const cur = dv.status ?? {};
  const key = (s) =>
    JSON.stringify([s.phase, (s.conditions ?? []).map((c) => [c.type, c.status, c.reason, c.message])]);
  if (key(cur) === key(status)) return;
  await patchStatus("datavolumes.cdi.kubevirt.io", dv.metadata.namespace, dv.metadata.name, status);
  log(`DataVolume ${dv.metadata.namespace}/${dv.metadata.name}: ${what}`);
}

// The first ResourceQuota on storage requests that leaves less than 2x size free, as a message.
async function quotaProblem(ns, claimName, size, storageClass) {
  const quotas = (await getJson(["get", "resourcequotas", "-n", ns]))?.items ?? [];
  const keys = ["requests.storage"];
  if (storageClass) keys.push(`${storageClass}.storageclass.storage.k8s.io/requests.storage`);
  const need = 2 * parseQuantity(size);
  for (const q of quotas) {
    for (const k of keys) {
      const hard = q.spec?.hard?.[k];
      if (hard === undefined) continue;
      const used = q.status?.used?.[k] ?? "0";
      if (parseQuantity(hard) - parseQuantity(used) < need) {
        return (
          `persistentvolumeclaims "${claimName}-scratch" is forbidden: exceeded quota: ${q.metadata.name}, ` +
          `requested: ${k}=${size} (x2 with scratch space), used: ${k}=${used}, limited: ${k}=${hard}`
        );
      }
    }
  }
  return null;
}

async function reconcileDataVolume(dv) {
  const ns = dv.metadata.namespace;
  const name = dv.metadata.name;
  if (dv.metadata.deletionTimestamp || isSucceeded(dv)) return;

  const spec = dv.spec?.pvc ?? dv.spec?.storage ?? {};
  const size = spec.resources?.requests?.storage;
  if (!size) {
    await setDvStatus(
      dv,
      {
        phase: "Pending",
        conditions: [
          dvCondition(
            "Bound",
            "False",
            "ErrClaimNotValid",
            "spec.pvc or spec.storage has no resources.requests.storage",
          ),
          dvCondition("Ready", "False", "ErrClaimNotValid", ""),
          dvCondition("Running", "False", "ErrClaimNotValid", ""),
        ],
      },
      "Pending: no storage size in spec",
    );
    return;
  }

  let pvc = await getJson(["get", "pvc", name, "-n", ns]);
  if (!pvc) {
    const problem = await quotaProblem(ns, name, size, spec.storageClassName);
    if (problem) {
      await setDvStatus(
        dv,
        {
          phase: "Pending",
          progress: "N/A",
          conditions: [
            dvCondition("Bound", "False", "Pending", `PVC ${name} Pending`),
            dvCondition("Ready", "False", "ErrExceededQuota", problem),
            dvCondition("Running", "False", "ErrExceededQuota", problem),
          ],
        },
        `Pending, ErrExceededQuota: ${problem}`,
      );
      return;
    }
    pvc = {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: {
        name,
        namespace: ns,
        labels: { app: "containerized-data-importer", "app.kubernetes.io/component": "storage" },
        ownerReferences: [ownerRef(dv)],
      },
      spec: {
        accessModes: spec.accessModes?.length ? spec.accessModes : ["ReadWriteOnce"],
        resources: { requests: { storage: size } },
        ...(spec.storageClassName ? { storageClassName: spec.storageClassName } : {}),
        ...(spec.volumeMode ? { volumeMode: spec.volumeMode } : {}),
        ...(spec.selector ? { selector: spec.selector } : {}),
      },
    };
    if (await createIfMissing(pvc))
      log(`DataVolume ${ns}/${name}: created PVC ${name} (${size}, ${pvc.spec.accessModes})`);
    return; // next poll sees whether it got Bound
  }

  if (pvc.status?.phase !== "Bound") {
    await setDvStatus(
      dv,
      {
        phase: "Pending",
        claimName: name,
        conditions: [
          dvCondition("Bound", "False", "Pending", `PVC ${name} Pending`),
          dvCondition("Ready", "False", "Pending", ""),
          dvCondition("Running", "False", "Pending", ""),
        ],
      },
      `Pending: waiting for PVC ${name} to be Bound`,
    );
    return;
  }
  await setDvStatus(
    dv,
    {
      phase: "Succeeded",
      progress: "100.0%",
      claimName: name,
      conditions: [
        dvCondition("Bound", "True", "Bound", `PVC ${name} Bound`),
        dvCondition("Ready", "True", "", ""),
        dvCondition("Running", "False", "Completed", "Import Complete"),
      ],
    },
    `Succeeded (PVC ${name} Bound)`,
  );
}

// --- loop ---------------------------------------------------------------------------------------

const lastError = new Map(); // an error repeated every poll is logged once
async function guarded(id, fn) {
  try {
    await fn();
    lastError.delete(id);
  } catch (e) {
    const msg = String(e.message ?? e).split("\n")[0];
    if (lastError.get(id) !== msg) log(`${id}: error: ${msg}`);
    lastError.set(id, msg);
  }
}

let stopping = false;
for (const sig of ["SIGTERM", "SIGINT"]) {
  process.on(sig, () => {
    stopping = true;
    log("standin: stopping");
    process.exit(0);
  });
}

// Once the real CloudNativePG operator is installed (testbed/cnpg, on the real node), every Cluster is
// its own: a stand-in reporting Ready beside it would hide a real database that never started.
async function realCnpgInstalled() {
  const list = await getJson([
    "get",
    "deployments",
    "-n",
    "cnpg-system",
    "-l",
    "app.kubernetes.io/name=cloudnative-pg",
  ]);
  return (list?.items ?? []).length > 0;
}

// Once the real CDI is installed (testbed/cdi, on the real node), every DataVolume is its own: both
// would act on the same DataVolume, and a faked Succeeded would hide an import that never ran. The
// operator's Deployment counts, not only the controller's: it comes first, so no DataVolume is faked
// while the operator is still starting the controller.
async function realCdiInstalled() {
  const list = await getJson(["get", "deployments", "-n", "cdi"]);
  return (list?.items ?? []).some((d) => ["cdi-operator", "cdi-deployment"].includes(d.metadata.name));
}

const interval = Number(opts["interval-ms"]);
let ready = false;
let realCnpg = false;
let realCdi = false;
while (!stopping) {
  await guarded("poll", async () => {
    const list = await getJson([
      "get",
      "clusters.postgresql.cnpg.io,datavolumes.cdi.kubevirt.io",
      "--all-namespaces",
    ]);
    if (!ready) {
      log(`standin: ready, polling CNPG Clusters and CDI DataVolumes every ${interval}ms`);
      ready = true;
    }
    const items = list?.items ?? [];
    // Asked only when an object waits for a controller: no extra call while every Cluster is Ready
    // and every DataVolume Succeeded.
    const waiting = (kind, done) =>
      items.some((i) => i.kind === kind && !i.metadata.deletionTimestamp && !done(i));
    if (waiting("Cluster", isReady) && (await realCnpgInstalled()) !== realCnpg) {
      realCnpg = !realCnpg;
      log(
        `standin: the real CloudNativePG operator is ${realCnpg ? "installed: leaving Clusters to it" : "gone"}`,
      );
    }
    if (waiting("DataVolume", isSucceeded) && (await realCdiInstalled()) !== realCdi) {
      realCdi = !realCdi;
      log(`standin: the real CDI is ${realCdi ? "installed: leaving DataVolumes to it" : "gone"}`);
    }
    for (const item of items) {
      const id = `${item.kind} ${item.metadata.namespace}/${item.metadata.name}`;
      if (item.kind === "Cluster" && !realCnpg) await guarded(id, () => reconcileCluster(item));
      else if (item.kind === "DataVolume" && !realCdi) await guarded(id, () => reconcileDataVolume(item));
    }
  });
  await sleep(interval);
}
