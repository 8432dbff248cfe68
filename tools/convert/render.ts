// What pulp-convert prints: a bash script of `pulumi config set` commands (the notes as comments on top, each
// secret as a pipeline from the operator's Secret that never prints the value), or JSON for a program; and
// the key map of docs/migrate-from-pulp-operator.md, generated from convert.ts's tables.
import { keyOf, secretSetCommand, setCommand, shellQuote } from "../../components/config/problems";
import { SECRET_NAMES } from "../../components/config/rules";
import { MAPPED, Scope, UNMAPPED } from "./convert";
import { Conversion } from "./operator";

export interface ScriptContext {
  /** Where the CR came from, for the header: `pulp/example` or a file name. */
  source: string;
  /** The namespace of the operator's Secrets. */
  namespace: string;
  kubeconfig?: string;
}

/** Every leaf of the config as [path, value], in the config's own order. */
function leaves(value: unknown, path: (string | number)[] = []): [(string | number)[], unknown][] {
  if (Array.isArray(value)) return value.flatMap((v, i) => leaves(v, [...path, i]));
  if (value !== null && typeof value === "object")
    return Object.entries(value).flatMap(([k, v]) => leaves(v, [...path, k]));
  return [[path, value]];
}

/** The `pulumi config set` commands that write the config into a stack, one a line. */
export function configCommands(config: Record<string, unknown>): string[] {
  return leaves(config).map(([path, value]) => setCommand(keyOf(path), value as string | number | boolean));
}

/**
 * The pipeline that copies one key of a Secret into a secret config key: kubectl prints it base64-encoded
 * into the pipe, and `pulumi config set` reads it from stdin (it asks only on a terminal). Nothing shows it.
 */
export function secretCommand(
  key: string,
  from: { secret: string; key: string },
  ctx: ScriptContext,
): string {
  const kubeconfig = ctx.kubeconfig ? ` --kubeconfig ${shellQuote(ctx.kubeconfig)}` : "";
  const jsonpath = shellQuote(`{.data.${from.key.replace(/\./g, "\\.")}}`);
  return (
    `kubectl${kubeconfig} get secret -n ${shellQuote(ctx.namespace)} ${shellQuote(from.secret)} -o jsonpath=${jsonpath}` +
    ` | base64 -d | ${secretSetCommand(keyOf([key]))}`
  );
}

export function renderScript(conversion: Conversion, ctx: ScriptContext): string {
  const lines = [
    "#!/usr/bin/env bash",
    `# pulp-convert: the pulp-operator Pulp CR ${ctx.source} as this project's stack config.`,
    "# Run it with a new stack selected (pulumi stack init), from the project's directory, with kubectl",
    `# reaching the operator's cluster: the secrets are read from its Secrets in namespace ${ctx.namespace}`,
    "# and go into the stack config encrypted, never printed. docs/migrate-from-pulp-operator.md says what",
    "# it does not do yet.",
  ];
  if (conversion.notes.length > 0) {
    lines.push("#", "# Notes: fields with no equivalent here, or a decision to check:");
    for (const n of conversion.notes) lines.push(`#   ${n.field}: ${n.text}`);
  }
  lines.push("set -euo pipefail", "", ...configCommands(conversion.config));
  const secrets = SECRET_NAMES.filter((name) => conversion.secrets[name]);
  if (secrets.length > 0) {
    lines.push("", "# Secrets: from the operator's Secrets to the stack config, never shown.");
    for (const name of secrets) lines.push(secretCommand(name, conversion.secrets[name]!, ctx));
  }
  return `${lines.join("\n")}\n`;
}

/** For a program: `parseArgs(config, Object.keys(secrets))` once each secret is read. */
export function renderJson(conversion: Conversion): string {
  const { config, secrets, notes, problems } = conversion;
  return `${JSON.stringify({ config, secrets, notes, problems }, null, 2)}\n`;
}

const TABLE_SCOPES: { scope: Scope; label: (field: string) => string }[] = [
  { scope: "Pulp", label: (f) => f },
  { scope: "Pulp.<component>", label: (f) => `<component>.${f}` },
  { scope: "Pulp.database", label: (f) => `database.${f}` },
  { scope: "Pulp.cache", label: (f) => `cache.${f}` },
  { scope: "PulpBackup", label: (f) => `PulpBackup ${f}` },
  { scope: "PulpRestore", label: (f) => `PulpRestore ${f}` },
];

/** The key map as a Markdown table: every field of the operator's CRDs and what becomes of it here. */
export function keyMapMarkdown(): string {
  const rows = ["| pulp-operator field | here |", "| --- | --- |"];
  for (const { scope, label } of TABLE_SCOPES) {
    const fields = [...Object.keys(MAPPED[scope]), ...Object.keys(UNMAPPED[scope])].sort();
    for (const field of fields) {
      const mapped = MAPPED[scope][field];
      const cell = mapped ?? `not converted: ${UNMAPPED[scope][field]}`;
      rows.push(`| \`${label(field)}\` | ${cell} |`);
    }
  }
  return `${rows.join("\n")}\n`;
}
