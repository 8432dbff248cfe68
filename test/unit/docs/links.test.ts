// The documentation's relative links: every one in README.md, CONTRIBUTING.md, testbed/README.md and
// docs/ names a file or folder of the repository, and a #fragment on a Markdown file names one of its
// headings (as GitHub renders it). Links inside code blocks and to other sites are not checked.
import * as fs from "fs";
import * as path from "path";

const REPO = path.resolve(__dirname, "../../..");

function markdownUnder(dir: string): string[] {
  return fs
    .readdirSync(path.join(REPO, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".md"))
    .map((f) => path.join(dir, f));
}

const DOCS = [
  "README.md",
  "CONTRIBUTING.md",
  "testbed/README.md",
  "testbed/bench/RESULTS.md",
  ...markdownUnder("docs"),
];

/** The text outside fenced code blocks and inline code spans. */
function prose(text: string): string {
  return text.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, "")
    .replace(/[^\p{L}\p{N}\s-]/gu, "")
    .replace(/\s/g, "-");
}

function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(fs.readFileSync(file, "utf8")).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every relative link of a Markdown file: [text](target) and [text]: target. */
function links(file: string): string[] {
  const text = prose(fs.readFileSync(path.join(REPO, file), "utf8"));
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]);
  const reference = [...text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1]);
  return [...inline, ...reference].filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

/** Why a link is broken, or undefined. */
function broken(from: string, target: string): string | undefined {
  const [file, fragment] = target.split("#", 2);
  const resolved =
    file === "" ? path.join(REPO, from) : path.resolve(path.dirname(path.join(REPO, from)), file);
  if (!resolved.startsWith(REPO)) return "outside the repository";
  if (!fs.existsSync(resolved)) return "no such file";
  if (
    fragment !== undefined &&
    resolved.endsWith(".md") &&
    !anchors(resolved).has(decodeURIComponent(fragment))
  )
    return "no such heading";
  return undefined;
}

test("the documentation files exist", () => {
  expect(DOCS.filter((f) => !fs.existsSync(path.join(REPO, f)))).toEqual([]);
  expect(DOCS.length).toBeGreaterThanOrEqual(12);
});

test.each(DOCS)("every relative link in %s resolves", (file) => {
  const found = links(file);
  const bad = found.map((t) => ({ link: t, problem: broken(file, t) })).filter((b) => b.problem);
  expect(bad).toEqual([]);
});

test("the link check itself finds a broken link, a missing heading and skips code", () => {
  const dir = fs.mkdtempSync(path.join(REPO, ".links-test-"));
  try {
    const rel = path.relative(REPO, dir);
    fs.writeFileSync(path.join(dir, "a.md"), "# A title\n\n## Second, part\n");
    fs.writeFileSync(
      path.join(dir, "b.md"),
      "[ok](a.md#second-part) [bad](missing.md) [anchor](a.md#nope) [web](https://example.com)\n" +
        "```\n[in code](missing2.md)\n```\n`[span](missing3.md)`\n",
    );
    const b = path.join(rel, "b.md");
    expect(links(b)).toEqual(["a.md#second-part", "missing.md", "a.md#nope"]);
    expect(links(b).map((t) => broken(b, t))).toEqual([undefined, "no such file", "no such heading"]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
