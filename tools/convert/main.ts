// pulp-convert [-f <file>] [--name <pulp>] [-n <namespace>] [--instance <name>] [-o json] [--kubeconfig <file>]
// A pulp-operator Pulp CR, with the Secrets and the ConfigMap it names, as this project's stack config: a bash
// script of `pulumi config set` commands (secrets piped from the operator's Secrets, never shown), or JSON.
// From the cluster (kubectl) by default, or from a YAML file of one or more documents (-f, `-` for stdin).
// Exit 0: converted; 2: converted, and the stack config will need the fixes printed on stderr; 1: nothing
// could be converted (one line, or a list, says why).
import * as fs from "fs";
import { formatProblems } from "../../components/config/problems";
import { runMain, wantsHelp } from "../cli";
import { resolveKube, ToolError } from "../kube";
import { convertPulpCr } from "./convert";
import { ConvertError } from "./operator";
import { fromCluster, fromDocuments, Input, readDocuments } from "./read";
import { keyMapMarkdown, renderJson, renderScript } from "./render";

const USAGE =
  "usage: pulp-convert [-f <file>|-] [--name <pulp>] [-n <namespace>] [--instance <name>] [-o sh|json] [--kubeconfig <file>]\n" +
  "       pulp-convert --key-map   (every pulp-operator field and what it becomes, as Markdown)";

export interface Args {
  file?: string;
  name?: string;
  namespace?: string;
  instance?: string;
  json: boolean;
  kubeconfig?: string;
  keyMap: boolean;
}

export function parseArgs(argv: string[]): Args {
  const args: Args = { json: false, keyMap: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (!v || (v.startsWith("-") && v !== "-")) throw new ToolError(`${a} needs a value; ${USAGE}`);
      return v;
    };
    if (a === "-f" || a === "--file") args.file = value();
    else if (a === "--name") args.name = value();
    else if (a === "-n" || a === "--namespace") args.namespace = value();
    else if (a === "--instance") args.instance = value();
    else if (a === "--kubeconfig") args.kubeconfig = value();
    else if (a === "--key-map") args.keyMap = true;
    else if (a === "-o" || a === "--output") {
      const v = value();
      if (v !== "json" && v !== "sh") throw new ToolError(`-o ${v}: json or sh; ${USAGE}`);
      args.json = v === "json";
    } else throw new ToolError(`unexpected ${a}; ${USAGE}`);
  }
  return args;
}

/** Reads the input, converts it and writes the script or the JSON; the exit code. */
export function convert(args: Args, out: (s: string) => void, err: (s: string) => void): number {
  let input: Input;
  let source: string;
  if (args.file !== undefined) {
    const where = args.file === "-" ? "stdin" : args.file;
    let text: string;
    try {
      text = fs.readFileSync(args.file === "-" ? 0 : args.file, "utf8");
    } catch (e) {
      throw new ToolError(`cannot read ${where}: ${(e as Error).message}`);
    }
    input = fromDocuments(readDocuments(text, where), where, args.name, args.namespace);
    source = `${input.cr.metadata?.namespace}/${input.cr.metadata?.name} (${where})`;
  } else {
    const namespace = args.namespace ?? "pulp";
    input = fromCluster(resolveKube(args.kubeconfig), namespace, args.name);
    source = `${namespace}/${input.cr.metadata?.name}`;
  }
  let conversion;
  try {
    conversion = convertPulpCr(input.cr, input.secrets, {
      configMaps: input.configMaps,
      backups: input.backups,
      restores: input.restores,
      instanceName: args.instance,
    });
  } catch (e) {
    if (e instanceof ConvertError) throw new ToolError(e.message);
    throw e;
  }
  const namespace = input.cr.metadata?.namespace ?? "";
  out(
    args.json
      ? renderJson(conversion)
      : renderScript(conversion, { source, namespace, kubeconfig: args.kubeconfig }),
  );
  if (conversion.problems.length === 0) return 0;
  err(
    `${formatProblems(conversion.problems, "run the fixes after the script, before pulumi preview")}\n` +
      "(the converted config, as the stack will hold it once the script has run)\n",
  );
  return 2;
}

export async function main(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const args = parseArgs(argv);
  if (args.keyMap) {
    process.stdout.write(keyMapMarkdown());
    return 0;
  }
  return convert(
    args,
    (s) => process.stdout.write(s),
    (s) => process.stderr.write(s),
  );
}

if (require.main === module) runMain(() => main(process.argv.slice(2)));
