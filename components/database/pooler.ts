// CloudNativePG's Pooler (PgBouncer) in front of the Cluster's primary: database.cloudnativepg.pooler.

/**
 * The PgBouncer settings CloudNativePG's admission webhook accepts in a Pooler's `spec.pgbouncer.parameters`
 * (AllowedPgbouncerGenericConfigurationParameters in internal/webhook/v1/pooler_webhook.go, v1.29.1). Any
 * other name is refused by the webhook, after Pulp's pods may have rolled: checked before anything changes.
 */
export const POOLER_PARAMETERS: ReadonlySet<string> = new Set([
  "application_name_add_host",
  "auth_type",
  "autodb_idle_timeout",
  "cancel_wait_timeout",
  "client_idle_timeout",
  "client_login_timeout",
  "client_tls_ciphers",
  "client_tls_sslmode",
  "client_tls13_ciphers",
  "default_pool_size",
  "disable_pqexec",
  "dns_max_ttl",
  "dns_nxdomain_ttl",
  "idle_transaction_timeout",
  "ignore_startup_parameters",
  "listen_backlog",
  "log_connections",
  "log_disconnections",
  "log_pooler_errors",
  "log_stats",
  "max_client_conn",
  "max_db_connections",
  "max_packet_size",
  "max_prepared_statements",
  "max_user_connections",
  "min_pool_size",
  "pkt_buf",
  "query_timeout",
  "query_wait_timeout",
  "reserve_pool_size",
  "reserve_pool_timeout",
  "sbuf_loopcnt",
  "server_check_delay",
  "server_check_query",
  "server_connect_timeout",
  "server_fast_close",
  "server_idle_timeout",
  "server_lifetime",
  "server_login_retry",
  "server_reset_query",
  "server_reset_query_always",
  "server_round_robin",
  "server_tls_ciphers",
  "server_tls13_ciphers",
  "server_tls_protocols",
  "server_tls_sslmode",
  "stats_period",
  "suspend_timeout",
  "tcp_defer_accept",
  "tcp_socket_buffer",
  "tcp_keepalive",
  "tcp_keepcnt",
  "tcp_keepidle",
  "tcp_keepintvl",
  "tcp_user_timeout",
  "track_extra_parameters",
  "verbose",
]);

/** Timeouts that end one of Pulp's sessions or statements: a task, a migration, a worker waiting for work. */
const SESSION_TIMEOUTS = ["query_timeout", "idle_transaction_timeout", "client_idle_timeout"];

/** The warning for PgBouncer settings that can cut Pulp's own work, or undefined. */
export function poolerWarning(parameters: Record<string, string>): string | undefined {
  const key = (name: string) => `pulp:database.cloudnativepg.pooler.parameters.${name}`;
  const notes: string[] = [];
  const timeouts = SESSION_TIMEOUTS.filter((name) => !/^0+(\.0+)?$/.test(parameters[name] ?? "0"));
  if (timeouts.length > 0) {
    notes.push(
      `${timeouts.map(key).join(" and ")} can end a session of Pulp's: a long task (its lock and its wake-ups ` +
        "live on the worker's session), a migration's statement, or a worker waiting for work. Pulp needs none; " +
        `remove ${timeouts.length === 1 ? "it" : "them"} unless you have measured that Pulp never reaches ` +
        (timeouts.length === 1 ? "it." : "them."),
    );
  }
  const reset = parameters.server_reset_query;
  if (reset !== undefined && reset.trim().replace(/;$/, "").toUpperCase() !== "DISCARD ALL") {
    notes.push(
      `${key("server_reset_query")} is not DISCARD ALL: a server connection then keeps a gone worker's ` +
        "advisory locks and LISTEN for the next client, and its task's repository stays locked.",
    );
  }
  return notes.length > 0 ? notes.join(" ") : undefined;
}

/**
 * What the program sets unless the user does. In session mode each of Pulp's connections holds a server
 * connection for its life, so a pool smaller than Pulp's connections makes the extra ones wait (up to
 * query_wait_timeout, then fail) with no error at PostgreSQL: the pool is sized so that PostgreSQL's own
 * max_connections stays the one limit, as without a pooler. PgBouncer refuses new clients at once while its
 * last login to the server failed, until one succeeds (check_fast_fail, src/objects.c, 1.24), and tries again
 * only every server_login_retry (15 s by default): 1 s puts Pulp back on the new primary within a second of
 * it answering.
 */
export const POOLER_DEFAULTS: Readonly<Record<string, string>> = {
  max_client_conn: "1000",
  default_pool_size: "1000",
  server_login_retry: "1",
};

/** The Pooler's name, which is also its Service's: `<cluster>-pooler`. */
export function poolerName(clusterName: string): string {
  return `${clusterName}-pooler`;
}

/** The names a client may reach the Pooler's Service by: the server certificate must carry each. */
export function poolerDnsNames(pooler: string, namespace: string): string[] {
  return [
    pooler,
    `${pooler}.${namespace}`,
    `${pooler}.${namespace}.svc`,
    `${pooler}.${namespace}.svc.cluster.local`,
  ];
}

/** What is wrong with a PgBouncer setting's name, or undefined. */
export function poolerParameterNameProblem(name: string): string | undefined {
  if (name === "pool_mode") {
    return "left out: the program keeps the pool mode at session, because Pulp's workers hold advisory locks and LISTEN on their session";
  }
  return POOLER_PARAMETERS.has(name)
    ? undefined
    : "a PgBouncer setting that CloudNativePG's Pooler accepts, such as max_client_conn or default_pool_size";
}
