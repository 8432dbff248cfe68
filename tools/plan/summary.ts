// npm run plan:summary -- <preview.json> [--out summary.md] [--fail-on-data-loss]
// Reads `pulumi preview --json` (a failed preview included) and writes the pull-request risk report.
// Exit codes: 0 report written (whatever the risk: CI posts it either way); 1 unreadable input or bad
// arguments; 2 data-holding resources at risk and --fail-on-data-loss given.
import * as fs from "fs";
import { wantsHelp } from "../cli";
import { analyze } from "./analyze";
import { parsePreview, UnreadablePreview } from "./previewJson";
import { render } from "./render";

export interface SummaryArgs {
  input: string;
  out?: string;
  failOnDataLoss: boolean;
}

const USAGE = "usage: npm run plan:summary -- <preview.json|-> [--out summary.md] [--fail-on-data-loss]";

export function parseArgs(argv: string[]): SummaryArgs {
  const args: Partial<SummaryArgs> = { failOnDataLoss: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--out") args.out = argv[++i];
    else if (a === "--fail-on-data-loss") args.failOnDataLoss = true;
    else if (a.startsWith("--") || args.input !== undefined)
      throw new UnreadablePreview(`unexpected argument ${a}\n${USAGE}`);
    else args.input = a;
  }
  if (!args.input || (argv.includes("--out") && !args.out)) throw new UnreadablePreview(USAGE);
  return args as SummaryArgs;
}

/** The report and the exit code for one preview's text. */
export function summarize(text: string, failOnDataLoss: boolean): { markdown: string; code: number } {
  const analysis = analyze(parsePreview(text));
  return { markdown: render(analysis), code: failOnDataLoss && analysis.dataRisks.length > 0 ? 2 : 0 };
}

export function main(argv: string[]): number {
  if (wantsHelp(argv)) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  try {
    const args = parseArgs(argv);
    let text: string;
    try {
      text = fs.readFileSync(args.input === "-" ? 0 : args.input, "utf8");
    } catch (err) {
      throw new UnreadablePreview(`cannot read ${args.input}: ${(err as Error).message}`);
    }
    const { markdown, code } = summarize(text, args.failOnDataLoss);
    if (args.out) fs.writeFileSync(args.out, markdown);
    else process.stdout.write(markdown);
    return code;
  } catch (err) {
    if (!(err instanceof UnreadablePreview)) throw err;
    process.stderr.write(`plan:summary: ${err.message}\n`);
    return 1;
  }
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
