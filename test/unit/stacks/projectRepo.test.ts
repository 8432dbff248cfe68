// Unit. delivery:projectRepo against the operator's own parser: PKO v2.9.0 reads spec.projectRepo with
// the Pulumi SDK's gitutil.ParseGitRepoURL (v3.253.0) and stalls the Stack with Stalled/SpecInvalid when
// it fails. The expectations below are that function's behaviour (its own test table, restated), so a
// change in our mirror of it fails here; the validator must refuse what the operator refuses.
import { DeliveryConfigError, parseDeliveryConfig } from "../../../stacks/config";
import { LOCAL_SERVE_URL, operatorRepoUrl, projectRepoProblem } from "../../../stacks/projectRepo";
import * as fs from "fs";
import * as path from "path";
import { DELIVERY, devDelivery } from "../helpers/delivery";
import { REPO } from "../helpers/configs";

test.each([
  ["https://github.com/pulumi/templates", "https://github.com/pulumi/templates.git", ""],
  ["https://github.com/pulumi/templates.git", "https://github.com/pulumi/templates.git", ""],
  ["https://github.com/pulumi/templates/", "https://github.com/pulumi/templates.git", ""],
  [
    "https://github.com/pulumi/templates/templates/javascript/",
    "https://github.com/pulumi/templates.git",
    "templates/javascript",
  ],
  [
    "https://gitlab.com/a/b/c/d/e/f/g/finally.git/1/2/3/4/5",
    "https://gitlab.com/a/b/c/d/e/f/g/finally.git",
    "1/2/3/4/5",
  ],
  [
    "https://gitlab.com/pulumi/platform/templates.git/templates/javascript///",
    "https://gitlab.com/pulumi/platform/templates.git",
    "templates/javascript",
  ],
  ["https://gitlab.com/dotgit/.git.git/foobar", "https://gitlab.com/dotgit/.git.git", "foobar"],
  ["https://user1@gitlab.com/proj/finally", "https://user1@gitlab.com/proj/finally.git", ""],
  ["git@github.com:acmecorp/templates", "ssh://git@github.com/acmecorp/templates.git", ""],
  ["git@github.com:acmecorp/templates/", "ssh://git@github.com/acmecorp/templates.git", ""],
  ["ssh://git@github.com/acmecorp/templates", "ssh://git@github.com/acmecorp/templates.git", ""],
  ["https://dev.azure.com/tree/tree/_git/repo-name", "https://dev.azure.com/tree/tree/_git/repo-name", ""],
  [LOCAL_SERVE_URL, LOCAL_SERVE_URL, ""],
])("the operator reads %s as %s, subdirectory %j", (raw, repository, subdirectory) => {
  expect(operatorRepoUrl(raw)).toEqual({ repository, subdirectory });
});

test.each([
  ["https://github.com", "invalid Git URL"],
  ["https://github.com/", "invalid Git URL"],
  ["git@github.com", "invalid URL scheme: "],
  ["ssh://git@github.com/", "invalid Git URL"],
  ["https://github.com/pulumi", "invalid Git URL"],
  ["https://github.com/pulumi/", "invalid Git URL; no repository"],
  ["git@github.com:pulumi", "invalid Git URL"],
  ["git@github.com:pulumi/", "invalid Git URL; no repository"],
  ["ssh://git@github.com/pulumi/", "invalid Git URL; no repository"],
  ["http://github.com/pulumi/templates.git", "invalid URL scheme: http"],
  // What issue 13 saw from the real operator with the old dev config.
  ["git://127.0.0.1:9418/pulp-pulumi", "invalid URL scheme: git"],
  ["file:///srv/git/pulp-pulumi.git", "invalid URL scheme: file"],
  ["/srv/git/pulp-pulumi.git", "invalid URL scheme: "],
])("the operator refuses %s: %s", (raw, error) => {
  expect(operatorRepoUrl(raw)).toEqual({ error });
  // And so does the validator, with a URL the operator accepts as the fix.
  const problem = projectRepoProblem(raw)!;
  expect(problem.message).toContain(`"${error}"`);
  if (!problem.suggestion.includes("<owner>")) expect(projectRepoProblem(problem.suggestion)).toBeUndefined();
});

function refusal(projectRepo: string) {
  try {
    parseDeliveryConfig({ ...DELIVERY, projectRepo });
  } catch (e) {
    if (e instanceof DeliveryConfigError) return e;
    throw e;
  }
  throw new Error(`accepted ${projectRepo}`);
}

test("the old dev config's git:// URL is refused with the key, the value and a pasteable fix", () => {
  const e = refusal("git://127.0.0.1:9418/pulp-pulumi");
  expect(e.problems).toEqual([
    {
      key: "delivery:projectRepo",
      given: "git://127.0.0.1:9418/pulp-pulumi",
      message: expect.stringMatching(/invalid URL scheme: git.*only https and ssh.*npm run git:serve/),
      fix: `pulumi config set delivery:projectRepo '${LOCAL_SERVE_URL}'`,
    },
  ]);
  expect(e.message).toMatch(/1 problem\b/);
});

test.each([
  ["http://git.example.com/infra/pulp-pulumi.git", "https://git.example.com/infra/pulp-pulumi.git"],
  ["git://git.example.com:9418/infra/pulp-pulumi", "https://git.example.com/infra/pulp-pulumi.git"],
  ["https://github.com/acme/pulp-pulumi/deploy", "https://github.com/acme/pulp-pulumi.git"],
  ["https://host/org/my.github.io", "https://host/org/my.github.io.git"],
  ["https://git.example.com/pulp-pulumi.git", "https://git.example.com/<owner>/pulp-pulumi.git"],
])("%s is refused; the fix sets %s", (given, suggestion) => {
  const [p] = refusal(given).problems;
  expect(p.key).toBe("delivery:projectRepo");
  expect(p.fix).toBe(`pulumi config set delivery:projectRepo '${suggestion}'`);
});

test("a subdirectory in the URL is refused: the operator ignores it, the workspace clones the whole URL", () => {
  const [p] = refusal("https://github.com/acme/pulp-pulumi/deploy").problems;
  expect(p.message).toMatch(
    /repository https:\/\/github.com\/acme\/pulp-pulumi.git with subdirectory "deploy".*delivery:repoDir deploy/,
  );
});

test("a password in the URL is refused and never shown", () => {
  const e = refusal("https://bot:s3cr3t-t0ken@git.example.com/infra/pulp-pulumi.git");
  expect(e.message).not.toContain("s3cr3t");
  expect(e.problems[0]).toMatchObject({
    given: "https://bot:***@git.example.com/infra/pulp-pulumi.git",
    message: expect.stringMatching(/password.*delivery:gitAuth\.accessToken/),
    fix: "pulumi config set delivery:projectRepo 'https://git.example.com/infra/pulp-pulumi.git'",
  });
});

test("the operator's refusal is reported with the schema's problems, all at once", () => {
  const e = refusal("git://127.0.0.1:9418/pulp-pulumi");
  expect(e.problems).toHaveLength(1);
  try {
    parseDeliveryConfig({ ...DELIVERY, projectRepo: "git://x/y", resyncFrequencySeconds: 1 });
  } catch (err) {
    expect((err as DeliveryConfigError).problems.map((p) => p.key).sort()).toEqual([
      "delivery:projectRepo",
      "delivery:resyncFrequencySeconds",
    ]);
  }
  expect.assertions(2);
});

test("the committed dev config, the README's examples and the e2e use URLs the operator accepts", () => {
  expect(projectRepoProblem(devDelivery().projectRepo as string)).toBeUndefined();
  expect(devDelivery().projectRepo).toBe(LOCAL_SERVE_URL);
  const readme = fs.readFileSync(path.join(REPO, "stacks/README.md"), "utf8");
  const urls = [...readme.matchAll(/delivery:projectRepo'? '?([^\s'`]+)/g)].map((m) => m[1]);
  expect(urls.length).toBeGreaterThan(0);
  for (const url of urls) expect([url, projectRepoProblem(url)]).toEqual([url, undefined]);
  const e2e = fs.readFileSync(path.join(REPO, "test/e2e/delivery.test.ts"), "utf8");
  expect(e2e).not.toMatch(/git:\/\/|git daemon/);
});
