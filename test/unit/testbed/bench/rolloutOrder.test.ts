// The pod-watch check behind "old pods were removed only after new pods were ready".
import { rolloutOrder } from "../../../../testbed/bench/sampler";

const pod = (name: string, hash: string, ready: boolean, terminating = false) => ({
  name,
  component: "api",
  hash,
  ready,
  terminating,
});
const lines = (...samples: { t: number; pods: ReturnType<typeof pod>[] }[]) =>
  samples.map((s) => JSON.stringify({ ...s, ready: {} })).join("\n");

test("surge one, ready, then remove one: in order", () => {
  const text = lines(
    { t: 0, pods: [pod("a1", "A", true), pod("a2", "A", true)] },
    { t: 1, pods: [pod("a1", "A", true), pod("a2", "A", true), pod("b1", "B", false)] },
    { t: 2, pods: [pod("a1", "A", true), pod("a2", "A", true), pod("b1", "B", true)] },
    {
      t: 3,
      pods: [pod("a1", "A", true, true), pod("a2", "A", true), pod("b1", "B", true), pod("b2", "B", false)],
    },
    { t: 4, pods: [pod("a2", "A", true), pod("b1", "B", true), pod("b2", "B", true)] },
    { t: 5, pods: [pod("b1", "B", true), pod("b2", "B", true)] },
  );
  expect(rolloutOrder(text, "api")).toEqual({
    component: "api",
    oldRemoved: [3, 5],
    newReady: [2, 4],
    violations: [],
  });
});

test("an old pod removed before a new one is ready is a violation", () => {
  const text = lines(
    { t: 0, pods: [pod("a1", "A", true), pod("a2", "A", true)] },
    { t: 1, pods: [pod("a2", "A", true), pod("b1", "B", false)] },
    { t: 2, pods: [pod("a2", "A", true), pod("b1", "B", true)] },
  );
  expect(rolloutOrder(text, "api").violations).toEqual([
    "old pod #1 of api went at 1970-01-01T00:00:00.001Z with 0 new pods ready",
  ]);
});
