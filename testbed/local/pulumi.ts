// `pulumi` for this project, locally: the real CLI and engine, with the program served in this process
// by the Node.js SDK's own language runtime (what the Automation API does for inline programs).
//
// Why: the Go module proxy reachable here does not serve pulumi-language-nodejs, the plugin through which
// the CLI normally starts `node` on a program. Everything else (engine, state, provider, preview JSON,
// exit codes) is the genuine CLI. Usage: npx ts-node -T testbed/local/pulumi.ts <pulumi args...>
// `--program-dir <dir>` (relative to the repository) runs another project, e.g. `--program-dir stacks`;
// the default is the pulp program at the repository root.
import { spawn } from "child_process";
import * as fs from "fs";
import * as path from "path";
import {
  ensureBackend,
  ensurePlugins,
  pulumiEnv,
  REPO,
  runMain,
  STACK,
  stackLocks,
  toolchainBin,
} from "./environment";

/** Commands that run the program; the rest (destroy, stack, config, ...) need only the CLI. */
const RUNS_PROGRAM = new Set(["up", "update", "preview", "refresh"]);

/** Loads and runs the program afresh for the language server (index.ts exports an async function). */
async function program(dir: string): Promise<Record<string, unknown>> {
  for (const id of Object.keys(require.cache)) {
    if (id.startsWith(REPO) && !id.includes(`${path.sep}node_modules${path.sep}`)) delete require.cache[id];
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const main = require(path.join(dir, "index")) as () => Promise<Record<string, unknown>>;
  return main();
}

async function startLanguageServer(dir: string): Promise<{ address: string; stop: () => void }> {
  return serveProgram(() => program(dir), dir);
}

/**
 * A Pulumi language host in this process, serving `run` to the CLI (`--client <address>`): the program
 * runs in this process's event loop. Shared with the config-fix e2e test, which serves its own program.
 */
export async function serveProgram(
  run: () => Promise<unknown>,
  dir = REPO,
): Promise<{ address: string; stop: () => void }> {
  // The program's own @pulumi/pulumi serves it, as the Node.js language host runs a program with its own
  // SDK: a project outside the repository (an installed package's consumer) has a copy of its own, and
  // two copies in one process disagree on the gRPC messages ("Request message serialization failure").
  const sdk = (module: string) => require.resolve(`@pulumi/pulumi/${module}`, { paths: [dir] });
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { LanguageServer } = require(sdk("automation/server"));
  const langrpc = require(sdk("proto/language_grpc_pb"));
  const { grpcChannelOptions } = require(sdk("runtime"));
  // The gRPC library that @pulumi/pulumi itself uses, so the service definitions match.
  const grpc = require(require.resolve("@grpc/grpc-js", { paths: [sdk("runtime")] }));
  /* eslint-enable @typescript-eslint/no-require-imports */
  const server = new grpc.Server(grpcChannelOptions);
  server.addService(langrpc.LanguageRuntimeService, new LanguageServer(run));
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      "127.0.0.1:0",
      grpc.ServerCredentials.createInsecure(),
      (err: Error | null, p: number) => (err ? reject(err) : resolve(p)),
    ),
  );
  return { address: `127.0.0.1:${port}`, stop: () => server.forceShutdown() };
}

/** Splits `--program-dir <dir>` off the CLI's arguments. */
export function programDir(args: string[]): { dir: string; project: string; rest: string[] } {
  const i = args.indexOf("--program-dir");
  if (i < 0) return { dir: REPO, project: "pulp", rest: args };
  const dir = path.resolve(REPO, args[i + 1] ?? "");
  const text = fs.existsSync(path.join(dir, "Pulumi.yaml"))
    ? fs.readFileSync(path.join(dir, "Pulumi.yaml"), "utf8")
    : "";
  const project = /^name:\s*(\S+)/m.exec(text)?.[1];
  if (!project) throw new Error(`--program-dir ${args[i + 1]}: no Pulumi.yaml with a name in ${dir}`);
  return { dir, project, rest: [...args.slice(0, i), ...args.slice(i + 2)] };
}

export async function main(argv: string[]): Promise<number> {
  const { dir, project, rest: args } = programDir(argv);
  const bin = toolchainBin();
  const env = pulumiEnv();
  ensureBackend(env);
  ensurePlugins(env, bin);
  const stackFlag = args.indexOf("--stack");
  for (const lock of stackLocks(stackFlag >= 0 ? args[stackFlag + 1] : STACK, project).filter(
    (l) => l.stale,
  )) {
    // An interrupted run leaves its lock behind and every later run fails on it; say which and how to go on.
    console.error(
      `The stack is locked by pid ${lock.pid} on ${lock.host}, which is no longer running (an interrupted run).\n` +
        `If no other pulumi command is using this stack, remove the lock and run again:\n  rm ${lock.file}`,
    );
  }
  const command = args.find((a) => !a.startsWith("-"));
  // The program runs in this process: give it the environment the CLI would give a program it starts
  // ($KUBECONFIG above all: the stop-the-world step reaches the cluster the provider does through it).
  Object.assign(process.env, env);
  const language = command && RUNS_PROGRAM.has(command) ? await startLanguageServer(dir) : undefined;
  const fullArgs = language ? [...args, `--client=${language.address}`, "--exec-kind", "auto.inline"] : args;
  const child = spawn(path.join(bin, "pulumi"), fullArgs, { cwd: dir, env, stdio: "inherit" });
  const code = await new Promise<number>((resolve) =>
    child.on("exit", (c, signal) => resolve(c ?? (signal ? 1 : 0))),
  );
  language?.stop();
  return code;
}

if (require.main === module) runMain(() => main(process.argv.slice(2)));
