// Unit (no slapd): testbed/real/ldap.ts reads slapd's `-d stats` log, as slapd 2.5.13 (Debian bookworm)
// printed it on the test bed, to tell which binds came over StartTLS.
import { bindsIn } from "../../../../testbed/real/ldap";

const LOG = `6b089501.05120273 0x7fdd1f7fe6c0 conn=1001 fd=11 ACCEPT from IP=10.77.0.1:37320 (IP=10.77.0.1:44421)
6b089501.0514ebf4 0x7fdd1f7fe6c0 conn=1001 op=0 EXT oid=1.3.6.1.4.1.1466.20037
6b089501.05164578 0x7fdd1f7fe6c0 conn=1001 op=0 STARTTLS
6b089501.0584aa17 0x7fdd1effd6c0 conn=1001 fd=11 TLS established tls_ssf=256 ssf=256 tls_proto=TLS1.3 tls_cipher=AES-256-GCM
6b089501.0588ea50 0x7fdd1f7fe6c0 conn=1001 op=1 BIND dn="uid=alice,ou=people,dc=pulp,dc=test" method=128
6b089501.058b2584 0x7fdd1f7fe6c0 conn=1001 op=1 BIND dn="uid=alice,ou=people,dc=pulp,dc=test" mech=SIMPLE bind_ssf=0 ssf=256
6b089502.01000000 0x7fdd1f7fe6c0 conn=1002 fd=12 ACCEPT from IP=10.77.0.1:37330 (IP=10.77.0.1:44421)
6b089502.01000001 0x7fdd1f7fe6c0 conn=1002 op=0 BIND dn="cn=admin,dc=pulp,dc=test" method=128
6b089502.01000002 0x7fdd1f7fe6c0 conn=1002 op=0 BIND dn="cn=admin,dc=pulp,dc=test" mech=SIMPLE bind_ssf=0 ssf=0`;

test("a bind counts as over TLS only on a connection that completed StartTLS before it", () => {
  expect(bindsIn(LOG)).toEqual([
    { dn: "uid=alice,ou=people,dc=pulp,dc=test", tls: true },
    { dn: "cn=admin,dc=pulp,dc=test", tls: false },
  ]);
  expect(bindsIn("")).toEqual([]);
});
