// pulp:ldap: login against an LDAP directory with django-auth-ldap, beside Pulp's own users. The settings
// whose values are Python objects (LDAPSearch, the group types) are composed by the program from validated
// values, never taken as code from the config (pulp-operator pastes its Secret's text into settings.py).
// The bind password reaches only the api, the one process that logs users in, from a Secret.
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { contentHash } from "../common/hash";
import { fixedName, Identity, labels } from "../common/labels";
import { LDAP_GROUP_TYPES, LdapConfig } from "../config/schema";
import { SecretKeyRef } from "../secrets/pulpSecrets";
import { pythonCall, pythonName } from "../settings/render";
import { CA_BUNDLE_FILE } from "../trust/trustedCa";
import { secretSetting } from "../workload/pulpProcess";

const NEED = "pulp:ldap needs python-ldap and django-auth-ldap (the quay.io/pulp images carry both)";
const SCOPES = { subtree: "SCOPE_SUBTREE", onelevel: "SCOPE_ONELEVEL", base: "SCOPE_BASE" } as const;

const search = (baseDn: string, scope: keyof typeof SCOPES, filter: string) =>
  pythonCall("django_auth_ldap.config", "LDAPSearch", NEED, [
    baseDn,
    pythonName("ldap", SCOPES[scope], NEED),
    filter,
  ]);

/**
 * The settings django-auth-ldap reads. The LDAP backend comes first and Pulp's own two stay: local users
 * (admin) still log in, and permissions still come from Pulp's roles, which a mirrored group's members get.
 */
export function ldapSettings(ldap: LdapConfig): Record<string, unknown> {
  const groups = ldap.groups;
  const flags = groups?.superuser ? { is_superuser: groups.superuser } : undefined;
  return {
    AUTHENTICATION_BACKENDS: [
      "django_auth_ldap.backend.LDAPBackend",
      "django.contrib.auth.backends.ModelBackend",
      "pulpcore.backends.ObjectRolePermissionBackend",
    ],
    AUTH_LDAP_SERVER_URI: ldap.serverUri,
    AUTH_LDAP_START_TLS: ldap.startTls,
    // Anonymous bind without one; the password is the env PULP_AUTH_LDAP_BIND_PASSWORD.
    AUTH_LDAP_BIND_DN: ldap.bindDn ?? "",
    AUTH_LDAP_USER_SEARCH: search(ldap.userSearch.baseDn, ldap.userSearch.scope, ldap.userSearch.filter),
    AUTH_LDAP_USER_ATTR_MAP: ldap.userAttributes,
    ...(groups
      ? {
          AUTH_LDAP_GROUP_SEARCH: search(
            groups.baseDn,
            groups.scope,
            groups.filter ?? LDAP_GROUP_TYPES[groups.type].filter,
          ),
          AUTH_LDAP_GROUP_TYPE: pythonCall(
            "django_auth_ldap.config",
            LDAP_GROUP_TYPES[groups.type].type,
            NEED,
            [],
            {
              name_attr: "cn",
            },
          ),
          AUTH_LDAP_MIRROR_GROUPS: groups.mirror,
          ...(groups.require ? { AUTH_LDAP_REQUIRE_GROUP: groups.require } : {}),
          ...(groups.deny ? { AUTH_LDAP_DENY_GROUP: groups.deny } : {}),
          ...(flags ? { AUTH_LDAP_USER_FLAGS_BY_GROUP: flags } : {}),
        }
      : {}),
  };
}

/** What the api container needs for LDAP beyond settings.py. */
export interface LdapRuntime {
  bindPassword?: SecretKeyRef;
  /** Changes with the bind password (one-way), so a new password rolls the api and nothing else. */
  hash: pulumi.Output<string>;
}

/**
 * The bind password as a setting (as pulpProcess.ts passes every secret), and libldap's CA file: with
 * pulp:trustedCa the bundle the pods build, so an ldaps:// or StartTLS server behind a private CA is
 * verified (libldap reads LDAPTLS_CACERT, not SSL_CERT_FILE).
 */
export function ldapEnv(rt: LdapRuntime | undefined, trusted: boolean): k8s.types.input.core.v1.EnvVar[] {
  if (!rt) return [];
  return [
    ...(rt.bindPassword ? secretSetting("AUTH_LDAP_BIND_PASSWORD", rt.bindPassword) : []),
    ...(trusted ? [{ name: "LDAPTLS_CACERT", value: CA_BUNDLE_FILE }] : []),
  ];
}

/** Passwords in the clear: ldap:// without StartTLS carries every login's password unencrypted. */
export function plaintextLdapWarning(ldap: LdapConfig): string | undefined {
  if (ldap.startTls || !/(^| )ldap:\/\//.test(ldap.serverUri)) return undefined;
  return (
    `pulp:ldap.serverUri ${ldap.serverUri} without StartTLS sends every user's password, and the bind ` +
    "password, unencrypted: use ldaps://, or `pulumi config set --path 'pulp:ldap.startTls' true` (a server " +
    "behind a private CA: add the CA to pulp:trustedCa)"
  );
}

export interface LdapArgs {
  namespace: pulumi.Input<string>;
  identity: Identity;
  ldap: LdapConfig;
  /** pulp:ldapBindPassword, with ldap.bindDn. */
  bindPassword?: pulumi.Input<string>;
}

/** The Secret with the bind password (none for an anonymous bind). */
export class Ldap extends pulumi.ComponentResource {
  readonly runtime: LdapRuntime;

  constructor(name: string, args: LdapArgs, opts?: pulumi.ComponentResourceOptions) {
    super("pulp:ldap:Ldap", name, {}, opts);
    const plaintext = plaintextLdapWarning(args.ldap);
    if (plaintext) pulumi.log.warn(plaintext, this);
    const password = args.bindPassword;
    if (password !== undefined) {
      const secretName = fixedName(args.identity, "ldap");
      new k8s.core.v1.Secret(
        name,
        {
          metadata: { name: secretName, namespace: args.namespace, labels: labels(args.identity, "config") },
          type: "Opaque",
          stringData: { bind_password: pulumi.secret(password) },
        },
        { parent: this },
      );
      this.runtime = {
        bindPassword: { name: secretName, key: "bind_password" },
        hash: pulumi.unsecret(pulumi.output(password).apply((p) => contentHash(p))),
      };
    } else {
      this.runtime = { hash: pulumi.output("") };
    }
    this.registerOutputs({});
  }
}
