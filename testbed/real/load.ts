// Client traffic against a real Pulp for as long as it runs, as three clients at once: status GETs, downloads
// of one distributed file (its sha256 checked), and uploads that each create a task (followed until it
// ends). One JSON line per request (LoadRecord in loadReport.ts). startLoad() runs it in a process of its
// own, so a blocking `pulumi up` in the caller does not pause it; it stops on SIGTERM once the requests in
// flight are answered.
//   ts-node -T testbed/real/load.ts '<LoadTarget as JSON>' <out.jsonl>
//
// Every request opens a new connection (no keep-alive): the figures are about the Service and the pods
// behind it, not about a client's pool holding a connection to a pod that has gone.
import { ChildProcess, spawn } from "child_process";
import * as crypto from "crypto";
import * as fs from "fs";
import * as http from "http";
import * as path from "path";
import { CACHE_HEADER } from "../../components/web/nginx";
import { LoadRecord, parseRecords } from "./loadReport";

export interface LoadTarget {
  /** pulp-web as the clients reach it, e.g. http://10.96.0.12:8080 */
  baseUrl: string;
  password: string;
  /** A file served by the content app, e.g. /pulp/content/load/hello.bin, and its sha256. */
  contentPath: string;
  contentSha256: string;
  /** The file repository the uploads go into. */
  repositoryHref: string;
}

const TIMEOUT_MS = 10_000;
const PAUSE_MS = 200;
const TASK_TIMEOUT_MS = 120_000;

interface Answer {
  status: number;
  body: Buffer;
  headers: http.IncomingHttpHeaders;
}

function request(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false, timeout: TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), headers: res.headers }),
      );
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`no answer in ${TIMEOUT_MS} ms`)));
    req.on("error", reject);
    req.end(body);
  });
}

async function main() {
  const target = JSON.parse(process.argv[2]) as LoadTarget;
  const out = fs.createWriteStream(process.argv[3], { flags: "w" });
  const auth = { Authorization: `Basic ${Buffer.from(`admin:${target.password}`).toString("base64")}` };
  let running = true;
  process.on("SIGTERM", () => (running = false));

  const record = (r: LoadRecord) => out.write(`${JSON.stringify(r)}\n`);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  /** One request, recorded; `check` says what is wrong with an answer, or nothing. */
  async function timed(
    kind: LoadRecord["kind"],
    send: () => Promise<Answer>,
    check: (a: Answer) => string | undefined,
  ): Promise<Answer | undefined> {
    const t = Date.now();
    try {
      const answer = await send();
      const error = check(answer);
      // pulp-web's content cache marks what it answered from a copy (components/web/nginx.ts).
      const cached = answer.headers[CACHE_HEADER.toLowerCase()] !== undefined;
      record({
        t,
        kind,
        ms: Date.now() - t,
        ok: !error,
        ...(error ? { error } : {}),
        ...(cached ? { cached } : {}),
      });
      return error ? undefined : answer;
    } catch (e) {
      record({ t, kind, ms: Date.now() - t, ok: false, error: (e as Error).message });
      return undefined;
    }
  }
  const expect = (status: number) => (a: Answer) =>
    a.status === status
      ? undefined
      : `HTTP ${a.status}${a.headers["retry-after"] ? ` (Retry-After ${a.headers["retry-after"]})` : ""}: ` +
        a.body.toString("utf8").slice(0, 200);

  async function statusClient() {
    while (running) {
      await timed("status", () => request(`${target.baseUrl}/pulp/api/v3/status/`, "GET", {}), expect(200));
      await sleep(PAUSE_MS);
    }
  }

  async function contentClient() {
    while (running) {
      await timed(
        "content",
        () => request(`${target.baseUrl}${target.contentPath}`, "GET", {}),
        (a) =>
          expect(200)(a) ??
          (crypto.createHash("sha256").update(a.body).digest("hex") === target.contentSha256
            ? undefined
            : "sha256 differs"),
      );
      await sleep(PAUSE_MS);
    }
  }

  async function uploadClient() {
    for (let n = 0; running; n++) {
      const boundary = `load${crypto.randomBytes(8).toString("hex")}`;
      const part = (name: string, value: Buffer | string, filename?: string) =>
        Buffer.concat([
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="${name}"` +
              (filename ? `; filename="${filename}"\r\nContent-Type: application/octet-stream` : "") +
              "\r\n\r\n",
          ),
          Buffer.from(value),
          Buffer.from("\r\n"),
        ]);
      const name = `load-${process.pid}-${n}.bin`;
      const body = Buffer.concat([
        part("file", crypto.randomBytes(4096), name),
        part("relative_path", name),
        part("repository", target.repositoryHref),
        Buffer.from(`--${boundary}--\r\n`),
      ]);
      const started = Date.now();
      const posted = await timed(
        "upload",
        () =>
          request(
            `${target.baseUrl}/pulp/api/v3/content/file/files/`,
            "POST",
            { ...auth, "Content-Type": `multipart/form-data; boundary=${boundary}` },
            body,
          ),
        expect(202),
      );
      if (posted) await followTask(JSON.parse(posted.body.toString("utf8")).task, started);
      await sleep(1000);
    }
  }

  /** Polls a task (each poll a recorded request) and records how the task ended. */
  async function followTask(href: string, started: number) {
    let state = "";
    let why = "";
    while (Date.now() - started < TASK_TIMEOUT_MS) {
      const answer = await timed(
        "task-poll",
        () => request(`${target.baseUrl}${href}`, "GET", auth),
        expect(200),
      );
      const task = answer ? JSON.parse(answer.body.toString("utf8")) : undefined;
      state = task ? (task.state as string) : state;
      // A failed task says why (its error, whatever its shape) and where and when it ran: the report then
      // names the cause, not only the task.
      if (task?.state === "failed" || task?.state === "canceled") {
        const error = task.error ? String(task.error.description ?? JSON.stringify(task.error)) : "no error";
        why = `: ${error.slice(0, 300)} (worker ${task.worker ?? "none"}, started ${task.started_at ?? "never"}, finished ${task.finished_at ?? "never"})`;
      }
      if (["completed", "failed", "canceled"].includes(state)) break;
      await sleep(500);
    }
    const ok = state === "completed";
    record({
      t: started,
      kind: "task",
      ms: Date.now() - started,
      ok,
      ...(ok ? {} : { error: `task ${href} ${state || "never answered"}${why}` }),
    });
  }

  await Promise.all([statusClient(), contentClient(), uploadClient()]);
  out.end(() => process.exit(0));
}

/** Starts the load in a process of its own; stop() ends it and resolves with everything it recorded. */
export function startLoad(target: LoadTarget, file: string): { stop: () => Promise<LoadRecord[]> } {
  const child: ChildProcess = spawn(
    path.join(__dirname, "../../node_modules/.bin/ts-node"),
    ["-T", __filename, JSON.stringify(target), file],
    { stdio: ["ignore", "inherit", "inherit"] },
  );
  return {
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", () => resolve(parseRecords(fs.readFileSync(file, "utf8"))));
        child.kill("SIGTERM");
      }),
  };
}

if (require.main === module) void main();
