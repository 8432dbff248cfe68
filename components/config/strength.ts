// Whether a supplied secret is strong enough for Pulp, by the rules Pulp's own Django applies. Pure
// functions returning a reason (or undefined); like validators.ts, none puts the value into its reason.
import { ConfigProblem, SECRET_GIVEN, secretSetCommand } from "./problems";
import { nonEmptySecretProblem } from "./validators";

/**
 * SECRET_KEY as Django's deploy check judges it (security.W009, `_check_secret_key` in
 * django/core/checks/security/base.py@5.2.19, the Django of pulp-minimal:3.123.1): at least 50 characters,
 * at least 5 different ones, and not Django's own "django-insecure-" placeholder. A weaker key lets
 * sessions and signed values be forged; Django only warns, so the install would start with it.
 */
export function djangoSecretKeyProblem(value: string): string | undefined {
  const basic = nonEmptySecretProblem(value);
  if (basic) return basic;
  if (value.length < 50 || new Set(value).size < 5 || value.startsWith("django-insecure-")) {
    return (
      "a Django SECRET_KEY of at least 50 characters with at least 5 different ones, not starting with " +
      '"django-insecure-" (Django\'s check_secret_key, security.W009)'
    );
  }
  return undefined;
}

/**
 * The warning for a supplied SECRET_KEY Django's deploy check calls weak, or undefined. A warning, not a
 * refusal: Django itself only warns, and a live install cannot take the fix a refusal would print (a new
 * key replaces the protected key Secret, which the program refuses), so refusing would leave it stuck.
 * The value never appears in it.
 */
export function weakSecretKeyWarning(value: string): string | undefined {
  const reason = djangoSecretKeyProblem(value);
  return (
    reason &&
    `pulp:secretKey should be ${reason}: a weaker key lets sessions and signed values be forged. On a new ` +
      "install remove it and the program generates one: pulumi config rm pulp:secretKey. A live install " +
      "keeps the key it runs with (its Secret is protected): rotate it deliberately, signing everyone out."
  );
}

/**
 * A supplied SECRET_KEY Django calls weak: refused on a new install (nothing runs with it yet, and the fix,
 * removing it so the program generates one, costs nothing), warned about where a refusal would leave the
 * stack stuck: a live install (its key Secret is protected) and a restore (the key must be the backup's).
 */
export function weakSecretKeyVerdict(
  value: string | undefined,
  install: { firstInstall: boolean; restoring: boolean },
): { refuse: ConfigProblem } | { warn: string } | undefined {
  const warning = value === undefined ? undefined : weakSecretKeyWarning(value);
  if (!warning) return undefined;
  if (!install.firstInstall || install.restoring) return { warn: warning };
  return {
    refuse: {
      key: "pulp:secretKey",
      given: SECRET_GIVEN,
      message: `must be ${djangoSecretKeyProblem(value!)}: a weaker key lets sessions and signed values be forged. Nothing runs with it yet`,
      fix: "pulumi config rm pulp:secretKey",
      alternatives: [`${secretSetCommand("pulp:secretKey")}  (at the prompt: 50 or more random characters)`],
    },
  };
}

/**
 * The admin password, by the validators pulpcore runs on every password its API sets
 * (AUTH_PASSWORD_VALIDATORS in pulpcore/app/settings.py, `validate_password` in
 * pulpcore/app/serializers/user.py@3.123.1): Django's MinimumLengthValidator (8 characters) and
 * NumericPasswordValidator. `reset-admin-password --password`, which the migration Job runs, checks none of
 * them, so without this rule a password Pulp itself would refuse is set. (CommonPasswordValidator's list of
 * 20,000 passwords is not repeated here; UserAttributeSimilarityValidator needs a user, which that call
 * does not pass.)
 */
export function adminPasswordProblem(value: string): string | undefined {
  const basic = nonEmptySecretProblem(value);
  if (basic) return basic;
  if (value.length < 8 || /^\d+$/.test(value)) {
    return "a password Pulp's own validators accept: at least 8 characters, not only digits";
  }
  return undefined;
}
