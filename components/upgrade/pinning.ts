// A version tag is not a build: pulp-oci-images rebuilds version tags when the plugins bundled with them
// change (pulp-oci-images #793, #797). Pods that start after such a re-push (a new node, a rescheduled
// pod) pull the new build and run its plugin code on a schema no migration Job has touched, because the
// Job is named by the image reference, which did not change. Only a digest names one build.
import { parseImage } from "../config/formats";

/**
 * The warning every preview and update prints for a Pulp image pinned by tag only, with the command that
 * pins it by digest (pasteable: skopeo reads the digest the tag points to now). Images under `localhost/`
 * are loaded into the nodes' image store and never pulled (the test bed's): no registry re-pushes them.
 *
 * A warning, not a refusal: most installs start from a tag, and a refusal would stop every stack that
 * works today at its next `up`; the risk arrives only with a re-push, and the warning names the fix.
 */
export function tagOnlyWarning(image: string): string | undefined {
  const ref = parseImage(image);
  if (!ref || ref.digest || !ref.tag || ref.repository.startsWith("localhost/")) return undefined;
  return (
    `pulp:image ${image} is pinned by tag only: a re-push of that tag (the Pulp images rebuild version tags ` +
    "when their plugins change) reaches pods as they restart, without a migration. Pin it by digest: " +
    `pulumi config set pulp:image "${image}@$(skopeo inspect --format '{{.Digest}}' docker://${image})"`
  );
}
