// Unit: the content pods' probes run as the kubelet runs them (httpGet: a GET, 200-399 passes; tcpSocket: a
// connect; exec: the command line, python3 standing in for Pulp's interpreter) against a stand-in for the
// content app in this process. The stand-in answers like pulpcore 3.116 (pulpcore/content/__init__.py,
// authentication.py, handler.py): every request first looks its domain up in the database (500 while the
// database is down); the listing is at <prefix>, or with DOMAIN_ENABLED only at <prefix><domain>/ (the bare
// prefix is a 404); HEAD on the listing answers before the listing query, GET runs it.
import { execFile } from "child_process";
import * as http from "http";
import * as net from "net";
import { AddressInfo } from "net";
import { CONTENT_PORT, pulpProbes } from "../../../../components/workload/pulpProcess";
import { NO_PROBE_TUNING, pulpRuntime } from "../../helpers/runtime";

type Probe = {
  httpGet?: { path: string; port: number };
  tcpSocket?: { port: number };
  exec?: { command: string[] };
};

interface StandIn {
  port: number;
  /** The database queries the app ran (domain lookups and listings). */
  queries: string[];
  close(): Promise<void>;
}

async function contentApp(opts: { domains: boolean; databaseUp: boolean }): Promise<StandIn> {
  const prefix = "/pulp/content/";
  const queries: string[] = [];
  const server = http.createServer((req, res) => {
    const path = req.url ?? "";
    const domain = opts.domains ? /^\/pulp\/content\/([^/{}]+)\/$/.exec(path)?.[1] : undefined;
    const listing = opts.domains ? domain !== undefined : path === prefix;
    // The authenticate middleware, for every request: Domain.objects.get(name=<domain or "default">).
    queries.push(`domain ${domain ?? "default"}`);
    if (!opts.databaseUp) res.writeHead(500).end();
    else if ((domain !== undefined && domain !== "default") || !listing) res.writeHead(404).end();
    else if (req.method === "HEAD") res.writeHead(200).end();
    else {
      queries.push("distribution listing");
      res.writeHead(200, { "Content-Type": "text/html" }).end("<html></html>");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    queries,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Runs one probe against the port as the kubelet would: true when it passes. */
async function kubelet(probe: Probe, port: number): Promise<boolean> {
  if (probe.httpGet) {
    const status = await new Promise<number>((resolve) =>
      http
        .get({ host: "127.0.0.1", port, path: probe.httpGet!.path }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
        .on("error", () => resolve(0)),
    );
    return status >= 200 && status < 400;
  }
  if (probe.tcpSocket) {
    return new Promise((resolve) => {
      const socket = net.connect({ host: "127.0.0.1", port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
  }
  const [sh, dashC, script, ...args] = probe.exec!.command;
  // The interpreter line reads pulpcore-manager's shebang; here python3 stands in for it.
  const local = script.replace(/^py=.*$/m, "py=python3");
  const argv = args.map((a) => (a === String(CONTENT_PORT) ? String(port) : a));
  return new Promise((resolve) =>
    execFile(sh === "/bin/sh" ? "sh" : sh, [dashC, local, ...argv], (error) => resolve(!error)),
  );
}

const probes = () => pulpProbes("content", pulpRuntime(), NO_PROBE_TUNING);

let app: StandIn | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

test.each([false, true])(
  "with DOMAIN_ENABLED=%s the content pod starts and becomes ready",
  async (domains) => {
    app = await contentApp({ domains, databaseUp: true });
    const { startupProbe, readinessProbe } = probes();
    expect(await kubelet(startupProbe as Probe, app.port)).toBe(true);
    expect(await kubelet(readinessProbe as Probe, app.port)).toBe(true);
  },
);

test("the startup check asks over HTTP: it fails while the database is down or nothing listens", async () => {
  app = await contentApp({ domains: false, databaseUp: false });
  const startup = probes().startupProbe as Probe;
  expect(await kubelet(startup, app.port)).toBe(false);
  const port = app.port;
  await app.close();
  app = undefined;
  expect(await kubelet(startup, port)).toBe(false);
});

test("readiness runs no query, so a database blip leaves the pods in the Service", async () => {
  app = await contentApp({ domains: false, databaseUp: false });
  const readiness = probes().readinessProbe as Probe;
  expect(await kubelet(readiness, app.port)).toBe(true);
  expect(app.queries).toEqual([]);
});

test("the startup check runs no distribution listing", async () => {
  app = await contentApp({ domains: true, databaseUp: true });
  expect(await kubelet(probes().startupProbe as Probe, app.port)).toBe(true);
  expect(app.queries.filter((q) => q === "distribution listing")).toEqual([]);
});
