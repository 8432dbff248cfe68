// An LDAP directory for the real-Pulp tests: Debian's slapd (testbed/ldap) on the real node's bridge
// address, where pods reach the host, with StartTLS under a throwaway CA, people and groups of names.
// Started and stopped by the test that needs it.
import { execFileSync, spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { NODE_ADDRESS as HOST, REPO } from "../local/environment";
import { ensureTls } from "../tls/selfSigned";
import { freePort, listening } from "./hostServer";

export const SUFFIX = "dc=pulp,dc=test";
export const PEOPLE = `ou=people,${SUFFIX}`;
export const GROUPS = `ou=groups,${SUFFIX}`;

export interface DirectoryUser {
  uid: string;
  password: string;
  /** The groups (cn, under ou=groups) the user is a member of. */
  groups: string[];
}

export interface Directory {
  /** ldap://<bridge address>:<port> (StartTLS offered). */
  uri: string;
  bindDn: string;
  bindPassword: string;
  /** The CA of the server's certificate (PEM). */
  caPem: string;
  /** slapd's last lines (every connection, StartTLS, bind and search). */
  log(): string;
  /** Each simple bind in the log: the DN, and whether its connection had completed StartTLS first. */
  binds(): { dn: string; tls: boolean }[];
  stop(): void;
}

/** One entry's LDIF; values are the test's own (no escaping needed). */
const entry = (dn: string, attrs: [string, string][]) =>
  [`dn: ${dn}`, ...attrs.map(([k, v]) => `${k}: ${v}`)].join("\n");

/** slapd with `users` under ou=people and their groups under ou=groups; resolves once it listens. */
export async function startDirectory(users: DirectoryUser[]): Promise<Directory> {
  const root = execFileSync("bash", [path.join(REPO, "testbed/ldap/install.sh")], {
    encoding: "utf8",
  }).trim();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pulp-ldap-"));
  const tls = ensureTls(path.join(dir, "tls"), `IP:${HOST}`);
  const bindDn = `cn=admin,${SUFFIX}`;
  const bindPassword = `bind-${Math.random().toString(36).slice(2)}`;
  const schema = (name: string) => `include ${root}/etc/ldap/schema/${name}.schema`;
  fs.mkdirSync(path.join(dir, "data"));
  fs.writeFileSync(
    path.join(dir, "slapd.conf"),
    [
      ...["core", "cosine", "inetorgperson", "nis"].map(schema),
      `modulepath ${root}/usr/lib/ldap`,
      "moduleload back_mdb",
      `pidfile ${dir}/slapd.pid`,
      `TLSCACertificateFile ${tls.ca}`,
      `TLSCertificateFile ${tls.cert}`,
      `TLSCertificateKeyFile ${tls.key}`,
      "database mdb",
      `suffix "${SUFFIX}"`,
      `rootdn "${bindDn}"`,
      `rootpw ${bindPassword}`,
      `directory ${dir}/data`,
      "access to attrs=userPassword by anonymous auth by self write by * none",
      "access to * by users read by * none",
      "",
    ].join("\n"),
  );
  const groupNames = [...new Set(users.flatMap((u) => u.groups))].sort();
  const ldif = [
    entry(SUFFIX, [
      ["objectClass", "dcObject"],
      ["objectClass", "organization"],
      ["o", "pulp test"],
      ["dc", "pulp"],
    ]),
    entry(PEOPLE, [
      ["objectClass", "organizationalUnit"],
      ["ou", "people"],
    ]),
    entry(GROUPS, [
      ["objectClass", "organizationalUnit"],
      ["ou", "groups"],
    ]),
    ...users.map((u) =>
      entry(`uid=${u.uid},${PEOPLE}`, [
        ["objectClass", "inetOrgPerson"],
        ["uid", u.uid],
        ["cn", u.uid],
        ["sn", u.uid],
        ["givenName", u.uid],
        ["mail", `${u.uid}@pulp.test`],
        ["userPassword", u.password],
      ]),
    ),
    ...groupNames.map((g) =>
      entry(`cn=${g},${GROUPS}`, [
        ["objectClass", "groupOfNames"],
        ["cn", g],
        ...users
          .filter((u) => u.groups.includes(g))
          .map((u): [string, string] => ["member", `uid=${u.uid},${PEOPLE}`]),
      ]),
    ),
  ].join("\n\n");
  fs.writeFileSync(path.join(dir, "seed.ldif"), `${ldif}\n`);
  const env = { ...process.env, LD_LIBRARY_PATH: path.join(root, "usr/lib/x86_64-linux-gnu") };
  const slapd = path.join(root, "usr/sbin/slapd");
  // slapd run as slapadd (argv[0] picks the tool) loads the entries offline, before the server starts.
  execFileSync(
    "bash",
    ["-c", 'exec -a slapadd "$0" "$@"', slapd, "-f", `${dir}/slapd.conf`, "-l", `${dir}/seed.ldif`],
    {
      env,
      stdio: "pipe",
    },
  );
  const port = await freePort();
  const uri = `ldap://${HOST}:${port}`;
  // -d stats: in the foreground, logging every bind and search (the test's failure output).
  const child = spawn(slapd, ["-f", `${dir}/slapd.conf`, "-h", `${uri}/`, "-d", "stats"], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (c) => (output = (output + c).slice(-20000)));
  child.stderr!.on("data", (c) => (output = (output + c).slice(-20000)));
  await listening("slapd", port, child, () => output);
  return {
    uri,
    bindDn,
    bindPassword,
    caPem: fs.readFileSync(tls.ca, "utf8"),
    log: () => output,
    binds: () => bindsIn(output),
    stop: () => {
      child.kill();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Reads `-d stats` lines: `conn=N fd=F TLS established` and `conn=N op=M BIND dn="..." mech=SIMPLE`. */
export function bindsIn(log: string): { dn: string; tls: boolean }[] {
  const secured = new Set<string>();
  const binds: { dn: string; tls: boolean }[] = [];
  for (const line of log.split("\n")) {
    const tls = /conn=(\d+) fd=\d+ TLS established/.exec(line);
    if (tls) secured.add(tls[1]);
    const bind = /conn=(\d+) op=\d+ BIND dn="([^"]*)" mech=SIMPLE/.exec(line);
    if (bind) binds.push({ dn: bind[2], tls: secured.has(bind[1]) });
  }
  return binds;
}
