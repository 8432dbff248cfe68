// PostgreSQL settings for the CloudNativePG cluster's instances (database.cloudnativepg.parameters), which
// become the Cluster's spec.postgresql.parameters.

/**
 * The settings CloudNativePG sets itself and whose value its admission webhook refuses
 * (FixedConfigurationParameters in pkg/postgres/configuration.go, v1.29.1; validateConfiguration in
 * internal/webhook/v1/cluster_webhook.go): ports, sockets and files, TLS, replication, recovery, archiving
 * and logging.
 */
export const OPERATOR_PARAMETERS: ReadonlySet<string> = new Set([
  "allow_system_table_mods",
  "archive_cleanup_command",
  "archive_command",
  "archive_mode",
  "bonjour",
  "bonjour_name",
  "cluster_name",
  "config_file",
  "data_directory",
  "data_sync_retry",
  "event_source",
  "external_pid_file",
  "hba_file",
  "hot_standby",
  "ident_file",
  "jit_provider",
  "listen_addresses",
  "log_destination",
  "log_directory",
  "log_file_mode",
  "log_filename",
  "log_rotation_age",
  "log_rotation_size",
  "log_truncate_on_rotation",
  "logging_collector",
  "pg_failover_slots.primary_dsn",
  "pg_failover_slots.standby_slot_names",
  "port",
  "primary_conninfo",
  "primary_slot_name",
  "promote_trigger_file",
  "recovery_end_command",
  "recovery_min_apply_delay",
  "recovery_target",
  "recovery_target_action",
  "recovery_target_inclusive",
  "recovery_target_lsn",
  "recovery_target_name",
  "recovery_target_time",
  "recovery_target_timeline",
  "recovery_target_xid",
  "restart_after_crash",
  "restore_command",
  "shared_preload_libraries",
  "ssl",
  "ssl_ca_file",
  "ssl_cert_file",
  "ssl_crl_file",
  "ssl_dh_params_file",
  "ssl_ecdh_curve",
  "ssl_key_file",
  "ssl_passphrase_command",
  "ssl_passphrase_command_supports_reload",
  "ssl_prefer_server_ciphers",
  "stats_temp_directory",
  "synchronized_standby_slots",
  "synchronous_standby_names",
  "syslog_facility",
  "syslog_ident",
  "syslog_sequence_numbers",
  "syslog_split_messages",
  "temp_tablespaces",
  "unix_socket_directories",
  "unix_socket_group",
  "unix_socket_permissions",
]);

/**
 * What is wrong with a setting's name, or undefined. postgresql.conf takes names in any case, but the
 * operator compares them as written: lower case keeps `SSL` from passing its check.
 */
export function parameterNameProblem(name: string): string | undefined {
  return /^[a-z_][a-z0-9_$]*(\.[a-z_][a-z0-9_$]*)?$/.test(name)
    ? undefined
    : "a PostgreSQL setting's name in lower case, such as max_connections or pg_stat_statements.max";
}

/**
 * Timeouts that, set for the whole server, cancel Pulp's own long statements: a migration that rewrites a
 * big table, a task's query (orphan cleanup, a large sync) or the backup's pg_dump.
 */
const SERVER_WIDE_TIMEOUTS = ["statement_timeout", "lock_timeout", "transaction_timeout"];

/** The warning for settings that would cancel Pulp's long statements, or undefined. */
export function parameterWarning(parameters: Record<string, string>): string | undefined {
  const set = SERVER_WIDE_TIMEOUTS.filter((name) => !/^0+(ms|s|min)?$/.test(parameters[name] ?? "0"));
  if (set.length === 0) return undefined;
  const keys = set.map((name) => `pulp:database.cloudnativepg.parameters.${name}`).join(" and ");
  return (
    `${keys} ${set.length === 1 ? "applies" : "apply"} to every session, Pulp's own included: a migration that ` +
    "rewrites a big table, a long task (orphan cleanup, a large sync) or the backup's pg_dump is cancelled " +
    "midway. Pulp's sessions do not need a limit; to bound other clients, set it on their role instead " +
    "(ALTER ROLE <role> SET statement_timeout = '5min')."
  );
}
