#!/usr/bin/env bash
# Smoke test of the local cluster (run testbed/cluster/cluster.sh up first): PodSecurity admission,
# scheduling onto kwok nodes (tainted kwok.x-k8s.io/node=fake:NoSchedule: pods here tolerate it and
# select pulp-testbed/node-kind=kwok), hostpath storage, workload controllers, and the stand-in CNPG/CDI
# controllers. One line per check; stops at the first failure and shows what it saw.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
# shellcheck source=test/e2e/cluster/checks.sh
source "$HERE/checks.sh"
STATE=$(realpath -m "${PULP_STATE_DIR:-$REPO/.state}")
KCFG=$STATE/cluster/kubeconfig
BIN=$(bash "$REPO/testbed/toolchain.sh" --print)
[[ -f "$KCFG" ]] || { echo "smoke: no cluster ($KCFG missing); run: bash testbed/cluster/cluster.sh up" >&2; exit 1; }
k() { "$BIN/kubectl" --kubeconfig "$KCFG" --cache-dir "$STATE/cluster/kubectl-cache" "$@"; }

NS=smoke-$$-$RANDOM
QNS=$NS-quota
cleanup() { k delete namespace "$NS" "$QNS" --ignore-not-found --wait=false >/dev/null 2>&1 || true; }
trap cleanup EXIT

START=$EPOCHREALTIME

jp() { k -n "$NS" get "$1" -o "jsonpath=$2"; } # resource, jsonpath
is() { [[ $(jp "$1" "$2") == "$3" ]]; }      # resource, jsonpath, expected value
events() { k -n "${1:-$NS}" get events --sort-by=.lastTimestamp | tail -n 15; }

# --- namespace and PodSecurity admission ---------------------------------------------------------

t0=$EPOCHREALTIME
restricted_namespace "$NS"
pass "namespace $NS (enforce=restricted) created" "$t0"
# Pods are refused until the ServiceAccount controller has made `default`.
check "ServiceAccount $NS/default created" 30 "k -n $NS get sa" -- k -n "$NS" get serviceaccount default

pod_yaml() { # name, privileged?
  local sc='securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}'
  [[ $2 == true ]] && sc='securityContext: {privileged: true}'
  cat <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: $NS
spec:
  terminationGracePeriodSeconds: 1 # the namespace controller re-checks after about half of it
  nodeSelector: {pulp-testbed/node-kind: kwok}
  tolerations: [{key: kwok.x-k8s.io/node, operator: Equal, value: fake, effect: NoSchedule}]
  securityContext: {runAsNonRoot: true, runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}
  containers:
    - name: app
      image: registry.invalid/smoke:1 # never pulled: kwok runs no containers
      $sc
EOF
}

t0=$EPOCHREALTIME
if out=$(pod_yaml privileged true | k apply -f - 2>&1); then
  fail "privileged pod rejected by PodSecurity" "it was admitted: $out"
fi
grep -q 'violates PodSecurity "restricted' <<<"$out" || fail "privileged pod rejected by PodSecurity" "rejected, but not by PodSecurity: $out"
pass "privileged pod rejected by PodSecurity (restricted)" "$t0"

t0=$EPOCHREALTIME
out=$(pod_yaml restricted false | k apply -f - 2>&1) || fail "restricted-compliant pod admitted" "$out"
[[ $out != *Warning* ]] || fail "restricted-compliant pod admitted without warnings" "$out"
pass "restricted-compliant pod admitted" "$t0"
pod_running() {
  is pod/restricted '{.status.conditions[?(@.type=="Ready")].status}' True &&
    [[ $(jp pod/restricted '{.spec.nodeName}') == kwok-node-* && -n $(jp pod/restricted '{.status.podIP}') ]]
}
check "pod Ready on a kwok node with a pod IP" 60 "k -n $NS get pod restricted -o yaml; events" -- pod_running

# --- storage --------------------------------------------------------------------------------------

k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: shared, namespace: $NS}
spec:
  accessModes: [ReadWriteMany]
  resources: {requests: {storage: 1Gi}}
EOF
check "ReadWriteMany PVC Bound (default StorageClass standard)" 60 "k -n $NS describe pvc shared" -- \
  is pvc/shared '{.status.phase}' Bound
[[ $(jp pvc/shared '{.spec.storageClassName}') == standard ]] || fail "PVC got StorageClass standard" "$(jp pvc/shared '{.spec}')"

# --- Deployment, Service, Job -----------------------------------------------------------------------

k apply -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: $NS}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      nodeSelector: {pulp-testbed/node-kind: kwok}
      tolerations: [{key: kwok.x-k8s.io/node, operator: Equal, value: fake, effect: NoSchedule}]
      securityContext: {runAsNonRoot: true, runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}
      topologySpreadConstraints:
        - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}
      containers:
        - name: web
          image: registry.invalid/web:1
          ports: [{containerPort: 8080, name: http}]
          securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
          volumeMounts: [{name: shared, mountPath: /data}]
      volumes: [{name: shared, persistentVolumeClaim: {claimName: shared}}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: $NS}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: http}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: $NS}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {pulp-testbed/node-kind: kwok}
      tolerations: [{key: kwok.x-k8s.io/node, operator: Equal, value: fake, effect: NoSchedule}]
      securityContext: {runAsNonRoot: true, runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}
      containers:
        - name: once
          image: registry.invalid/once:1
          securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
EOF
deploy_available() {
  is deploy/web '{.status.conditions[?(@.type=="Available")].status}' True && is deploy/web '{.status.readyReplicas}' 3
}
check "Deployment web Available (3/3)" 60 "k -n $NS get deploy,rs,pods -o wide; events" -- deploy_available
zones=$(for n in $(k -n "$NS" get pods -l app=web -o jsonpath='{.items[*].spec.nodeName}'); do
  k get node "$n" -o jsonpath='{.metadata.labels.topology\.kubernetes\.io/zone}{"\n"}'
done | sort -u | tr '\n' ' ')
[[ $zones == "zone-a zone-b " ]] || fail "Deployment pods spread over zone-a and zone-b" "zones: $zones"
pass "Deployment pods spread over zone-a and zone-b" "$EPOCHREALTIME"
ready_endpoints() {
  local n
  n=$(k -n "$NS" get endpointslices -l kubernetes.io/service-name=web \
    -o jsonpath='{range .items[*].endpoints[?(@.conditions.ready==true)]}{.addresses[0]}{"\n"}{end}' | grep -c .)
  ((n == 3))
}
check "Service web has 3 ready endpoints" 60 "k -n $NS get endpointslices -o yaml" -- ready_endpoints
check "Job once Complete" 60 "k -n $NS get job,pods -o wide; events" -- \
  is job/once '{.status.conditions[?(@.type=="Complete")].status}' True

# --- stand-in CNPG and CDI ------------------------------------------------------------------------
# The stand-in leaves every Cluster to the real operator once testbed/cnpg has installed it.
if [[ -n $(k get deployments -n cnpg-system -l app.kubernetes.io/name=cloudnative-pg -o name 2>/dev/null) ]]; then
  fail "stand-in CNPG can be checked" "the real CloudNativePG operator runs in this cluster (testbed/cnpg); check the stand-in on a fresh one: npm run cluster:down && npm run cluster:up && npm run test:cluster-smoke"
fi

k apply -f - >/dev/null <<EOF
apiVersion: postgresql.cnpg.io/v1
kind: Cluster
metadata:
  name: db
  namespace: $NS
  annotations: {pulumi.com/waitFor: condition=Ready}
spec:
  instances: 2
  storage: {size: 1Gi}
  bootstrap: {initdb: {database: pulp, owner: pulp}}
---
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata: {name: disk, namespace: $NS}
spec:
  source: {blank: {}}
  storage:
    accessModes: [ReadWriteMany]
    resources: {requests: {storage: 2Gi}}
EOF
check "CNPG Cluster db Ready" 30 "k -n $NS get clusters.postgresql.cnpg.io db -o yaml; tail -n 20 $STATE/cluster/logs/standin-controllers.log" -- \
  is clusters.postgresql.cnpg.io/db '{.status.conditions[?(@.type=="Ready")].status}' True
t0=$EPOCHREALTIME
got=$(k -n "$NS" get secret db-app -o go-template='{{.type}} {{.data.username | base64decode}} {{.data.dbname | base64decode}} {{.data.uri | base64decode}}' 2>&1) ||
  fail "Secret db-app exists" "$got"
[[ $got =~ ^kubernetes.io/basic-auth\ pulp\ pulp\ postgresql://pulp:[^@]+@db-rw\.$NS:5432/pulp$ ]] ||
  fail "Secret db-app has username, dbname and uri" "$got"
jp service/db-rw '{.spec.ports[0].port}' | grep -qx 5432 || fail "Service db-rw on port 5432" "$(k -n "$NS" get svc 2>&1)"
pass "Secret db-app (basic-auth, owner pulp, db pulp, uri) and Service db-rw" "$t0"

check "DataVolume disk Succeeded" 60 "k -n $NS get datavolumes.cdi.kubevirt.io disk -o yaml; tail -n 20 $STATE/cluster/logs/standin-controllers.log" -- \
  is datavolumes.cdi.kubevirt.io/disk '{.status.phase}' Succeeded
got=$(jp pvc/disk '{.status.phase} {.spec.accessModes[0]} {.spec.resources.requests.storage} {.metadata.ownerReferences[0].kind}' 2>&1) || true
[[ $got == "Bound ReadWriteMany 2Gi DataVolume" ]] || fail "PVC disk Bound, RWX, 2Gi, owned by the DataVolume" "$got"
pass "PVC disk Bound, ReadWriteMany, 2Gi, owned by the DataVolume" "$EPOCHREALTIME"

# Quota: 3Gi left, 2Gi requested needs 4Gi with scratch space.
k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: $QNS}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: storage, namespace: $QNS}
spec: {hard: {requests.storage: 3Gi}}
---
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata: {name: big, namespace: $QNS}
spec:
  source: {blank: {}}
  storage: {resources: {requests: {storage: 2Gi}}}
EOF
over_quota() {
  [[ $(k -n "$QNS" get datavolumes.cdi.kubevirt.io big \
    -o jsonpath='{.status.phase} {.status.conditions[?(@.type=="Running")].reason}') == "Pending ErrExceededQuota" ]]
}
check "DataVolume over quota: Pending, Running=False ErrExceededQuota" 30 "k -n $QNS get datavolumes.cdi.kubevirt.io big -o yaml" -- over_quota
if k -n "$QNS" get pvc big >/dev/null 2>&1; then fail "no PVC for the DataVolume over quota" "$(k -n "$QNS" get pvc big -o yaml)"; fi
pass "no PVC created for the DataVolume over quota" "$EPOCHREALTIME"

# --- teardown -------------------------------------------------------------------------------------

k delete namespace "$NS" "$QNS" --wait=false >/dev/null
namespaces_gone() { [[ -z $(k get namespace "$NS" "$QNS" --ignore-not-found -o name) ]]; }
check "namespaces deleted (pods finalized, PVCs and PVs released)" 120 "k get ns $NS $QNS -o yaml; k get pv" -- namespaces_gone
trap - EXIT
echo "smoke: all checks passed in $(since "$START")"
