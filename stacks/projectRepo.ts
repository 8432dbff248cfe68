// `delivery:projectRepo` as the Pulumi Kubernetes Operator reads it. PKO v2 (operator/internal/controller/
// pulumi/git.go, v2.9.0) parses spec.projectRepo with the Pulumi SDK's gitutil.ParseGitRepoURL before
// anything else and stalls the Stack (`Stalled/SpecInvalid`) when that fails; it then lists the refs of the
// repository URL that function returns, while the workspace's `agent init` clones spec.projectRepo as
// written. The rules below restate that function (sdk/go/common/util/gitutil/git.go, SDK v3.253.0, the
// one PKO 2.9.0 builds with) and go-git's transport.NewEndpoint (v5.19.1), which it calls first:
// - scp-like `user@host:path` (no "/" before the first ":") is SSH and becomes ssh://user@host/path;
// - anything else without `scheme://` is a local path (scheme ""), and only https and ssh are accepted;
// - dev.azure.com URLs are taken as they are;
// - otherwise the path must have two segments: if it contains ".git", the repository ends there and the
//   rest is a subdirectory; if not, the first two segments are owner/repo (".git" is appended) and any
//   deeper path is a subdirectory.
// The operator ignores that subdirectory for its ref listing and the workspace clones the whole URL, so a
// subdirectory in the URL is refused here too: it belongs in delivery:repoDir.

export interface OperatorRepoUrl {
  /** The URL whose refs the operator lists. */
  repository: string;
  /** What the operator takes as a subdirectory (empty when none). */
  subdirectory: string;
}

const SCHEME = /^[^:]+:\/\//; // go-git's isSchemeRegExp
const SCP_LIKE = /^(?:([^@]+)@)?([^:\s]+):(?:([0-9]{1,5}):)?([^\\].*)$/; // go-git's scpLikeUrlRegExp
const AZURE_DEVOPS = "dev.azure.com";

function isScpLike(raw: string): boolean {
  return !SCHEME.test(raw) && SCP_LIKE.test(raw) && !raw.split(":")[0].includes("/");
}

interface Parts {
  scheme: string;
  userinfo?: string;
  host: string;
  path: string;
  query?: string;
}

function split(raw: string): Parts | undefined {
  if (isScpLike(raw)) {
    const [, user, host, port, path] = SCP_LIKE.exec(raw)!;
    return {
      scheme: "ssh",
      userinfo: user,
      host: port && port !== "22" ? `${host}:${port}` : host,
      path: path.startsWith("/") ? path : `/${path}`,
    };
  }
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)([?#].*)?$/.exec(raw);
  if (!m) return undefined;
  const at = m[2].lastIndexOf("@");
  return {
    scheme: m[1].toLowerCase(), // Go's url.Parse lowers the scheme
    userinfo: at >= 0 ? m[2].slice(0, at) : undefined,
    host: at >= 0 ? m[2].slice(at + 1) : m[2],
    path: m[3],
    query: m[4],
  };
}

/** What the operator makes of a projectRepo: the repository and subdirectory, or its refusal. */
export function operatorRepoUrl(raw: string): OperatorRepoUrl | { error: string } {
  const p = split(raw);
  if (!p) return { error: `invalid URL scheme: ${SCHEME.test(raw) ? raw.split(":")[0] : ""}` };
  if (p.scheme !== "https" && p.scheme !== "ssh") return { error: `invalid URL scheme: ${p.scheme}` };
  const base = `${p.scheme}://${p.userinfo !== undefined ? `${p.userinfo}@` : ""}${p.host}`;
  if (p.host.replace(/:\d*$/, "") === AZURE_DEVOPS) return { repository: raw, subdirectory: "" };
  const path = p.path.replace(/^\//, "");
  const segments = path.split("/");
  if (segments.length < 2) return { error: "invalid Git URL" };
  const dotGit = path.lastIndexOf(".git");
  if (dotGit !== -1) {
    const end = dotGit + ".git".length;
    return {
      repository: `${base}/${path.slice(0, end)}`,
      subdirectory: path.slice(end).replace(/^\/+|\/+$/g, ""),
    };
  }
  const [owner, repo] = segments;
  if (!owner) return { error: "invalid Git URL; no owner" };
  if (!repo) return { error: "invalid Git URL; no repository" };
  return {
    repository: `${base}/${owner}/${repo}.git`,
    subdirectory: segments.slice(2).join("/").replace(/\/+$/, ""),
  };
}

export interface RepoUrlProblem {
  message: string;
  /** A URL the operator accepts, as close to the given one as can be guessed. */
  suggestion: string;
  /** Why the suggestion is a guess, or what else to do. */
  note?: string;
  /** The value with any password replaced, for messages. */
  shown: string;
}

/** Port and path of `npm run git:serve` (testbed/git/serve.ts): the dev stack's repository on loopback. */
export const LOCAL_SERVE_PORT = 9443;
export const LOCAL_SERVE_PATH = "/local/pulp-pulumi.git";
export const LOCAL_SERVE_URL = `https://127.0.0.1:${LOCAL_SERVE_PORT}${LOCAL_SERVE_PATH}`;

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?$/;
const ALLOWED =
  "an https:// or ssh:// URL (or user@host:owner/repo) naming owner/repo, e.g. https://github.com/<owner>/pulp-pulumi.git";

function redact(raw: string): string {
  return raw.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#:@]*):[^/?#@]*@/, "$1:***@");
}

/** Why the operator would refuse (or misread) this projectRepo, with a URL it accepts; undefined if fine. */
export function projectRepoProblem(raw: string): RepoUrlProblem | undefined {
  const shown = redact(raw);
  const p = split(raw);
  const parsed = operatorRepoUrl(raw);
  const lastName =
    (p?.path ?? raw)
      .replace(/\/+$/, "")
      .split(/[/:]/)
      .pop()
      ?.replace(/\.git$/, "") || "pulp-pulumi";
  const local = !p || (p.scheme !== "ssh" && LOOPBACK.test(p.host)) || p.scheme === "file";

  // A guess at a URL the operator takes: https (or ssh) on the same host, git daemon's and http's ports
  // dropped, no password or query, cut where the operator cuts the repository.
  const guess = (): Pick<RepoUrlProblem, "suggestion" | "note"> => {
    if (local)
      return {
        suggestion: LOCAL_SERVE_URL,
        note: "serve the checkout over https on loopback first: npm run git:serve (stacks/README.md)",
      };
    const q = p!;
    const scheme = q.scheme === "ssh" ? "ssh" : "https";
    const host = scheme === q.scheme ? q.host : q.host.replace(/:\d+$/, "");
    const userinfo = scheme === "ssh" && q.userinfo ? `${q.userinfo.split(":")[0]}@` : "";
    const url = `${scheme}://${userinfo}${host}${q.path.replace(/\/+$/, "")}`;
    const candidate = operatorRepoUrl(url);
    // ".git" inside a name (my.github.io): the whole path is the repository, marked with a final .git.
    const cut = url.lastIndexOf(".git") + ".git".length;
    if (!("error" in candidate) && url.includes(".git") && cut < url.length && url[cut] !== "/")
      return { suggestion: `${url}.git` };
    if (!("error" in candidate))
      return {
        suggestion: candidate.repository,
        note: candidate.subdirectory
          ? `if the Pulp program is in "${candidate.subdirectory}", also: pulumi config set delivery:repoDir ${candidate.subdirectory}; for a nested group end the whole path with .git instead`
          : undefined,
      };
    return {
      suggestion: `${scheme}://${userinfo}${host}/<owner>/${lastName}.git`,
      note: "replace <owner> with the repository's owner, group or project on that server",
    };
  };

  if (p?.userinfo?.includes(":"))
    return {
      message: `must not carry a password: the URL is stored in the Stack CR and shown by kubectl; ${ALLOWED}`,
      shown,
      ...guess(),
      note: "put the credential in a Secret and name it with delivery:gitAuth.accessToken",
    };
  if (p?.query)
    return {
      message: `must not have a query or fragment (${p.query.slice(0, 20)}): the operator drops it, the workspace does not; ${ALLOWED}`,
      shown,
      ...guess(),
    };
  if ("error" in parsed) {
    const why = !p
      ? "a local path is read as a URL without scheme"
      : p.scheme !== "https" && p.scheme !== "ssh"
        ? `the scheme "${p.scheme}" is refused (only https and ssh)`
        : `the path "${p.path}" does not name owner/repo`;
    return {
      message: `is refused by the Pulumi Kubernetes Operator (gitutil.ParseGitRepoURL: "${parsed.error}"): ${why}; must be ${ALLOWED}`,
      shown,
      ...guess(),
    };
  }
  if (!p!.host || p!.host.startsWith(":"))
    return { message: `names no host; must be ${ALLOWED}`, shown, ...guess() };
  if (parsed.subdirectory)
    return {
      message: `is read by the operator as repository ${redact(parsed.repository)} with subdirectory "${parsed.subdirectory}", which it ignores while the workspace clones the whole URL; end the repository path with .git (nested groups: https://gitlab.com/group/sub/repo.git) and put a subdirectory in delivery:repoDir`,
      shown,
      ...guess(),
    };
  return undefined;
}
