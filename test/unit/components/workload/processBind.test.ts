// Unit: where api and content listen, on nodes with and without IPv6. The rendered command runs under sh
// against a stand-in image: entry scripts that, like pulp-oci-images', exec pulpcore-api / pulpcore-content
// from PATH with no --bind, and stand-ins for those that print their arguments. "Without IPv6" is Python's
// AF_INET6 socket failing with EAFNOSUPPORT (errno 97), as on a kernel booted with ipv6.disable=1 or under
// testbed/node/seccomp/no-ipv6.json. python3 stands in for Pulp's interpreter (missing, this fails).
// The defaults themselves were read and run from the test bed's pulp-minimal images (3.89.2, 3.123.1):
// pulpcore picks 0.0.0.0 without IPv6 from 3.81.0 on, [::] before.
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { processCommand, PulpProcess } from "../../../../components/workload/pulpProcess";
import { pulpRuntime } from "../../helpers/runtime";

const NO_IPV6 = `import socket
class _Socket(socket.socket):
    def __init__(self, family=-1, *args, **kwargs):
        if family == socket.AF_INET6:
            raise OSError(97, "Address family not supported by protocol")
        super().__init__(family, *args, **kwargs)
socket.socket = _Socket
`;

/** Runs the container's command as the kubelet would; returns what the gunicorn entry point was given. */
function start(proc: PulpProcess, pulpcoreVersion: string, ipv6: boolean) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "process-bind-"));
  const bin = path.join(dir, "bin");
  const site = path.join(dir, "site");
  fs.mkdirSync(bin);
  fs.mkdirSync(site);
  const script = (name: string, body: string) =>
    fs.writeFileSync(path.join(bin, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  script("pulp-api", 'exec pulpcore-api --timeout "${PULP_GUNICORN_TIMEOUT:-90}"');
  script("pulp-content", 'exec pulpcore-content --timeout "${PULP_GUNICORN_TIMEOUT:-90}"');
  script("pulpcore-api", 'echo "ran pulpcore-api $*"');
  script("pulpcore-content", 'echo "ran pulpcore-content $*"');
  if (!ipv6) fs.writeFileSync(path.join(site, "sitecustomize.py"), NO_IPV6);
  const env = { ...process.env, PATH: `${bin}:${process.env.PATH}`, PYTHONPATH: site, TMPDIR: dir };
  // The interpreter line reads pulpcore-manager's shebang; here python3 stands in for it.
  const [exe, ...args] = processCommand(proc, pulpRuntime({ pulpcoreVersion })).map((a) =>
    a.replace(/^py=.*$/m, "py=python3"),
  );
  const r = spawnSync(exe === "/bin/sh" ? "sh" : exe, args, { encoding: "utf8", env });
  fs.rmSync(dir, { recursive: true, force: true });
  if (r.error) throw r.error;
  return {
    code: r.status,
    ran: r.stdout.split("\n").find((l) => l.startsWith("ran ")),
    out: r.stdout + r.stderr,
  };
}

test("the stand-in tells the two nodes apart (python3 binds ::1 here; the stand-in fails as the kernel would)", () => {
  const bind = 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))';
  expect(spawnSync("python3", ["-c", bind]).status).toBe(0);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "process-bind-"));
  fs.writeFileSync(path.join(dir, "sitecustomize.py"), NO_IPV6);
  const r = spawnSync("python3", ["-c", bind], {
    encoding: "utf8",
    env: { ...process.env, PYTHONPATH: dir },
  });
  fs.rmSync(dir, { recursive: true, force: true });
  expect(r.stderr).toContain("[Errno 97] Address family not supported by protocol");
});

test.each(["api", "content"] as const)(
  "from 3.81.0 on %s runs the image's entry script alone: pulpcore binds 0.0.0.0 itself without IPv6",
  (proc) => {
    for (const version of ["3.81.0", "3.89.2", "3.123.1"]) {
      expect(processCommand(proc, pulpRuntime({ pulpcoreVersion: version }))).toEqual([`pulp-${proc}`]);
    }
    expect(start(proc, "3.123.1", false).ran).toBe(`ran pulpcore-${proc} --timeout 90`);
  },
);

test.each([
  ["api", "pulpcore-api", 24817],
  ["content", "pulpcore-content", 24816],
] as const)(
  "before 3.81.0, without IPv6 %s binds 0.0.0.0; with IPv6 it starts as the image has it",
  (proc, entry, port) => {
    const without = start(proc, "3.80.2", false);
    expect([without.code, without.ran]).toEqual([0, `ran ${entry} --bind 0.0.0.0:${port} --timeout 90`]);
    expect(without.out).toContain(`no IPv6 here: ${entry} binds 0.0.0.0:${port}`);
    const withIpv6 = start(proc, "3.80.2", true);
    expect([withIpv6.code, withIpv6.ran]).toEqual([0, `ran ${entry} --timeout 90`]);
  },
);

test("the worker does not listen: its command never changes", () => {
  expect(processCommand("worker", pulpRuntime({ pulpcoreVersion: "3.49.1" }))).toEqual(["pulp-worker"]);
});
