// The GitHub workflows keep their supply-chain and permission rules (actionlint checks the syntax:
// npm run lint:workflows), and the PR-comment script edits its own comment instead of adding one a push.
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as yaml from "js-yaml";
import * as os from "os";
import * as path from "path";

const REPO = path.join(__dirname, "../../..");
const DIR = path.join(REPO, ".github/workflows");
const files = fs.readdirSync(DIR).filter((f) => f.endsWith(".yml"));
const load = (f: string) => yaml.load(fs.readFileSync(path.join(DIR, f), "utf8")) as any;

test("the preview and drift workflows exist", () => {
  expect(files.sort()).toEqual(["drift.yml", "pr-preview.yml"]);
});

test.each(files)("%s: every action is pinned to a full commit SHA, with its version in a comment", (f) => {
  const uses = fs
    .readFileSync(path.join(DIR, f), "utf8")
    .split("\n")
    .filter((l) => /^\s*(-\s+)?uses:/.test(l));
  expect(uses.length).toBeGreaterThan(0);
  for (const line of uses) expect(line).toMatch(/uses: [\w.-]+\/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/);
});

test.each(files)("%s: read-only by default; only a job that comments may write pull requests", (f) => {
  const wf = load(f);
  expect(wf.permissions).toEqual({ contents: "read" });
  expect(wf.concurrency.group).toEqual(expect.any(String));
  for (const [name, job] of Object.entries<any>(wf.jobs)) {
    const comments = (job.steps as any[]).some(
      (s) => s.with?.["comment-on-pr"] === true || /post-comment\.sh/.test(s.run ?? ""),
    );
    expect({ job: name, permissions: job.permissions ?? wf.permissions }).toEqual({
      job: name,
      permissions: comments ? { contents: "read", "pull-requests": "write" } : { contents: "read" },
    });
  }
});

test("pr-preview comments with pulumi/actions and posts the plan summary even when the preview fails", () => {
  const steps = load("pr-preview.yml").jobs.preview.steps as any[];
  const pulumi = steps.find((s) => String(s.uses).startsWith("pulumi/actions@"));
  expect(pulumi.with).toMatchObject({ command: "preview", "comment-on-pr": true });
  const after = steps.slice(steps.indexOf(pulumi) + 1);
  expect(after.map((s) => s.if)).toEqual(after.map(() => "${{ !cancelled() }}"));
  expect(after.map((s) => s.run ?? "").join("\n")).toMatch(/npm run --silent plan:summary -- .* --out /);
});

test("drift runs on a schedule and by hand, refreshed, expecting no changes", () => {
  const wf = load("drift.yml");
  expect(Object.keys(wf.on).sort()).toEqual(["schedule", "workflow_dispatch"]);
  expect(wf.on.schedule[0].cron).toMatch(/^\S+ \S+ \S+ \S+ \S+$/);
  const pulumi = (wf.jobs.drift.steps as any[]).find((s) => String(s.uses).startsWith("pulumi/actions@"));
  expect(pulumi.with).toMatchObject({ command: "preview", refresh: true, "expect-no-changes": true });
});

describe("pr-preview's plan summary step, run as GitHub runs it (bash -eo pipefail)", () => {
  const step = (load("pr-preview.yml").jobs.preview.steps as any[]).find((s) => s.name === "Plan summary");
  const run = (preview: string) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "plan-step-"));
    fs.writeFileSync(path.join(dir, "preview.json"), preview);
    const r = spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", step.run], {
      cwd: REPO,
      encoding: "utf8",
      env: {
        ...process.env,
        RUNNER_TEMP: dir,
        GITHUB_STEP_SUMMARY: path.join(dir, "step-summary.md"),
        RUN_URL: "https://ci/run/1",
      },
    });
    const out = {
      code: r.status,
      summary: fs.readFileSync(path.join(dir, "step-summary.md"), "utf8"),
      comment: fs.readFileSync(path.join(dir, "plan-summary.md"), "utf8"),
    };
    fs.rmSync(dir, { recursive: true, force: true });
    return out;
  };

  test("a real preview: the report goes to the job summary and the comment file", () => {
    const r = run(fs.readFileSync(path.join(REPO, "test/fixtures/preview/pvc-storage-class.json"), "utf8"));
    expect(r.code).toBe(0);
    expect(r.comment).toMatch(/^<!-- pulp-plan-summary preview=failed data-risk=1 /);
    expect(r.summary).toBe(r.comment);
  });

  test("no readable preview: still a comment, pointing at the log", () => {
    const r = run("");
    expect(r.code).toBe(0);
    expect(r.comment).toBe(
      "<!-- pulp-plan-summary preview=unreadable -->\n## Pulp preview: no plan summary\n\n" +
        "`pulumi preview --json` printed no readable preview; see the job log: https://ci/run/1\n",
    );
  });
});

describe("post-comment.sh with a stand-in gh (and the real jq, as on GitHub runners)", () => {
  const run = (existing: unknown[]) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "post-comment-"));
    const log = path.join(dir, "calls");
    // Answers the comment listing with `existing` through the script's own --jq filter (real jq, as gh
    // runs it), and logs every call.
    fs.writeFileSync(path.join(dir, "comments.json"), JSON.stringify(existing));
    fs.writeFileSync(
      path.join(dir, "gh"),
      `#!/usr/bin/env bash\necho "$*" >>"${log}"\nargs=("$@")\nfor i in "\${!args[@]}"; do\n` +
        `  [[ \${args[$i]} == --jq ]] && jq -r "\${args[$((i + 1))]}" "${dir}/comments.json"\ndone\nexit 0\n`,
      { mode: 0o755 },
    );
    const body = path.join(dir, "summary.md");
    fs.writeFileSync(body, "<!-- pulp-plan-summary preview=ok -->\n## Pulp preview: no changes\n");
    const r = spawnSync("bash", [path.join(REPO, "tools/plan/post-comment.sh"), "42", body], {
      encoding: "utf8",
      env: { ...process.env, PATH: `${dir}:${process.env.PATH}`, GITHUB_REPOSITORY: "o/r" },
    });
    const calls = fs.readFileSync(log, "utf8").trim().split("\n");
    fs.rmSync(dir, { recursive: true, force: true });
    return { code: r.status, calls, stdout: r.stdout };
  };

  test("the first summary on a PR is a new comment", () => {
    const r = run([{ id: 7, user: { type: "User" }, body: "<!-- pulp-plan-summary by hand" }]);
    expect(r.code).toBe(0);
    expect(r.calls[1]).toMatch(/^api --method POST repos\/o\/r\/issues\/42\/comments -F body=@.*summary.md$/);
  });

  test("later summaries edit the bot's own comment", () => {
    const r = run([
      { id: 5, user: { type: "Bot" }, body: "### Pulumi preview, the comment of pulumi/actions" },
      { id: 9, user: { type: "Bot" }, body: "<!-- pulp-plan-summary preview=failed -->" },
    ]);
    expect(r.code).toBe(0);
    expect(r.calls[1]).toMatch(/^api --method PATCH repos\/o\/r\/issues\/comments\/9 -F body=@/);
  });
});
