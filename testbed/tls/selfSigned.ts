// Self-signed TLS for the test bed's own servers (the git server, the HTTPS file server real Pulp syncs
// from): a throwaway CA and one server certificate, made with openssl.
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";

export interface Tls {
  ca: string;
  cert: string;
  key: string;
}

/**
 * A CA and a server certificate signed by it, for the names in `subjectAltName` (made once per directory:
 * a directory is one server's).
 */
export function ensureTls(dir: string, subjectAltName = "IP:127.0.0.1,IP:::1,DNS:localhost"): Tls {
  const f = (name: string) => path.join(dir, name);
  const tls = { ca: f("ca.crt"), cert: f("server.crt"), key: f("server.key") };
  if (Object.values(tls).every((p) => fs.existsSync(p))) return tls;
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl(
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt.tmp",
    "-days",
    "3650",
    "-subj",
    "/CN=pulp-pulumi test-bed CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  );
  openssl("req", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1");
  fs.writeFileSync(
    f("server.ext"),
    `subjectAltName=${subjectAltName}\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n`,
  );
  openssl(
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.crt.tmp",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.crt",
    "-days",
    "3650",
    "-extfile",
    "server.ext",
  );
  fs.renameSync(f("ca.crt.tmp"), tls.ca); // last: its presence means the set is complete
  return tls;
}
