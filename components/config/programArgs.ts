// The config as a program passes it (`parseArgs({...})`) rather than as `pulp:` stack config: the same
// schema and rules (parseConfig), and every problem restated in the program's terms: the argument path
// (`config.api.replicas`, `secrets.adminPassword`) and a fix that says what to pass, instead of the
// `pulumi config` command that fixes a stack.
import { ConfigError, ConfigProblem, CONFIG_NAMESPACE, formatProblems } from "./problems";
import { parseConfig, PulpConfig } from "./parse";
import { SECRET_NAMES, SecretName } from "./rules";
import { decode } from "./load";

/** Validates a config object a program builds; throws ArgsError (every problem, in argument terms). */
export function parseArgs(raw: Record<string, unknown>, secrets: readonly SecretName[] = []): PulpConfig {
  try {
    return parseConfig(
      raw,
      new Set(secrets),
      {},
      undefined,
      (problems, consequence) => new ArgsError(problems.map(forProgram), consequence),
    );
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    throw new ArgsError(e.problems.map(forProgram));
  }
}

/** Every problem with a program's arguments. Printed by Pulumi without a stack trace. */
export class ArgsError extends Error {
  readonly __pulumiRunError = true;
  constructor(
    readonly problems: ConfigProblem[],
    consequence?: string,
  ) {
    super(
      formatProblems(problems, consequence).replace(
        /^Invalid Pulp stack config/,
        "Invalid Pulp arguments (parseArgs)",
      ),
    );
    this.name = "ArgsError";
  }
}

/** A stack config key as the argument path: `pulp:api.replicas` -> `config.api.replicas`. */
export function argPath(key: string): string {
  const path = key.startsWith(`${CONFIG_NAMESPACE}:`) ? key.slice(CONFIG_NAMESPACE.length + 1) : key;
  return (SECRET_NAMES as readonly string[]).includes(path) ? `secrets.${path}` : `config.${path}`;
}

/** The problem restated for a program: its key as an argument path, its fixes as what to pass. */
export function forProgram(problem: ConfigProblem): ConfigProblem {
  return {
    ...problem,
    key: argPath(problem.key),
    fix: programFix(problem.fix),
    ...(problem.alternatives ? { alternatives: problem.alternatives.map(programFix) } : {}),
  };
}

/**
 * `pulumi config set|rm` commands as what a program passes instead; anything else (a kubectl command, a
 * command with a shell substitution) as it is.
 */
export function programFix(fix: string): string {
  const words = shellWords(fix);
  if (!words || words[0] !== "pulumi" || words[1] !== "config") return fix;
  const flags = words.slice(3).filter((w) => w.startsWith("--"));
  const rest = words.slice(3).filter((w, i, all) => !w.startsWith("--") && all[i - 1] !== "--type");
  const [key, value] = rest;
  if (!key?.startsWith(`${CONFIG_NAMESPACE}:`)) return fix;
  const path = argPath(key);
  if (words[2] === "rm") return `leave out ${path}`;
  if (words[2] !== "set") return fix;
  if (flags.includes("--secret")) return `pass ${path} (any Input<string>, such as a secret output)`;
  if (value === undefined) return fix;
  const type = words[words.indexOf("--type") + 1];
  // As the CLI stores it: --path values are typed unless --type string; top-level ones are strings,
  // which loadConfig decodes.
  const typed = flags.includes("--type") && type === "string" ? value : decode(value);
  return `set ${path} to ${JSON.stringify(typed)}`;
}

/** POSIX shell words of a plain command line (quotes, no substitutions); undefined when it has more. */
function shellWords(line: string): string[] | undefined {
  if (/[`$|;&<>()]/.test(line.replace(/'[^']*'/g, ""))) return undefined;
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return undefined;
      word = (word ?? "") + line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      const end = line.indexOf('"', i + 1);
      if (end < 0) return undefined;
      word = (word ?? "") + line.slice(i + 1, end);
      i = end;
    } else if (c === "\\" && i + 1 < line.length) {
      word = (word ?? "") + line[++i];
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? "") + c;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}
