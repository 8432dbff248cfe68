// The install operatorTakeover.test.ts takes over: laid out as pulp-operator lays one out (operatorLayout.ts).
// Laying it out is most of that suite's time and none of its measurement, so it can be laid out ahead (by
// hand, when the node is free: beside CI's two lanes its migration Job timed out), and the suite takes that
// one over. Without one, the suite lays it out itself. A laid-out install is used once: the takeover
// changes it.
//
//   ts-node -T testbed/real/takeoverFixture.ts     lays it out and records it for the suite's next run
import * as fs from "fs";
import * as path from "path";
import { deleteNamespace, kubectlTry } from "../harness";
import { STATE } from "../local/environment";
import { layOutOperatorInstall, OperatorInstall } from "./operatorLayout";
import { importImages, localImages, requireLocalImage } from "./stack";

export const TAKEOVER_FIXTURE = { namespace: "pulp-operator-layout", name: "example", release: "3.121.3" };

const RECORD = path.join(STATE, "takeover", "laid-out.json");

function layOut(): OperatorInstall {
  const { namespace, name, release } = TAKEOVER_FIXTURE;
  importImages();
  deleteNamespace(namespace, 300);
  return layOutOperatorInstall(
    namespace,
    name,
    {
      pulp: requireLocalImage(`localhost/pulp-minimal:${release}`),
      web: requireLocalImage(`localhost/pulp-web:${release}`),
      postgresql: localImages().postgresql,
    },
    release,
  );
}

/** The install laid out ahead, if it is still the one recorded (the same Pulp resource), else undefined. */
function laidOutAhead(): OperatorInstall | undefined {
  if (!fs.existsSync(RECORD)) return undefined;
  const install = JSON.parse(fs.readFileSync(RECORD, "utf8")) as OperatorInstall;
  fs.rmSync(RECORD); // used once, whatever follows
  const { namespace, name, release } = TAKEOVER_FIXTURE;
  const now = kubectlTry(["get", "pulp", name, "-n", namespace, "-o", "jsonpath={.metadata.uid}"]);
  const same = install.namespace === namespace && install.name === name && install.release === release;
  return same && now.ok && now.output.trim() === install.uid ? install : undefined;
}

/** The install to take over: the one laid out ahead when there is one, else a new one. */
export function takeoverFixture(): OperatorInstall {
  const ahead = laidOutAhead();
  if (ahead) process.stdout.write(`takeover: the install laid out ahead in ${ahead.namespace}\n`);
  return ahead ?? layOut();
}

function main(): void {
  const started = Date.now();
  const { namespace } = TAKEOVER_FIXTURE;
  let install: OperatorInstall;
  try {
    install = layOut();
  } catch (e) {
    // What came up stays idle no longer than this: the suite lays out its own in a new namespace.
    kubectlTry(["delete", "namespace", namespace, "--wait=false"]);
    throw e;
  }
  fs.mkdirSync(path.dirname(RECORD), { recursive: true });
  fs.writeFileSync(RECORD, JSON.stringify(install));
  process.stdout.write(
    `takeover fixture laid out in ${namespace} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
}

if (require.main === module) main();
