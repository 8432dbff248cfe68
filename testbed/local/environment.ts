// Where everything local lives, and the environment that makes the real Pulumi CLI work offline against
// the embedded cluster: a file:// state backend, a passphrase secrets provider, plugins from the
// toolchain cache, no update checks or plugin downloads.
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

export const REPO = path.resolve(__dirname, "../..");
export const STATE = process.env.PULP_STATE_DIR ?? path.join(REPO, ".state");
export const KUBECONFIG = path.join(STATE, "cluster", "kubeconfig");
/** The real node's containerd, where local images are imported. */
export const NODE_CONTAINERD = path.join(STATE, "cluster", "node", "run", "containerd.sock");
/**
 * The real node's bridge address (testbed/node/lib.sh BRIDGE_IP): the host, as pods see it, and where
 * kube-proxy opens NodePorts (its nodePortAddresses), so the host reaches a NodePort Service there.
 */
export const NODE_ADDRESS = "10.77.0.1";
export const STACK = process.env.PULP_STACK ?? "dev";
/** The dev stack's passphrase: local state only, so a fixed default is fine; override it to share state. */
export const PASSPHRASE = process.env.PULUMI_CONFIG_PASSPHRASE ?? "pulp-local-dev";

/** The toolchain's bin directory (built by testbed/toolchain.sh). */
export function toolchainBin(): string {
  return execFileSync("bash", [path.join(REPO, "testbed/toolchain.sh"), "--print"], {
    encoding: "utf8",
  }).trim();
}

export function pulumiEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    KUBECONFIG,
    PULUMI_HOME: path.join(STATE, "pulumi-home"),
    PULUMI_BACKEND_URL: `file://${path.join(STATE, "backend")}`,
    PULUMI_CONFIG_PASSPHRASE: PASSPHRASE,
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_SKIP_CONFIRMATIONS: "true",
    PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK: "true",
    PULUMI_DIY_BACKEND_NO_LEGACY_WARNING: "true",
  };
}

/** The provider plugin the npm SDK asks for, installed from the toolchain's build (never downloaded). */
export function ensurePlugins(env: NodeJS.ProcessEnv, bin: string): void {
  // The dynamic-provider plugin is a script in @pulumi/pulumi; the CLI finds it beside itself.
  const dynamic = path.join(bin, "pulumi-resource-pulumi-nodejs");
  if (!fs.existsSync(dynamic)) {
    fs.copyFileSync(path.join(REPO, "node_modules/@pulumi/pulumi/pulumi-resource-pulumi-nodejs"), dynamic);
    fs.chmodSync(dynamic, 0o755);
  }
  const version = JSON.parse(
    fs.readFileSync(path.join(REPO, "node_modules/@pulumi/kubernetes/package.json"), "utf8"),
  ).version as string;
  const dir = path.join(env.PULUMI_HOME!, "plugins", `resource-kubernetes-v${version}`);
  if (fs.existsSync(path.join(dir, "pulumi-resource-kubernetes"))) return;
  const binary = path.join(bin, "pulumi-resource-kubernetes");
  if (!fs.existsSync(binary)) {
    throw new Error(`${binary} is missing: run \`npm run toolchain\` first`);
  }
  execFileSync(
    path.join(bin, "pulumi"),
    ["plugin", "install", "resource", "kubernetes", version, "--file", binary],
    {
      env,
      stdio: "inherit",
    },
  );
}

export function ensureBackend(env: NodeJS.ProcessEnv): void {
  fs.mkdirSync(path.join(STATE, "backend"), { recursive: true });
  fs.mkdirSync(env.PULUMI_HOME!, { recursive: true });
}

export interface StackLock {
  file: string;
  pid: number;
  host: string;
  /** The process that took it is gone: an interrupted run left it behind. */
  stale: boolean;
}

/** Lock files of a stack in the local backend (the CLI's own layout: .pulumi/locks/<org>/<project>/<stack>). */
export function stackLocks(stack: string, project = "pulp"): StackLock[] {
  const dir = path.join(STATE, "backend", ".pulumi", "locks", "organization", project, stack);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => {
      const file = path.join(dir, f);
      const lock = JSON.parse(fs.readFileSync(file, "utf8")) as { pid: number; hostname: string };
      return {
        file,
        pid: lock.pid,
        host: lock.hostname,
        stale: lock.hostname === os.hostname() && !alive(lock.pid),
      };
    });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The test bed's scripts exit the way the shipped tools do. */
export { runMain } from "../../tools/cli";
