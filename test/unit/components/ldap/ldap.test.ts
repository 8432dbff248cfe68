// Unit (plain parseConfig calls; rendering under Pulumi mocks; the rendered settings.py run by the host's
// real Python against stand-ins for python-ldap and django-auth-ldap): pulp:ldap and pulp:ldapBindPassword.
// On real Pulp with a real directory: test/e2e/real/pulp.test.ts, "LDAP".
import * as pulumi from "@pulumi/pulumi";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as yaml from "js-yaml";
import { parseArgs } from "../../../../components/config/programArgs";
import { parseConfig } from "../../../../components/config/parse";
import { SECRET_GIVEN } from "../../../../components/config/problems";
import { ldapSettings, plaintextLdapWarning } from "../../../../components/ldap/ldap";
import { Pulp } from "../../../../components/pulp";
import { renderSettings } from "../../../../components/settings/render";
import { FIRST_INSTALL } from "../../../../components/upgrade/deployed";
import { CA, configProblems, MINIMAL } from "../../helpers/configs";
import { runWithMocks } from "../../helpers/pulumiMocks";
import { DEPLOYMENT, render } from "../../helpers/render";
import { SETTINGS_INPUT } from "../../helpers/settingsInput";
import { REPO } from "../../../../testbed/local/environment";

const LDAP = {
  serverUri: "ldaps://ldap.example.com",
  bindDn: "cn=pulp,ou=services,dc=example,dc=com",
  userSearch: { baseDn: "ou=people,dc=example,dc=com" },
  groups: {
    baseDn: "ou=groups,dc=example,dc=com",
    superuser: "cn=pulp-admins,ou=groups,dc=example,dc=com",
    require: "cn=pulp-users,ou=groups,dc=example,dc=com",
  },
};
const PASSWORD = { ldapBindPassword: "bind-password-1" };

const problemsOf = configProblems;

describe("config", () => {
  test("the bind DN and its password go together; the fix sets the other or removes the one", () => {
    const [noPassword] = problemsOf({ ldap: LDAP });
    expect(noPassword).toMatchObject({
      key: "pulp:ldap.bindDn",
      fix: "pulumi config set --secret pulp:ldapBindPassword",
      alternatives: ["pulumi config rm --path 'pulp:ldap.bindDn'"],
    });
    const anonymous = { ...LDAP, bindDn: undefined };
    const [noDn] = problemsOf({ ldap: anonymous }, PASSWORD);
    expect(noDn).toMatchObject({ key: "pulp:ldapBindPassword", given: SECRET_GIVEN });
    expect(noDn.fix).toMatch(/^pulumi config set --path 'pulp:ldap.bindDn' /);
    expect(JSON.stringify(noDn)).not.toContain(PASSWORD.ldapBindPassword);
    expect(problemsOf({}, PASSWORD)[0]).toMatchObject({
      key: "pulp:ldapBindPassword",
      fix: "pulumi config rm pulp:ldapBindPassword",
    });
    expect(problemsOf({ ldap: LDAP }, PASSWORD)).toEqual([]);
    expect(problemsOf({ ldap: anonymous })).toEqual([]);
    expect(parseConfig({ ...MINIMAL, ldap: {} }).ldap).toBeUndefined();
  });

  test("filters, URLs, scopes and group types are checked, naming the path", () => {
    const key = (ldap: Record<string, unknown>) => problemsOf({ ldap }, PASSWORD)[0];
    expect(key({ ...LDAP, userSearch: { baseDn: "ou=p,dc=x", filter: "(uid=admin)" } })).toMatchObject({
      key: "pulp:ldap.userSearch.filter",
      message: expect.stringMatching(/must contain %\(user\)s/),
    });
    expect(key({ ...LDAP, userSearch: { baseDn: "ou=p,dc=x", filter: "(cn=%(user)s*100%)" } })).toMatchObject(
      {
        key: "pulp:ldap.userSearch.filter",
        message: expect.stringMatching(/write a literal percent sign as %%/),
      },
    );
    // A literal %% is fine.
    expect(key({ ...LDAP, userSearch: { baseDn: "ou=p,dc=x", filter: "(&(uid=%(user)s)(d=100%%))" } })).toBe(
      undefined,
    );
    expect(key({ ...LDAP, userSearch: { baseDn: "ou=p,dc=x", filter: "uid=%(user)s" } }).message).toMatch(
      /in parentheses/,
    );
    expect(key({ ...LDAP, serverUri: "ldap.example.com" })).toMatchObject({ key: "pulp:ldap.serverUri" });
    expect(key({ ...LDAP, startTls: true })).toMatchObject({
      key: "pulp:ldap",
      message: expect.stringMatching(/ldaps:\/\/ URL, which is TLS already/),
    });
    expect(key({ ...LDAP, groups: { baseDn: "ou=g,dc=x", type: "memberOf" } })).toMatchObject({
      key: "pulp:ldap.groups.type",
      message: expect.stringMatching(/"groupOfNames", "nestedGroupOfNames"/),
    });
    expect(key({ ...LDAP, userSearch: { baseDn: "people" } }).key).toBe("pulp:ldap.userSearch.baseDn");
    expect(key({ ...LDAP, userSearch: { baseDn: "ou=p,dc=x", scope: "tree" } }).key).toBe(
      "pulp:ldap.userSearch.scope",
    );
  });

  test("with pulp:ldap, extraSettings may not set AUTH_LDAP_* or AUTHENTICATION_BACKENDS (without it they may)", () => {
    const extraSettings = { AUTH_LDAP_SERVER_URI: "ldap://other", AUTHENTICATION_BACKENDS: [] };
    expect(problemsOf({ ldap: LDAP, extraSettings }, PASSWORD).map((p) => [p.key, p.fix])).toEqual([
      [
        "pulp:extraSettings.AUTH_LDAP_SERVER_URI",
        "pulumi config rm --path 'pulp:extraSettings.AUTH_LDAP_SERVER_URI'",
      ],
      [
        "pulp:extraSettings.AUTHENTICATION_BACKENDS",
        "pulumi config rm --path 'pulp:extraSettings.AUTHENTICATION_BACKENDS'",
      ],
    ]);
    expect(problemsOf({ extraSettings })).toEqual([]);
  });

  test("ldap:// without StartTLS is warned about (passwords in the clear); ldaps:// or StartTLS is not", () => {
    const parsed = (ldap: Record<string, unknown>) => parseConfig({ ...MINIMAL, ldap }).ldap!;
    const anonymous = { ...LDAP, bindDn: undefined };
    expect(plaintextLdapWarning(parsed({ ...anonymous, serverUri: "ldap://ldap.example.com" }))).toMatch(
      /sends every user's password, and the bind password, unencrypted: use ldaps:\/\/, or `pulumi config set --path 'pulp:ldap.startTls' true`/,
    );
    expect(
      plaintextLdapWarning(parsed({ ...anonymous, serverUri: "ldap://ldap.example.com", startTls: true })),
    ).toBeUndefined();
    expect(plaintextLdapWarning(parsed(anonymous))).toBeUndefined();
  });

  test("the production example's commented pulp:ldap block is valid config when uncommented", () => {
    const text = fs.readFileSync(path.join(REPO, "examples/production/Pulumi.production.yaml"), "utf8");
    const block = text
      .split("\n")
      .filter((line, i, lines) => {
        const start = lines.findIndex((l) => l === "  # pulp:ldap:");
        return i >= start && /^ {2}#( {2,}|\s*pulp:ldap:)/.test(line);
      })
      .map((line) => line.replace(/^ {2}# ?/, ""))
      .join("\n");
    const ldap = (yaml.load(block) as { "pulp:ldap": Record<string, unknown> })["pulp:ldap"];
    expect(ldap.serverUri).toBe("ldaps://ldap.example.com");
    expect(problemsOf({ ldap }, { ldapBindPassword: "example" })).toEqual([]);
  });
});

describe("settings.py", () => {
  const text = (ldap: Record<string, unknown>) =>
    renderSettings({
      ...SETTINGS_INPUT,
      components: ldapSettings(
        parseConfig({ ...MINIMAL, ldap }, new Set(["ldapBindPassword"]), PASSWORD).ldap!,
      ),
    });

  test("LDAPSearch and the group type are composed from the values, each string a Python literal", () => {
    const lines = text(LDAP).split("\n");
    expect(lines).toEqual(
      expect.arrayContaining([
        'AUTH_LDAP_USER_SEARCH = django_auth_ldap.config.LDAPSearch("ou=people,dc=example,dc=com", ldap.SCOPE_SUBTREE, "(uid=%(user)s)")',
        'AUTH_LDAP_GROUP_SEARCH = django_auth_ldap.config.LDAPSearch("ou=groups,dc=example,dc=com", ldap.SCOPE_SUBTREE, "(objectClass=groupOfNames)")',
        'AUTH_LDAP_GROUP_TYPE = django_auth_ldap.config.GroupOfNamesType(name_attr="cn")',
        'AUTH_LDAP_USER_FLAGS_BY_GROUP = {"is_superuser": "cn=pulp-admins,ou=groups,dc=example,dc=com"}',
        "AUTH_LDAP_MIRROR_GROUPS = True",
        'AUTHENTICATION_BACKENDS = ["django_auth_ldap.backend.LDAPBackend", "django.contrib.auth.backends.ModelBackend", "pulpcore.backends.ObjectRolePermissionBackend"]',
      ]),
    );
    expect(lines.slice(1, 6)).toEqual([
      "try:",
      "    import django_auth_ldap.config",
      "    import ldap",
      "except ImportError as error:",
      '    raise ImportError(f"this image lacks the Python module {error.name}: pulp:ldap needs python-ldap and django-auth-ldap (the quay.io/pulp images carry both)") from error',
    ]);
    expect(text(LDAP)).not.toMatch(/PASSWORD/);
  });

  test("without pulp:ldap nothing is imported: an install's settings.py is the same as before", () => {
    expect(renderSettings(SETTINGS_INPUT)).not.toMatch(/import|LDAP/);
  });

  describe("run by Python", () => {
    let dir: string;
    beforeAll(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), "ldap-settings-"));
      // Stand-ins that record their arguments: python-ldap and django-auth-ldap are not on the host.
      fs.mkdirSync(path.join(dir, "stubs/django_auth_ldap"), { recursive: true });
      fs.writeFileSync(
        path.join(dir, "stubs/ldap.py"),
        "SCOPE_BASE, SCOPE_ONELEVEL, SCOPE_SUBTREE = 0, 1, 2\n",
      );
      fs.writeFileSync(path.join(dir, "stubs/django_auth_ldap/__init__.py"), "");
      fs.writeFileSync(
        path.join(dir, "stubs/django_auth_ldap/config.py"),
        [
          "class _Recorded:",
          "    def __init__(self, *args, **kwargs):",
          "        self.args, self.kwargs = list(args), kwargs",
          "    def json(self):",
          "        return {type(self).__name__: [self.args, self.kwargs]}",
          ...["LDAPSearch", "GroupOfNamesType", "PosixGroupType", "NestedActiveDirectoryGroupType"].map(
            (c) => `class ${c}(_Recorded): pass`,
          ),
          "",
        ].join("\n"),
      );
    });
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

    /** Executes settings.py as dynaconf does (a module), and prints its LDAP settings as JSON. */
    function run(settings: string, withStubs = true) {
      fs.writeFileSync(path.join(dir, "settings.py"), settings);
      const script = [
        "import json, runpy, sys",
        "s = runpy.run_path(sys.argv[1])",
        "out = {k: (v.json() if hasattr(v, 'json') else v) for k, v in s.items() if k.startswith('AUTH')}",
        "print(json.dumps(out))",
      ].join("\n");
      return spawnSync("python3", ["-c", script, path.join(dir, "settings.py")], {
        encoding: "utf8",
        env: { ...process.env, PYTHONPATH: withStubs ? path.join(dir, "stubs") : "" },
      });
    }

    test("the objects get the DNs, scope and filters the config names; a tricky DN stays one string", () => {
      const tricky = 'ou=R&D \\"x\\",dc=example,dc=com';
      const r = run(
        text({
          ...LDAP,
          userSearch: { baseDn: tricky, filter: "(&(objectClass=person)(mail=%(user)s))", scope: "onelevel" },
          groups: { baseDn: "ou=groups,dc=example,dc=com", type: "posixGroup", mirror: false },
        }),
      );
      expect(r.stderr).toBe("");
      const s = JSON.parse(r.stdout);
      expect(s.AUTH_LDAP_USER_SEARCH).toEqual({
        LDAPSearch: [[tricky, 1, "(&(objectClass=person)(mail=%(user)s))"], {}],
      });
      expect(s.AUTH_LDAP_GROUP_SEARCH).toEqual({
        LDAPSearch: [["ou=groups,dc=example,dc=com", 2, "(objectClass=posixGroup)"], {}],
      });
      expect(s.AUTH_LDAP_GROUP_TYPE).toEqual({ PosixGroupType: [[], { name_attr: "cn" }] });
      expect(s.AUTH_LDAP_MIRROR_GROUPS).toBe(false);
      expect(s.AUTH_LDAP_BIND_DN).toBe(LDAP.bindDn);
      expect(s.AUTH_LDAP_USER_ATTR_MAP).toEqual({ email: "mail", first_name: "givenName", last_name: "sn" });
      expect(s.AUTHENTICATION_BACKENDS[0]).toBe("django_auth_ldap.backend.LDAPBackend");
    });

    test("an image without the modules fails with what is missing and which key needs it", () => {
      const r = run(text(LDAP), false);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toMatch(
        /ImportError: this image lacks the Python module (ldap|django_auth_ldap): pulp:ldap needs python-ldap and django-auth-ldap/,
      );
    });
  });
});

describe("rendered", () => {
  const config = {
    ...MINIMAL,
    ldap: LDAP,
    trustedCa: { certificates: CA },
  };
  const env = (run: Awaited<ReturnType<typeof render>>, name: string) =>
    run.k8s("Deployment", name).inputs.spec.template.spec.containers[0].env as {
      name: string;
      value?: string;
    }[];

  test("only the api gets the bind password (from the Secret) and libldap's CA file", async () => {
    const run = await render(config, PASSWORD);
    expect(run.k8s("Secret", "pulp-ldap").inputs.stringData).toEqual({ bind_password: "bind-password-1" });
    const api = env(run, "pulp-api");
    expect(api).toContainEqual({
      name: "SECRET_AUTH_LDAP_BIND_PASSWORD",
      valueFrom: { secretKeyRef: { name: "pulp-ldap", key: "bind_password" } },
    });
    expect(api).toContainEqual({
      name: "PULP_AUTH_LDAP_BIND_PASSWORD",
      value: "@str $(SECRET_AUTH_LDAP_BIND_PASSWORD)",
    });
    expect(api).toContainEqual({ name: "LDAPTLS_CACERT", value: "/etc/pulp/ca-bundle/ca-bundle.crt" });
    for (const name of ["pulp-content", "pulp-worker"]) {
      expect({ name, ldap: env(run, name).filter((e) => /LDAP/.test(e.name)) }).toEqual({ name, ldap: [] });
    }
    expect(JSON.stringify(run.ofType(DEPLOYMENT).map((d) => d.inputs))).not.toContain("bind-password-1");
  });

  test("a new bind password rolls the api only; the settings stay the same", async () => {
    const first = await render(config, PASSWORD);
    const second = await render(config, { ldapBindPassword: "bind-password-2" });
    const annotation = (run: typeof first, name: string) =>
      run.k8s("Deployment", name).inputs.spec.template.metadata.annotations[
        "pulp.pulpproject.org/config-hash"
      ];
    expect(annotation(second, "pulp-api")).not.toBe(annotation(first, "pulp-api"));
    for (const name of ["pulp-content", "pulp-worker"]) {
      expect(annotation(second, name)).toBe(annotation(first, name));
    }
  });

  test("a program that sets config.ldap.bindDn without secrets.ldapBindPassword is refused", async () => {
    const parsed = parseArgs({ ...MINIMAL, ldap: LDAP }, ["ldapBindPassword"]);
    let thrown: unknown;
    const warn = jest.spyOn(pulumi.log, "warn").mockImplementation(async () => {});
    try {
      await runWithMocks({ config: {} }, () => {
        try {
          new Pulp("pulp", { config: parsed, secrets: {}, deployed: FIRST_INSTALL, cluster: {} });
        } catch (e) {
          thrown = e;
        }
      });
    } finally {
      warn.mockRestore();
    }
    expect(String(thrown)).toMatch(
      /config\.ldap\.bindDn names the account .* secrets\.ldapBindPassword was not passed/,
    );
  });
});
