// npm run docs:config — writes the configuration reference table into docs/configuration.md, from
// components/config/reference.ts (test/unit/docs/configReference.test.ts fails while the file is stale).
import * as fs from "fs";
import * as path from "path";
import { configReferenceTable } from "../../components/config/reference";
import { REPO, runMain } from "../local/environment";

export const CONFIG_DOC = path.join(REPO, "docs/configuration.md");
const START =
  "<!-- The table is generated from components/config/reference.ts by `npm run docs:config`: edit it there. -->";
const END = "<!-- End of the generated table. -->";

/** The document with the generated table between its two markers. */
export function withGeneratedTable(doc: string): string {
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${CONFIG_DOC}: the table's markers are missing`);
  return `${doc.slice(0, start + START.length)}\n\n${configReferenceTable()}\n\n${doc.slice(end)}`;
}

if (require.main === module) {
  runMain(async () => {
    fs.writeFileSync(CONFIG_DOC, withGeneratedTable(fs.readFileSync(CONFIG_DOC, "utf8")));
    return 0;
  });
}
